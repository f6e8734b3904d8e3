meta:
  id: kafka_txn_index
  title: Kafka aborted-transaction index (.txnindex, TransactionIndex)
  file-extension: txnindex
  endian: be
  license: Apache-2.0
doc: |
  The aborted transactions whose data lies in the segment, 34 bytes each
  (AbortedTxn):

    0  version          int16  0; Kafka rejects a version above 0
    2  producerId       int64
    10 firstOffset      int64  absolute
    18 lastOffset       int64  absolute (the ABORT marker's offset)
    26 lastStableOffset int64  absolute

  A partial last entry lands in `trailing`; lethe_formats/ksy/adapter_files.py
  reports it as a corrupt index.
seq:
  - id: entries
    type: aborted_txn
    repeat: expr
    repeat-expr: _io.size / 34
  - id: trailing
    size-eos: true
    doc: Bytes after the last whole entry (empty in a sane index).
types:
  aborted_txn:
    seq:
      - id: version
        type: s2
        valid:
          max: 0
        doc: AbortedTxn.CURRENT_VERSION is 0; higher versions are rejected.
      - id: producer_id
        type: s8
      - id: first_offset
        type: s8
      - id: last_offset
        type: s8
      - id: last_stable_offset
        type: s8
