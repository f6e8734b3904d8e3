meta:
  id: kafka_record_v2
  title: Kafka record, magic 2 (DefaultRecord)
  endian: be
  license: Apache-2.0
  imports:
    - kafka_varint
doc: |
  One record inside a magic-2 record batch. The record is length-delimited:
  `length` counts the body bytes after it, so the body is parsed from a
  substream of exactly that size.

    length           varint   body bytes that follow
    attributes       int8     unused by Kafka (0)
    timestampDelta   varlong  record timestamp - batch baseTimestamp
    offsetDelta      varint   offset - batch baseOffset
    keyLength        varint   negative = null key (Kafka writes -1)
    key              bytes
    valueLength      varint   negative = null value, a tombstone
    value            bytes
    headersCount     varint
    headers          headerKeyLength varint (>= 0), key UTF-8 bytes,
                     headerValueLength varint (negative = null), value bytes

  Kafka reads a null key/value for any negative length (it only slices when
  the length is >= 0), and so does this spec (Kafka itself writes -1).

  Rules Kaitai cannot express here, checked by lethe_formats/ksy/adapter.py:
  the varint byte limits (5 for varints, 10 for the varlong timestampDelta)
  and their 32/64-bit ranges; a negative headersCount or header key length
  (InvalidRecordException in Kafka); a body that does not consume exactly
  `length` bytes (`record_body.trailing` not empty); trailing bytes after
  the declared record count (`records.trailing`).

  `records` is the records section of a batch (after recordsCount): the
  log-segment spec parses it in place for uncompressed batches, and the
  adapter parses a decompressed section with it.
doc-ref: https://kafka.apache.org/documentation/#record
seq:
  - id: length
    type: kafka_varint
    doc: Size of `body` in bytes (varint).
  - id: body
    size: length.value
    type: record_body
types:
  record_body:
    seq:
      - id: attributes
        type: s1
        doc: Unused by Kafka (written as 0); int8 like Kafka reads it.
      - id: timestamp_delta
        type: kafka_varint
        doc: Varlong; record timestamp minus the batch baseTimestamp.
      - id: offset_delta
        type: kafka_varint
        doc: Varint; record offset minus the batch baseOffset.
      - id: key_length
        type: kafka_varint
      - id: key
        size: key_length.value
        if: key_length.value >= 0
      - id: value_length
        type: kafka_varint
      - id: value
        size: value_length.value
        if: value_length.value >= 0
      - id: headers_count
        type: kafka_varint
      - id: headers
        type: header
        repeat: expr
        repeat-expr: headers_count.value
        doc: A negative count reads no headers; the adapter rejects it.
      - id: trailing
        size-eos: true
        doc: |
          Body bytes after the last header. Kafka requires the body to be
          consumed exactly ("Invalid record size"); the adapter rejects any.
  header:
    seq:
      - id: key_length
        type: kafka_varint
      - id: key
        size: key_length.value
        doc: UTF-8 header key (kept as bytes); a negative length is invalid.
      - id: value_length
        type: kafka_varint
      - id: value
        size: value_length.value
        if: value_length.value >= 0
  records:
    doc: |
      A records section: exactly `count` records, then nothing. Anything left
      over lands in `trailing`, which Kafka rejects ("Incorrect declared
      batch size, records still remaining") and the adapter reports.
    params:
      - id: count
        type: s4
        doc: recordsCount from the batch header.
    seq:
      - id: items
        type: kafka_record_v2
        repeat: expr
        repeat-expr: count
      - id: trailing
        size-eos: true
  control_key:
    doc: |
      Key of a record in a control batch (ControlRecordType): version, then
      type. Kafka parses versions above 0 as version 0 and rejects a negative
      version or a key shorter than 4 bytes (the adapter checks the length).
    seq:
      - id: version
        type: s2
      - id: type
        type: s2
        enum: control_type
  end_txn_marker_value:
    doc: |
      Value of a COMMIT/ABORT control record (EndTransactionMarker): version,
      then the transaction coordinator's epoch; shorter than 6 bytes is invalid.
    seq:
      - id: version
        type: s2
      - id: coordinator_epoch
        type: s4
enums:
  control_type:
    0: abort
    1: commit
    2: leader_change
    3: snapshot_header
    4: snapshot_footer
    5: kraft_version
    6: kraft_voters
