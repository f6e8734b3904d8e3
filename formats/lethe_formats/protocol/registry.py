"""(api_key, version) -> request/response classes and header versions.

Theory of operation
-------------------
Every module in :mod:`lethe_formats.protocol.messages` is imported once (found
with ``pkgutil``, so a new API is just a new module); each ``@message`` class
it defines is recorded in ``schema.MESSAGES``. :func:`apis` pairs the request
and response class of every API key into an :class:`ApiSpec` and checks the
pair agrees on versions. Lookups fail precisely, like etl-parser's keyed
registry: an API key with no definition is :class:`UnknownApiKeyError`, a known
API at a version outside its range is :class:`UnsupportedVersionError`, and the
error says which.

The version range of each definition is the range a Kafka 4.0 broker
advertises in ApiVersions, so :func:`supported_versions` is what the reference
broker advertises. (Produce: 4.0 advertises 0-12 although it rejects v0-2
requests, a workaround for librdkafka, KAFKA-18659; the definition covers v0-2
so the bytes can still be decoded.)

Extension APIs (keys from 10000, :func:`~lethe_formats.protocol.api_keys.is_extension_api`)
are defined here like any other, so clients can speak them, but
:func:`supported_versions` leaves them out unless asked: they are not what
Kafka 4.0 advertises, and a broker lists one only when it is enabled.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache

from lethe_formats.protocol import messages
from lethe_formats.protocol.api_keys import api_name, is_extension_api
from lethe_formats.protocol.exceptions import UnknownApiKeyError, UnsupportedVersionError
from lethe_formats.protocol.headers import request_header_version, response_header_version
from lethe_formats.protocol.schema import MESSAGES, Struct, Versions, message_info

__all__ = [
    "ApiSpec",
    "api",
    "apis",
    "header_versions",
    "lookup",
    "supported_versions",
]


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """One API: its classes and version ranges."""

    api_key: int
    name: str
    request: type[Struct]
    response: type[Struct]
    versions: Versions
    flexible: Versions

    @property
    def min_version(self) -> int:
        return self.versions.low

    @property
    def max_version(self) -> int:
        assert self.versions.high is not None, "message ranges are closed"
        return self.versions.high

    def is_flexible(self, version: int) -> bool:
        """Flexible ranges are open-ended, so this also answers for versions
        above the supported range (Kafka parses the header of a too-new
        ApiVersions request as v2 for the same reason)."""
        return version in self.flexible


def _load_messages() -> None:
    for module in pkgutil.iter_modules(messages.__path__):
        importlib.import_module(f"{messages.__name__}.{module.name}")


@cache
def apis() -> dict[int, ApiSpec]:
    """Every defined API, by key (imports the message modules on first use)."""
    _load_messages()
    halves: dict[tuple[int, str], type[Struct]] = {}
    for cls in MESSAGES:
        info = message_info(cls)
        if info.api_key is None:
            continue
        key = (info.api_key, info.kind)
        if key in halves and halves[key] is not cls:
            raise TypeError(f"two {info.kind} classes for API key {info.api_key}")
        halves[key] = cls
    out: dict[int, ApiSpec] = {}
    for (api_key, kind), cls in sorted(halves.items()):
        if kind != "request":
            continue
        out[api_key] = _pair(api_key, cls, halves.get((api_key, "response")))
    missing = {key for key, kind in halves if kind == "response"} - out.keys()
    if missing:
        raise TypeError(f"responses without requests for API keys {sorted(missing)}")
    return out


def _pair(api_key: int, request: type[Struct], response: type[Struct] | None) -> ApiSpec:
    if response is None:
        raise TypeError(f"API key {api_key} has a request but no response class")
    req, resp = message_info(request), message_info(response)
    if req.valid != resp.valid or req.flexible != resp.flexible:
        raise TypeError(f"API key {api_key}: request and response disagree on versions")
    return ApiSpec(api_key, api_name(api_key), request, response, req.valid, req.flexible)


def api(api_key: int) -> ApiSpec:
    """The :class:`ApiSpec` of ``api_key``; :class:`UnknownApiKeyError` if undefined."""
    spec = apis().get(api_key)
    if spec is None:
        raise UnknownApiKeyError(api_key)
    return spec


def lookup(api_key: int, version: int) -> ApiSpec:
    """Like :func:`api`, and the version must be in range (else UnsupportedVersionError)."""
    spec = api(api_key)
    if version not in spec.versions:
        raise UnsupportedVersionError(
            f"{spec.name} version {version} is not supported (supported: {spec.versions})",
            api_key=api_key,
            version=version,
            field="api_version",
        )
    return spec


def header_versions(api_key: int, version: int) -> tuple[int, int]:
    """(request header version, response header version) for a request at ``version``.

    Needs only the API key to be known, not the version, so a broker can read
    the header (and answer ApiVersions) of a version it does not support.
    """
    flexible = api(api_key).is_flexible(version)
    return request_header_version(flexible), response_header_version(api_key, flexible)


def supported_versions(*, extensions: bool = False) -> tuple[tuple[int, int, int], ...]:
    """``(api_key, min_version, max_version)`` of every defined Kafka API, by key
    (what Kafka 4.0 advertises), plus the extension APIs when ``extensions``."""
    return tuple(
        (spec.api_key, spec.min_version, spec.max_version)
        for spec in apis().values()
        if extensions or not is_extension_api(spec.api_key)
    )
