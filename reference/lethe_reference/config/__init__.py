"""Topic and broker configuration of the reference broker, as Kafka 4.0.0 has it.

Modules, bottom up:

* :mod:`~lethe_reference.config.values` - Java-compatible parsing and printing;
* :mod:`~lethe_reference.config.validators`, :mod:`~lethe_reference.config.definition`
  - Kafka's ``ConfigDef`` validators and keys;
* :mod:`~lethe_reference.config.topic` / :mod:`~lethe_reference.config.broker_defs`
  - the topic and broker definitions, synonyms, DescribeConfigs order;
* :mod:`~lethe_reference.config.properties` - ``server.properties`` files;
* :mod:`~lethe_reference.config.broker` - :class:`BrokerConfig` (static and
  dynamic layers, topic defaults derived from broker synonyms);
* :mod:`~lethe_reference.config.log_config` - :class:`LogConfig`, the typed value
  the storage engine reads;
* :mod:`~lethe_reference.config.describe` / :mod:`~lethe_reference.config.alter`
  - DescribeConfigs, AlterConfigs and IncrementalAlterConfigs semantics.
"""

from lethe_reference.config.alter import (
    AlterOp,
    ConfigOp,
    alter_broker_configs,
    alter_topic_configs,
    incremental_alter_broker_configs,
    incremental_alter_topic_configs,
    validate_topic_configs,
)
from lethe_reference.config.broker import BrokerConfig
from lethe_reference.config.describe import (
    ConfigEntry,
    ConfigSource,
    ConfigSynonym,
    describe_broker_configs,
    describe_topic_configs,
)
from lethe_reference.config.errors import ConfigError, InvalidConfigError, InvalidRequestError
from lethe_reference.config.log_config import (
    LogConfig,
    effective_log_config,
    effective_topic_values,
)
from lethe_reference.config.properties import PropertiesError, load_properties, parse_properties
from lethe_reference.config.values import ConfigType

__all__ = [
    "AlterOp",
    "BrokerConfig",
    "ConfigEntry",
    "ConfigError",
    "ConfigOp",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "InvalidConfigError",
    "InvalidRequestError",
    "LogConfig",
    "PropertiesError",
    "alter_broker_configs",
    "alter_topic_configs",
    "describe_broker_configs",
    "describe_topic_configs",
    "effective_log_config",
    "effective_topic_values",
    "incremental_alter_broker_configs",
    "incremental_alter_topic_configs",
    "load_properties",
    "parse_properties",
    "validate_topic_configs",
]
