"""Targets: brokers under test, with declared capabilities and discovered profiles.

``base``       the :class:`Target` protocol, :class:`Capabilities`, capability names
``embedded``   :class:`EmbeddedTarget`: the reference broker in-process, virtual clock
``bootstrap``  :class:`BootstrapTarget`: any broker by ``host:port``, optional log dir,
               SASL (PLAIN, SCRAM), TLS and control hook
``profiles``   which profiles a target offers (ApiVersions, DescribeConfigs)

``EmbeddedTarget`` is imported from its module, not from here, so that using a
bootstrap target never imports the reference broker.
"""

from lethe_conformance.targets.base import (
    ALL_CAPABILITIES,
    CLOCK_CONTROL,
    EDIT_LOG_DIR,
    INJECT_FAILURE,
    LOG_DIR,
    OWN_LOG_DIR,
    PRINCIPALS,
    RESTART,
    ROLES,
    TRIGGER_CLEANING,
    Capabilities,
    CapabilityMissingError,
    ControlError,
    FailureTarget,
    LocalTarget,
    PrincipalTarget,
    Target,
)
from lethe_conformance.targets.bootstrap import BootstrapTarget, ControlHook, parse_bootstrap

__all__ = [
    "ALL_CAPABILITIES",
    "CLOCK_CONTROL",
    "EDIT_LOG_DIR",
    "INJECT_FAILURE",
    "LOG_DIR",
    "OWN_LOG_DIR",
    "PRINCIPALS",
    "RESTART",
    "ROLES",
    "TRIGGER_CLEANING",
    "BootstrapTarget",
    "Capabilities",
    "CapabilityMissingError",
    "ControlError",
    "ControlHook",
    "FailureTarget",
    "LocalTarget",
    "PrincipalTarget",
    "Target",
    "parse_bootstrap",
]
