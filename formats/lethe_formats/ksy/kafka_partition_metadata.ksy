meta:
  id: kafka_partition_metadata
  title: Kafka partition.metadata (PartitionMetadataFile)
  license: Apache-2.0
  encoding: UTF-8
doc: |
  The topic id of a partition directory, two UTF-8 lines written without a
  trailing newline:

    version: 0
    topic_id: <Uuid in URL-safe base64 without padding>

  Kafka splits each line at a colon followed by whitespace and needs two parts; it rejects a
  negative version, a zero Uuid and a malformed line. Those checks, and the
  base64 decoding of the Uuid, are done by lethe_formats/ksy/adapter_files.py:
  Kaitai only splits the lines here.
seq:
  - id: version_line
    type: str
    terminator: 10
    eos-error: false
  - id: topic_id_line
    type: str
    terminator: 10
    eos-error: false
  - id: extra_lines
    type: str
    terminator: 10
    eos-error: false
    repeat: eos
    doc: Anything after the two lines (Kafka reads only two; see the adapter).
