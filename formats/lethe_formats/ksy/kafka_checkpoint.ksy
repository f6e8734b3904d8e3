meta:
  id: kafka_checkpoint
  title: Kafka checkpoint text file (CheckpointFile)
  license: Apache-2.0
  encoding: UTF-8
doc: |
  The generic checkpoint file of a log directory (replication-offset-,
  recovery-point-offset-, log-start-offset-, cleaner-offset-checkpoint) and
  of a partition (leader-epoch-checkpoint). UTF-8 text, one item a line,
  each line ended by a line feed (LF, byte 10):

    <version>   line 1, an integer (0 for all these files)
    <count>     line 2, the number of entry lines
    <entry>     `count` lines: "topic partition offset" in the offset files,
                "epoch startOffset" in leader-epoch-checkpoint

  An empty file, or one that ends after the version line, holds no entries,
  so both header lines are optional here. Every line after the count line is
  an entry; a last line without LF still counts, as with Java's readLine.

  Kaitai can split the lines but not check them, so
  lethe_formats/ksy/adapter_files.py converts and checks what CheckpointFile's
  reader checks: integers parsed like Integer/Long.parseInt (Kaitai's
  `to_i` maps to Python's int(), which also takes blanks and '_'), the
  version, fields split on runs of ASCII whitespace (Java's backslash-s+),
  the entry count against the count line, and CR line ends (readLine also
  ends a line at a lone CR or at CR LF, which a one-byte
  Kaitai terminator cannot).
seq:
  - id: version_line
    type: str
    terminator: 10
    eos-error: false
    if: not _io.eof
  - id: count_line
    type: str
    terminator: 10
    eos-error: false
    if: not _io.eof
  - id: entry_lines
    type: str
    terminator: 10
    eos-error: false
    repeat: eos
