meta:
  id: kafka_time_index
  title: Kafka time index (.timeindex, TimeIndex)
  file-extension: timeindex
  endian: be
  license: Apache-2.0
doc: |
  A sparse map from timestamps to offsets, 12 bytes an entry:

    0 timestamp      int64   max timestamp seen so far in the segment
    8 relativeOffset int32   offset of the batch holding it - base offset

  Timestamps never decrease. Kafka's sanity checks (a length that is a
  multiple of 12; non-decreasing timestamps) are not parse rules: a partial
  last entry lands in `trailing`, and lethe_formats/ksy/adapter_files.py reports
  it as a corrupt index.
seq:
  - id: entries
    type: entry
    repeat: expr
    repeat-expr: _io.size / 12
  - id: trailing
    size-eos: true
    doc: Bytes after the last whole entry (empty in a sane index).
types:
  entry:
    seq:
      - id: timestamp
        type: s8
      - id: relative_offset
        type: s4
