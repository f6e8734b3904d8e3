meta:
  id: kafka_log_segment
  title: Kafka log segment (.log), record batches of magic 0, 1 and 2
  file-extension: log
  endian: be
  license: Apache-2.0
  imports:
    - kafka_record_v2
doc: |
  A `.log` segment is a plain sequence of log entries up to the end of the
  file. Every entry, whatever its magic, starts with the same 12 bytes:

    0  offset   int64   baseOffset (magic 2) or message offset (magic 0/1)
    8  length   int32   bytes that follow (batchLength / messageSize)
    12 ...              partitionLeaderEpoch (magic 2) or crc (magic 0/1)
    16 magic    int8    selects the layout of the rest

  so the magic byte is always at entry offset 16 (offset 4 of `body`),
  which is how Kafka's FileLogInputStream dispatches too. Magic 2 is a record
  batch (DefaultRecordBatch); magic 0 and 1 are one legacy message each
  (LegacyRecord). A compressed legacy message is a wrapper whose value is a
  compressed inner sequence of entries in this same layout, so the adapter
  parses the decompressed value with this spec's top-level type.

  Not expressible in Kaitai, done by lethe_formats/ksy/adapter.py and checked
  by tests/formats/test_ksy*.py:
  - CRC-32C of a v2 batch over bytes [21, end) and CRC32 (zlib) of a legacy
    message over magic..end: Kaitai has no checksum primitive. The raw
    `body` bytes are kept (`_raw_body`) so the adapter/tests compute them.
  - Decompression (gzip, snappy incl. xerial framing, lz4 frame, zstd):
    compressed records stay raw in `compressed_records` / the legacy `value`,
    and the adapter decompresses them with lethe_formats.compression and
    parses the result with kafka_record_v2::records or this spec.
  - v1 inner offsets relative to the wrapper, and Kafka's varint limits.
  - Kafka's minimum sizes per magic (61-byte v2 header, 14-byte legacy
    message) and the order in which Kafka reports a torn tail, a short size,
    an unknown magic and a bad CRC: when Kaitai fails, the adapter looks at
    the entry's fixed prefix to report what Kafka would.
doc-ref: https://kafka.apache.org/documentation/#recordbatch
seq:
  - id: entries
    type: entry
    repeat: eos
types:
  entry:
    seq:
      - id: offset
        type: s8
        doc: |
          baseOffset of a v2 batch; for magic 0/1 the message offset, which
          for a compressed wrapper is the offset of its last inner message.
      - id: length
        type: s4
        valid:
          min: 14
        doc: |
          Bytes after this field (batchLength / messageSize). Kafka rejects a
          size below the legacy minimum record overhead, 14.
      - id: body
        size: length
        type: entry_body
  entry_body:
    instances:
      magic:
        pos: 4
        type: s1
        doc: Byte 16 of the entry, the format selector.
    seq:
      - id: content
        type:
          switch-on: magic
          cases:
            2: record_batch
            1: legacy_message
            0: legacy_message
            _: unknown_entry
  unknown_entry:
    doc: A magic other than 0, 1 or 2; Kafka rejects it and so does the adapter.
    seq:
      - id: raw
        size-eos: true
  record_batch:
    doc: |
      Magic-2 record batch from byte 12 of the entry on. Offsets below are
      from the start of the entry (as in kafka-facts section 3.1):

        12 partitionLeaderEpoch int32 (not covered by the CRC)
        16 magic int8 = 2
        17 crc uint32, CRC-32C over [21, end of batch)
        21 attributes int16
        23 lastOffsetDelta int32
        27 baseTimestamp int64 (the delete horizon when bit 6 is set)
        35 maxTimestamp int64
        43 producerId int64
        51 producerEpoch int16
        53 baseSequence int32
        57 recordsCount int32
        61 records (one compressed block when the codec bits are not 0)
    seq:
      - id: partition_leader_epoch
        type: s4
      - id: magic
        type: s1
        valid: 2
      - id: crc
        type: u4
      - id: attributes
        type: s2
      - id: last_offset_delta
        type: s4
      - id: base_timestamp
        type: s8
      - id: max_timestamp
        type: s8
      - id: producer_id
        type: s8
      - id: producer_epoch
        type: s2
      - id: base_sequence
        type: s4
      - id: records_count
        type: s4
      - id: records
        type: kafka_record_v2::records(records_count)
        if: codec == codec::none
        doc: Uncompressed records, parsed in place.
      - id: compressed_records
        size-eos: true
        if: codec != codec::none
        doc: The compressed records block; the adapter decompresses it.
    instances:
      codec:
        value: attributes & 0x07
        enum: codec
        doc: Attribute bits 0-2.
      timestamp_type:
        value: (attributes >> 3) & 1
        enum: timestamp_type
        doc: Attribute bit 3 (0x08).
      is_transactional:
        value: (attributes & 0x10) != 0
        doc: Attribute bit 4.
      is_control:
        value: (attributes & 0x20) != 0
        doc: Attribute bit 5; the batch holds control records.
      has_delete_horizon:
        value: (attributes & 0x40) != 0
        doc: Attribute bit 6 (KIP-534); baseTimestamp is then the horizon.
      delete_horizon_ms:
        value: base_timestamp
        if: has_delete_horizon
      last_sequence:
        value: >-
          base_sequence == -1 ? -1
          : (base_sequence + last_offset_delta > 2147483647
            ? base_sequence + last_offset_delta - 2147483648
            : base_sequence + last_offset_delta)
        doc: baseSequence + lastOffsetDelta, wrapping at Int.MAX like Kafka.
      base_offset:
        value: _parent._parent.offset
      last_offset:
        value: base_offset + last_offset_delta
      size_in_bytes:
        value: _parent._parent.length + 12
        doc: The whole batch, as kafka-dump-log's `size:`.
  legacy_message:
    doc: |
      Magic 0 or 1 message from byte 12 of the entry on (LegacyRecord):

        12 crc uint32, CRC32 (IEEE/zlib) over magic..end of the message
        16 magic int8
        17 attributes int8 (bits 0-2 codec; bit 3 LogAppendTime, v1 only)
        18 timestamp int64 (v1 only)
        .. keyLength int32, key, valueLength int32, value

      Kafka treats any negative length as null (it slices only when the
      length is >= 0), and so does this spec. A compressed
      wrapper's value holds the compressed inner entries; the adapter
      decompresses and parses them with this spec's top-level type.
    seq:
      - id: crc
        type: u4
      - id: magic
        type: s1
      - id: attributes
        type: s1
      - id: timestamp
        type: s8
        if: magic >= 1
      - id: key_length
        type: s4
      - id: key
        size: key_length
        if: key_length >= 0
      - id: value_length
        type: s4
      - id: value
        size: value_length
        if: value_length >= 0
      - id: trailing
        size-eos: true
        doc: |
          Bytes after the value inside messageSize. Kafka's CRC covers them
          but no field does; lethe rejects them (the adapter checks), like
          its other decoders.
    instances:
      codec:
        value: attributes & 0x07
        enum: codec
      timestamp_type:
        value: (attributes >> 3) & 1
        enum: timestamp_type
        if: magic >= 1
        doc: Magic 0 has no timestamp type (NoTimestampType).
enums:
  codec:
    0: none
    1: gzip
    2: snappy
    3: lz4
    4: zstd
  timestamp_type:
    0: create_time
    1: log_append_time
