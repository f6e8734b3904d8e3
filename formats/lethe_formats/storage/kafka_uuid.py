"""Kafka's ``Uuid`` (topic ids, directory ids, cluster ids) in its text form.

Theory of operation
-------------------
A Kafka ``Uuid`` is 16 bytes (two big-endian int64s, most significant first).
Its text form (``Uuid.toString``) is those 16 bytes in URL-safe base64
*without* padding: always 22 characters from ``[A-Za-z0-9_-]``::

    bytes  c5 3d d1 ... (16)      ->  "IdvB5LqtQrSQL2tqHWQmVg"

``Uuid.fromString`` is more lenient than ``toString`` is strict, and lethe
reproduces both directions:

* longer than 24 characters → ``Input string with prefix `<first 24>` is too
  long to be decoded as a base64 UUID``;
* decoded with ``Base64.getUrlDecoder()``: padding is optional, but if present
  it must be correct; any character outside the URL-safe alphabet, or a final
  unit of one character, is rejected;
* the decoded length must be exactly 16 → ``Input string `<s>` decoded as N
  bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID``.

All failures raise :class:`KafkaUuidError` (a ``ValueError``); the file readers
wrap it into their own typed error with file and line.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

__all__ = ["ZERO_UUID", "KafkaUuid", "KafkaUuidError"]

_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")


class KafkaUuidError(ValueError):
    """``IllegalArgumentException`` from ``Uuid.fromString``."""


@dataclass(frozen=True, slots=True)
class KafkaUuid:
    """16 raw bytes; ``str()`` gives Kafka's 22-character base64 form."""

    raw: bytes

    def __post_init__(self) -> None:
        if len(self.raw) != 16:
            raise KafkaUuidError(f"a Uuid is 16 bytes, got {len(self.raw)}")

    @classmethod
    def from_string(cls, text: str) -> KafkaUuid:
        """Parse like Kafka's ``Uuid.fromString``."""
        if len(text) > 24:
            raise KafkaUuidError(
                f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID"
            )
        raw = _java_url_decode(text)
        if len(raw) != 16:
            raise KafkaUuidError(
                f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the "
                "expected 16 bytes of a base64-encoded UUID"
            )
        return cls(raw)

    @property
    def most_significant_bits(self) -> int:
        return int.from_bytes(self.raw[:8], "big", signed=True)

    @property
    def least_significant_bits(self) -> int:
        return int.from_bytes(self.raw[8:], "big", signed=True)

    @property
    def is_zero(self) -> bool:
        return self.raw == bytes(16)

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self.raw).rstrip(b"=").decode("ascii")


def _java_url_decode(text: str) -> bytes:
    """``Base64.getUrlDecoder().decode(text)`` (padding optional, strict alphabet)."""
    cut = text.find("=")
    body, padding = (text, "") if cut < 0 else (text[:cut], text[cut:])
    if _ALPHABET.fullmatch(body) is None:
        bad = next(ch for ch in body if _ALPHABET.fullmatch(ch) is None)
        raise KafkaUuidError(f"Illegal base64 character {ord(bad):x}")
    remainder = len(body) % 4
    if remainder == 1:
        raise KafkaUuidError("Last unit does not have enough valid bits")
    if padding and (set(padding) != {"="} or len(padding) != (4 - remainder) % 4 or not remainder):
        raise KafkaUuidError("Input byte array has wrong 4-byte ending unit")
    try:
        return base64.urlsafe_b64decode(body + "=" * ((4 - remainder) % 4))
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - alphabet checked above
        raise KafkaUuidError(str(exc)) from None


#: ``Uuid.ZERO_UUID``: never a valid topic id.
ZERO_UUID = KafkaUuid(bytes(16))
