meta:
  id: kafka_offset_index
  title: Kafka offset index (.index, OffsetIndex)
  file-extension: index
  endian: be
  license: Apache-2.0
doc: |
  A sparse map from offsets to byte positions in the segment's `.log`,
  8 bytes an entry:

    0 relativeOffset int32   offset - segment base offset (file name)
    4 position       int32   byte position of the batch in the .log

  The key is the last offset of an appended batch; the position is where
  that batch starts. An index is preallocated while the segment is active
  and trimmed to its entries when the segment is closed.

  Kafka's sanity checks (a length that is a multiple of 8; the last offset
  not below the base) are not parse rules: a partial last entry ends up in
  `trailing`, and lethe_formats/ksy/adapter_files.py reports it as a corrupt
  index. There is no checksum in index files.
seq:
  - id: entries
    type: entry
    repeat: expr
    repeat-expr: _io.size / 8
  - id: trailing
    size-eos: true
    doc: Bytes after the last whole entry (empty in a sane index).
types:
  entry:
    seq:
      - id: relative_offset
        type: s4
      - id: position
        type: s4
