meta:
  id: kafka_varint
  title: Kafka zig-zag varint / varlong (ByteUtils.readVarint, readVarlong)
  endian: be
  license: Apache-2.0
doc: |
  A signed integer in Protobuf zig-zag form: the value n is stored as
  (n << 1) ^ (n >> 31) for a varint (>> 63 for a varlong), then written as
  unsigned base-128 groups, the low 7 bits first, with the high bit set on
  every byte except the last.

  Kafka refuses a varint longer than 5 bytes and a varlong longer than 10.
  This type stops after at most 10 groups so a run of continuation bytes can
  never make it read without bound; `num_groups` and `terminated` let the
  adapter (lethe_formats/ksy/adapter.py) apply the 5-byte limit for varints,
  the 10-byte limit for varlongs and the 32/64-bit range checks, which
  Kaitai cannot tie to the field that uses the type.

  `unsigned` accumulates up to 10 groups; `value` undoes the zig-zag step.
doc-ref: https://protobuf.dev/programming-guides/encoding/#signed-ints
seq:
  - id: groups
    type: u1
    repeat: until
    repeat-until: _ < 0x80 or _index >= 9
    doc: Base-128 groups, low group first; a byte below 0x80 ends the number.
instances:
  num_groups:
    value: groups.size
    doc: Bytes the number occupies.
  terminated:
    value: groups[num_groups - 1] < 0x80
    doc: False when 10 bytes all carried the continuation bit.
  unsigned:
    value: >-
      (groups[0] & 0x7f)
      | (num_groups > 1 ? (groups[1] & 0x7f) << 7 : 0)
      | (num_groups > 2 ? (groups[2] & 0x7f) << 14 : 0)
      | (num_groups > 3 ? (groups[3] & 0x7f) << 21 : 0)
      | (num_groups > 4 ? (groups[4] & 0x7f) << 28 : 0)
      | (num_groups > 5 ? (groups[5] & 0x7f) << 35 : 0)
      | (num_groups > 6 ? (groups[6] & 0x7f) << 42 : 0)
      | (num_groups > 7 ? (groups[7] & 0x7f) << 49 : 0)
      | (num_groups > 8 ? (groups[8] & 0x7f) << 56 : 0)
      | (num_groups > 9 ? (groups[9] & 0x7f) << 63 : 0)
    doc: The unsigned zig-zag form, before range checks.
  value:
    value: (unsigned >> 1) ^ -(unsigned & 1)
    doc: The signed value (zig-zag decoded).
