"""Checkpoint and ``partition.metadata`` cases: one per reading rule of kafka-facts §1.4.

Theory of operation
-------------------
Kafka reads these text files with ``BufferedReader.readLine`` (a line ends at
``\\n``, ``\\r`` or ``\\r\\n``), splits entry lines on Java's ``\\s+`` and
parses numbers with ``Integer.parseInt``/``Long.parseLong`` (``+`` allowed).
``CheckpointFile.CheckpointReadBuffer.read``:

* empty file, or EOF after the version line: no entries;
* version not an int, count not an int, an entry with the wrong number of
  fields (a blank line, or leading whitespace, which makes an empty first
  field): malformed line;
* version other than 0: unrecognised version;
* a negative count: ``IllegalArgumentException`` (negative-count);
* a non-numeric or out-of-range number inside an entry: NumberFormatException;
* entries read ≠ count, fewer *or* more: count mismatch.

``partition.metadata`` (``PartitionMetadataReadBuffer``): two lines split on
``:\\s+``, keys ``version`` then ``topic_id``; a negative version is rejected,
higher versions are accepted; the all-zero topic id is rejected; a topic id
that is not 16 bytes of URL-safe base64 is a malformed line; lines after the
second are not read.

Every expected value here is written out by hand; invalid cases are the
valid ``two-entries`` text (or its leader-epoch twin) with one line changed.
"""

from __future__ import annotations

from typing import Any

from lethe_conformance.formats.authoring_cases import Authored, invalid, valid

__all__ = ["checkpoint_cases", "partition_metadata_cases"]

_RULE = "hand-written from CheckpointFile's reading rules (kafka-facts 1.4)"


def _entries(*rows: tuple[str, int, int]) -> list[dict[str, Any]]:
    return [{"topic": t, "partition": p, "offset": str(o)} for t, p, o in rows]


def _ok(
    name: str, description: str, text: str, expected: dict[str, Any], fmt: str = "offset"
) -> Authored:
    return valid(
        f"checkpoint/{name}",
        description,
        text.encode(),
        expected,
        provenance=_RULE,
        context={"format": fmt},
        text=True,
    )


TWO = "0\n2\nfoo 0 42\nbar 3 7\n"
TWO_VALUE = {"version": 0, "entries": _entries(("foo", 0, 42), ("bar", 3, 7))}
EPOCHS = "0\n2\n0 0\n3 150\n"


def _valid_checkpoints() -> list[Authored]:
    v = TWO_VALUE
    epochs = {
        "version": 0,
        "entries": [{"epoch": 0, "startOffset": "0"}, {"epoch": 3, "startOffset": "150"}],
    }
    return [
        _ok("two-entries", "offset checkpoint with two entries", TWO, v),
        _ok(
            "version-line-only",
            "file holding only the version line has no entries",
            "0\n",
            {"version": 0, "entries": []},
        ),
        _ok(
            "empty-text",
            "empty file has no version and no entries",
            "",
            {"version": None, "entries": []},
        ),
        _ok("crlf-line-ends", "CRLF line ends", TWO.replace("\n", "\r\n"), v),
        _ok("cr-line-ends", "lone CR line ends", TWO.replace("\n", "\r"), v),
        _ok("no-final-newline", "last line without a newline", TWO.rstrip("\n"), v),
        _ok(
            "tabs-and-spaces",
            "fields split on runs of spaces and tabs",
            "0\n2\nfoo \t 0\t42\nbar  3 7\n",
            v,
        ),
        _ok(
            "trailing-whitespace",
            "trailing whitespace after an entry is dropped",
            "0\n2\nfoo 0 42  \nbar 3 7\t\n",
            v,
        ),
        _ok(
            "plus-sign", "numbers with a leading plus sign parse", "0\n+2\nfoo +0 +42\nbar 3 7\n", v
        ),
        _ok(
            "duplicate-partition",
            "a repeated partition is kept as written",
            "0\n2\nfoo 0 1\nfoo 0 2\n",
            {"version": 0, "entries": _entries(("foo", 0, 1), ("foo", 0, 2))},
        ),
        _ok(
            "int64-max-offset",
            "offset 2^63-1 fits",
            "0\n1\nfoo 2147483647 9223372036854775807\n",
            {"version": 0, "entries": _entries(("foo", 2147483647, 9223372036854775807))},
        ),
        _ok(
            "leader-epochs",
            "leader-epoch checkpoint with two entries",
            EPOCHS,
            epochs,
            "leader-epoch",
        ),
    ]


def _bad(  # noqa: PLR0917 - a case reads best positionally
    origin: Authored,
    name: str,
    description: str,
    text: str,
    error: str,
    line: int | None,
    change: str,
) -> Authored:
    return invalid(origin, name, description, text.encode(), error, change, line=line, text=True)


def _invalid_checkpoints(two: Authored, epochs: Authored) -> list[Authored]:
    m = "malformed-checkpoint-line"
    return [
        _bad(
            two,
            f"{m}-version",
            "version line not a number",
            "x\n2\nfoo 0 42\nbar 3 7\n",
            m,
            1,
            "line 1: 0 -> x",
        ),
        _bad(
            two,
            "unknown-version",
            "version 1",
            "1\n2\nfoo 0 42\nbar 3 7\n",
            "unknown-version",
            1,
            "line 1: 0 -> 1",
        ),
        _bad(
            two,
            f"{m}-count",
            "count line not a number",
            "0\ntwo\nfoo 0 42\nbar 3 7\n",
            m,
            2,
            "line 2: 2 -> two",
        ),
        _bad(
            two,
            "negative-count",
            "negative count",
            "0\n-1\nfoo 0 42\nbar 3 7\n",
            "negative-count",
            2,
            "line 2: 2 -> -1",
        ),
        _bad(
            two,
            f"{m}-two-fields",
            "entry with two fields",
            "0\n2\nfoo 0 42\nbar 7\n",
            m,
            4,
            "line 4: bar 3 7 -> bar 7",
        ),
        _bad(
            two,
            f"{m}-four-fields",
            "entry with four fields",
            "0\n2\nfoo 0 42\nbar 3 7 9\n",
            m,
            4,
            "line 4: bar 3 7 -> bar 3 7 9",
        ),
        _bad(
            two,
            f"{m}-leading-space",
            "leading space makes an empty first field",
            "0\n2\n foo 0 42\nbar 3 7\n",
            m,
            3,
            "line 3: foo 0 42 -> ' foo 0 42'",
        ),
        _bad(
            two,
            f"{m}-blank-entry",
            "blank line where an entry belongs",
            "0\n2\nfoo 0 42\n\n",
            m,
            4,
            "line 4: bar 3 7 -> empty line",
        ),
        _bad(
            two,
            "checkpoint-count-mismatch-fewer",
            "fewer entries than the count",
            "0\n3\nfoo 0 42\nbar 3 7\n",
            "checkpoint-count-mismatch",
            None,
            "line 2: 2 -> 3",
        ),
        _bad(
            two,
            "checkpoint-count-mismatch-more",
            "more entries than the count",
            "0\n1\nfoo 0 42\nbar 3 7\n",
            "checkpoint-count-mismatch",
            None,
            "line 2: 2 -> 1",
        ),
        _bad(
            two,
            "invalid-number-partition",
            "partition not a number",
            "0\n2\nfoo p 42\nbar 3 7\n",
            "invalid-number",
            3,
            "line 3: partition 0 -> p",
        ),
        _bad(
            two,
            "invalid-number-offset-overflow",
            "offset beyond int64",
            "0\n2\nfoo 0 9223372036854775808\nbar 3 7\n",
            "invalid-number",
            3,
            "line 3: offset 42 -> 9223372036854775808",
        ),
        _bad(
            two,
            "invalid-number-partition-overflow",
            "partition beyond int32",
            "0\n2\nfoo 2147483648 42\nbar 3 7\n",
            "invalid-number",
            3,
            "line 3: partition 0 -> 2147483648",
        ),
        _bad(
            epochs,
            f"{m}-epoch-three-fields",
            "leader-epoch entry with three fields",
            "0\n2\n0 0\n3 150 1\n",
            m,
            4,
            "line 4: 3 150 -> 3 150 1",
        ),
        _bad(
            epochs,
            "invalid-number-epoch",
            "epoch not a number",
            "0\n2\n0 0\nthree 150\n",
            "invalid-number",
            4,
            "line 4: 3 -> three",
        ),
    ]


def checkpoint_cases() -> list[Authored]:
    """Valid and invalid ``checkpoint`` cases for every reading rule."""
    cases = _valid_checkpoints()
    by_name = {c.stem.rsplit("/", 1)[1]: c for c in cases}
    return cases + _invalid_checkpoints(by_name["two-entries"], by_name["leader-epochs"])


TOPIC_ID = "mJAnUMwZQ0OhoIGVo8UnwQ"
PM = f"version: 0\ntopic_id: {TOPIC_ID}"


def _pm(name: str, description: str, text: str, version: int = 0) -> Authored:
    return valid(
        f"partition-metadata/{name}",
        description,
        text.encode(),
        {"version": version, "topicId": TOPIC_ID},
        provenance=_RULE.replace("CheckpointFile", "PartitionMetadataReadBuffer"),
        text=True,
    )


def partition_metadata_cases() -> list[Authored]:
    """Valid and invalid ``partition-metadata`` cases."""
    base = _pm("two-lines", "version and topic id, no trailing newline", PM)
    m = "malformed-checkpoint-line"
    return [
        base,
        _pm("trailing-newline", "trailing newline", PM + "\n"),
        _pm("tab-separator", "key and value separated by a tab", PM.replace(": ", ":\t")),
        _pm(
            "version-above-zero", "version 2 is accepted", PM.replace("version: 0", "version: 2"), 2
        ),
        _pm("extra-lines-ignored", "lines after the topic id are not read", PM + "\nnoise\n"),
        _pm("padded-topic-id", "topic id with base64 padding", PM + "=="),
        _bad_pm(
            base,
            f"{m}-missing-topic-id",
            "no topic_id line",
            "version: 0\n",
            m,
            2,
            "line 2 removed",
        ),
        _bad_pm(
            base,
            f"{m}-wrong-key",
            "second key is not topic_id",
            PM.replace("topic_id", "topicid"),
            m,
            2,
            "key topic_id -> topicid",
        ),
        _bad_pm(
            base,
            f"{m}-no-space",
            "no whitespace after the colon",
            PM.replace("version: 0", "version:0"),
            m,
            1,
            "'version: 0' -> 'version:0'",
        ),
        _bad_pm(
            base,
            f"{m}-bad-topic-id",
            "topic id that is not base64 of 16 bytes",
            PM.replace(TOPIC_ID, "not*base64"),
            m,
            2,
            "topic id -> not*base64",
        ),
        _bad_pm(
            base,
            "unknown-version",
            "negative version",
            PM.replace("version: 0", "version: -1"),
            "unknown-version",
            1,
            "version 0 -> -1",
        ),
        _bad_pm(
            base,
            "zero-topic-id",
            "all-zero topic id",
            PM.replace(TOPIC_ID, "A" * 22),
            "zero-topic-id",
            2,
            f"topic id -> {'A' * 22}",
        ),
    ]


def _bad_pm(  # noqa: PLR0917 - a case reads best positionally
    origin: Authored, name: str, description: str, text: str, error: str, line: int, change: str
) -> Authored:
    return invalid(origin, name, description, text.encode(), error, change, line=line, text=True)
