"""kafka-dump-log's text layout, reproduced byte for byte.

Theory of operation
-------------------
Every function here turns decoded values into the exact strings
``kafka.tools.DumpLogSegments`` (Kafka 4.0) prints, so ``lethe dump`` output
can be diffed against ``bin/kafka-dump-log.sh``. The layouts (one line each,
single spaces; the golden ``dump.txt`` files pin them)::

    baseOffset: B lastOffset: L count: C baseSequence: S lastSequence: S2
      producerId: P producerEpoch: E partitionLeaderEpoch: PLE
      isTransactional: T isControl: C deleteHorizonMs: OptionalLong.empty
      position: POS CreateTime: MAXTS size: N magic: 2 compresscodec: none
      crc: CRC isvalid: true                                   (magic 2 batch)
    offset: L position: POS CreateTime: TS size: N magic: 1 compresscodec: gzip
      crc: CRC isvalid: true                                   (magic 0/1 entry)
    | offset: O CreateTime: TS keySize: K valueSize: V sequence: N headerKeys: [a,b]
      [endTxnMarker: COMMIT coordinatorEpoch: E | key: K payload: V]
    | offset: O CreateTime: TS keySize: K valueSize: V isValid: true crc: X}
      [key: K payload: V]                                      (magic 0/1 record)

(the ``}`` after a legacy record's crc is a stray brace in Kafka's code).
Keys, payloads and header keys go through :func:`java_utf8`, which is what
Kafka's default ``StringDecoder`` (``new String(bytes, UTF_8)``) does: every
malformed sequence becomes U+FFFD, using the same maximal-subpart rule as
Python's ``errors="replace"``. Control characters are printed raw.

Record lines are built for a whole batch at once into a caller's list, with
f-strings and locals only, because ``--deep-iteration`` formats hundreds of
thousands of records per second.
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_formats.model import BatchHeader, LegacyMessage, Record

from lethe_tools.inspect.decoders import RecordParser, string_parser

__all__ = [
    "codec_name",
    "data_suffix",
    "java_utf8",
    "legacy_entry_line",
    "legacy_record_lines",
    "record_lines",
    "v2_batch_line",
]

_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
_INT_MAX = 0x7FFFFFFF


def java_utf8(data: bytes) -> str:
    """``new String(data, UTF_8)``: malformed input becomes U+FFFD."""
    return data.decode("utf-8", "replace")


def codec_name(attributes: int) -> str:
    """``compresscodec`` value; ids 5-7 (which Kafka cannot even name) as ``unknown(N)``."""
    codec = attributes & 0x07
    return _CODECS[codec] if codec < len(_CODECS) else f"unknown({codec})"


def _bool(flag: bool | None) -> str:
    return "true" if flag else "false"


def _v2_timestamp_type(attributes: int) -> str:
    return "LogAppendTime" if attributes & 0x08 else "CreateTime"


def legacy_timestamp_type(message: LegacyMessage) -> str:
    """v0 has no timestamp type; v1 takes it from attribute bit 3."""
    if message.magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if message.attributes & 0x08 else "CreateTime"


def v2_batch_line(position: int, header: BatchHeader, crc_valid: bool | None) -> str:
    """The batch line of a magic-2 batch starting at byte ``position``."""
    attributes = header.attributes
    horizon = (
        f"OptionalLong[{header.base_timestamp}]" if attributes & 0x40 else "OptionalLong.empty"
    )
    return (
        f"baseOffset: {header.base_offset} lastOffset: {header.last_offset} "
        f"count: {header.records_count} baseSequence: {header.base_sequence} "
        f"lastSequence: {header.last_sequence} producerId: {header.producer_id} "
        f"producerEpoch: {header.producer_epoch} "
        f"partitionLeaderEpoch: {header.partition_leader_epoch} "
        f"isTransactional: {_bool(attributes & 0x10 != 0)} "
        f"isControl: {_bool(attributes & 0x20 != 0)} deleteHorizonMs: {horizon} "
        f"position: {position} {_v2_timestamp_type(attributes)}: {header.max_timestamp} "
        f"size: {header.batch_length + 12} magic: {header.magic} "
        f"compresscodec: {codec_name(attributes)} crc: {header.crc} isvalid: {_bool(crc_valid)}"
    )


def legacy_entry_line(position: int, message: LegacyMessage, crc_valid: bool | None) -> str:
    """The batch line of a magic 0/1 log entry (a message or a compressed wrapper)."""
    timestamp = -1 if message.timestamp is None else message.timestamp
    return (
        f"offset: {message.offset} position: {position} "
        f"{legacy_timestamp_type(message)}: {timestamp} size: {message.message_size + 12} "
        f"magic: {message.magic} compresscodec: {codec_name(message.attributes)} "
        f"crc: {message.crc} isvalid: {_bool(crc_valid)}"
    )


def data_suffix(metadata: str, skip_metadata: bool, key: str | None, payload: str | None) -> str:
    """A record line from its metadata part and parsed key/payload, as Kafka glues them:
    ``| `` starts the line only before metadata or a key (``--skip-record-metadata``
    with no key leaves a line starting `` payload:``)."""
    line, prefix = ("", "| ") if skip_metadata else (metadata, " ")
    if key is not None:
        line = f"{line}{prefix}key: {key}"
    if payload is not None:
        line = f"{line} payload: {payload}"
    return line


def record_lines(
    header: BatchHeader,
    records: Sequence[Record],
    print_data: bool,
    control_suffixes: Sequence[str] | None,
    out: list[str],
    *,
    parser: RecordParser | None = None,
    skip_metadata: bool = False,
) -> None:
    """Append one ``| offset: ...`` line per record of a magic-2 batch to ``out``.

    ``control_suffixes`` holds, for a control batch, the text after
    ``headerKeys`` of each record (``endTxnMarker: ...``); control records
    never print key or payload, exactly as Kafka skips them. ``parser`` (a
    ``--*-decoder`` option) turns key and value into text; ``skip_metadata``
    leaves out everything but key and payload.
    """
    if parser is not None or skip_metadata:
        _parsed_record_lines(
            header,
            records,
            print_data,
            control_suffixes,
            out,
            parser=parser,
            skip_metadata=skip_metadata,
        )
        return
    base = header.base_offset
    attributes = header.attributes
    log_append = attributes & 0x08
    ts_name = "LogAppendTime" if log_append else "CreateTime"
    base_ts = header.base_timestamp
    max_ts = header.max_timestamp
    base_seq = header.base_sequence
    append = out.append
    for index, record in enumerate(records):
        delta = record.offset_delta
        key = record.key
        value = record.value
        if base_seq < 0:
            sequence = -1
        else:
            sequence = base_seq + delta
            if sequence > _INT_MAX:
                sequence -= _INT_MAX + 1
        headers = record.headers
        names = ",".join([java_utf8(h.key) for h in headers]) if headers else ""
        line = (
            f"| offset: {base + delta} {ts_name}: "
            f"{max_ts if log_append else base_ts + record.timestamp_delta} "
            f"keySize: {-1 if key is None else len(key)} "
            f"valueSize: {-1 if value is None else len(value)} "
            f"sequence: {sequence} headerKeys: [{names}]"
        )
        if control_suffixes is not None:
            suffix = control_suffixes[index]
            if suffix:
                line = f"{line} {suffix}"
        elif print_data:
            if key is not None:
                line = f"{line} key: {key.decode('utf-8', 'replace')}"
            if value is not None:
                line = f"{line} payload: {value.decode('utf-8', 'replace')}"
        append(line)


def _parsed_record_lines(
    header: BatchHeader,
    records: Sequence[Record],
    print_data: bool,
    control_suffixes: Sequence[str] | None,
    out: list[str],
    *,
    parser: RecordParser | None,
    skip_metadata: bool,
) -> None:
    """:func:`record_lines` through a parser or without metadata (the slower path)."""
    plain: list[str] = []
    record_lines(header, records, False, control_suffixes, plain)
    parse = parser or string_parser
    for record, metadata in zip(records, plain, strict=True):
        key = payload = None
        if print_data and control_suffixes is None:
            offset = header.base_offset + record.offset_delta
            key, payload = parse(record.key, record.value, offset)
        out.append(data_suffix(metadata, skip_metadata, key, payload))


def legacy_record_lines(
    wrapper: LegacyMessage,
    inner: Sequence[LegacyMessage],
    inner_valid: Sequence[bool],
    print_data: bool,
    out: list[str],
    *,
    parser: RecordParser | None = None,
    skip_metadata: bool = False,
) -> None:
    """Append the record lines of a magic 0/1 entry: its inner messages, or
    the entry itself when uncompressed. A v1 LogAppendTime wrapper's time
    overrides the inner timestamps, as Kafka's deep iterator does."""
    ts_name = legacy_timestamp_type(wrapper)
    override = wrapper.timestamp if wrapper.magic == 1 and wrapper.attributes & 0x08 else None
    for message, valid in zip(inner, inner_valid, strict=True):
        if override is not None:
            timestamp = override
        else:
            timestamp = -1 if message.timestamp is None else message.timestamp
        key = message.key
        value = message.value
        line = (
            f"| offset: {message.offset} {ts_name}: {timestamp} "
            f"keySize: {-1 if key is None else len(key)} "
            f"valueSize: {-1 if value is None else len(value)} "
            f"isValid: {_bool(valid)} crc: {message.crc}}}"
        )
        if parser is not None or skip_metadata:
            parsed = (parser or string_parser)(key, value, message.offset) if print_data else ()
            out.append(data_suffix(line, skip_metadata, *(parsed or (None, None))))
            continue
        if print_data:
            if key is not None:
                line = f"{line} key: {java_utf8(key)}"
            if value is not None:
                line = f"{line} payload: {java_utf8(value)}"
        out.append(line)
