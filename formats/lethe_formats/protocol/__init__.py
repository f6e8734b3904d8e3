"""Kafka's wire protocol: message definitions, codecs, headers, registry, framing, errors.

Modules
-------
``schema``      the DSL: :class:`Struct`, :func:`proto`, :func:`message`, wire types
``compiler``    DSL class + version -> Construct codec (cached); ``encode``/``decode``
``wire``        primitive codecs (classic and compact lengths, uvarint, uuid, ...)
``headers``     request/response headers and which header version goes with a request
``registry``    (api_key, version) -> classes; supported (advertised) version ranges
``envelope``    header + body of a whole request/response payload
``framing``     4-byte size prefix; incremental :class:`FrameBuffer`
``error_codes`` Kafka 4.0's error table (the one place codes live): :class:`ErrorCode`
``broker_errors`` ``KafkaError`` classes generated per code; ``error_for_code``
``exceptions``  typed decoding/lookup errors (``FormatError`` subclasses)
``api_keys``    :class:`ApiKey` IntEnum
``messages/``   one module per API (request and response classes)

This package's ``__init__`` imports nothing, so ``lethe_formats.errors`` can use
``error_codes`` without an import cycle: import from the modules.

How to define a message
-----------------------
Write a module ``messages/<api_name>.py``; the registry finds it by itself. Take
the facts (fields, types, versions, nullable versions, tags, defaults) from
Kafka 4.0's message spec; write the definition yourself::

    from dataclasses import dataclass
    from lethe_formats.protocol.schema import INT32, INT64, STRING, Struct, array, message, proto

    @dataclass(frozen=True, slots=True)
    class DeleteRecordsPartition(Struct):          # nested struct: no decorator
        partition_index: int = proto(INT32, "0+")
        offset: int = proto(INT64, "0+")

    @dataclass(frozen=True, slots=True)
    class DeleteRecordsTopic(Struct):
        name: str = proto(STRING, "0+")
        partitions: tuple[DeleteRecordsPartition, ...] = proto(array(DeleteRecordsPartition), "0+")

    @message(api_key=21, kind="request", valid="0-2", flexible="2+")
    @dataclass(frozen=True, slots=True)
    class DeleteRecordsRequest(Struct):
        topics: tuple[DeleteRecordsTopic, ...] = proto(array(DeleteRecordsTopic), "0+")
        timeout_ms: int = proto(INT32, "0+")

Rules:

* Every class derives from ``Struct`` and is ``@dataclass(frozen=True, slots=True)``;
  top-level request/response classes get ``@message(...)`` *above* ``@dataclass``
  with ``valid`` = Kafka 4.0's validVersions (what the broker advertises) and
  ``flexible`` = flexibleVersions. Request and response must agree on both.
* Field names are Kafka's in snake_case, in Kafka's order (order is wire order).
  Arrays are ``tuple[...]``; nullable fields are ``X | None``.
* ``proto(type, versions, *, nullable="none", tag=None, tagged=None, default=...,
  ignorable=False, flexible=None)``. Types: ``INT8 INT16 INT32 INT64 UINT16
  UINT32 VARINT VARLONG FLOAT64 BOOL STRING BYTES UUID RECORDS``, ``array(T)``
  with T a type or a Struct class, or a Struct class for a single nested struct.
* Defaults: omit ``default`` for Kafka's implicit ones (0, "", b"", False, (),
  zero UUID, nested defaults; RECORDS defaults to None). Give ``default=-1``
  etc. where the spec says ``"default"``; ``"default": "null"`` is ``default=None``.
* Tagged fields: ``tag=N`` (tagged versions default to ``versions``). They
  exist only in flexible versions and are written only when not default.
* ``ignorable=True`` where the spec says ``"ignorable": true``: a non-default
  value is dropped silently in versions lacking the field. Without it, encoding
  such a value raises ``UnsupportedVersionError`` (Kafka's
  UnsupportedVersionException): handlers must not lose data silently.
* Unknown tagged fields read from the wire are kept in
  ``_unknown_tagged_fields`` and written back, so decode -> encode is exact.
* Nested structs in flexible versions carry their own tagged-field section;
  ``taggedVersions`` must lie inside the message's flexible versions.
* ruff's RUF009 cannot tell that ``proto()`` is a field specifier when the
  field's type is not a builtin (UUID, nested struct): such modules start with
  ``# ruff: noqa: RUF009`` (see ``messages/fetch.py``).

Use: ``encode(msg, version) -> bytes``, ``decode(Cls, version, data) -> Cls``
(``compiler``); ``decode_request(payload)`` / ``encode_response(...)``
(``envelope``). Tests: add the API to the golden-frame test's defined set
(automatic: it asks the registry) and a round-trip test with
``tests/formats/protocol/wire_strategies.py``.
"""

__all__: list[str] = []
