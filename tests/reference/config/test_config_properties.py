"""server.properties files are read as java.util.Properties.load reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_reference.config import PropertiesError, load_properties, parse_properties


def test_key_value_separators() -> None:
    text = "a=1\nb:2\nc 3\nd = 4\ne\t:\t5\nf  =  =6\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "=6"}


def test_comments_and_blank_lines_are_ignored() -> None:
    text = "# comment\n! also a comment\n\n   \n  # indented comment\nkey=value\n"
    assert parse_properties(text) == {"key": "value"}


def test_a_hash_inside_a_value_is_part_of_the_value() -> None:
    assert parse_properties("k=v # not a comment") == {"k": "v # not a comment"}


def test_leading_whitespace_is_skipped_and_trailing_whitespace_kept() -> None:
    assert parse_properties("   key = value  \n") == {"key": "value  "}


def test_a_key_alone_has_an_empty_value() -> None:
    assert parse_properties("lonely\nalso=\n") == {"lonely": "", "also": ""}


def test_backslash_continues_a_line_without_the_next_lines_indentation() -> None:
    text = "log.dirs=/data/a,\\\n         /data/b,\\\n\t/data/c\nnext=1\n"
    assert parse_properties(text) == {"log.dirs": "/data/a,/data/b,/data/c", "next": "1"}


def test_an_even_number_of_backslashes_does_not_continue() -> None:
    assert parse_properties("path=c:\\\\\nother=x\n") == {"path": "c:\\", "other": "x"}


def test_a_continued_line_starting_with_a_hash_is_not_a_comment() -> None:
    assert parse_properties("k=a\\\n#b\n") == {"k": "a#b"}


def test_a_comment_ending_in_a_backslash_does_not_continue() -> None:
    assert parse_properties("# note \\\nk=v\n") == {"k": "v"}


def test_escapes_in_keys_and_values() -> None:
    text = "a\\ key=tab\\there\nb\\=c=\\u0041\\n\\r\\f\\x\\\\\nd\\:e=1\n"
    assert parse_properties(text) == {
        "a key": "tab\there",
        "b=c": "A\n\r\fx\\",
        "d:e": "1",
    }


def test_malformed_unicode_escape_names_the_line() -> None:
    with pytest.raises(PropertiesError) as error:
        parse_properties("ok=1\n\nbad=\\u12G4\n")
    assert "line 3" in str(error.value)
    assert "Malformed \\uxxxx encoding." in str(error.value)
    assert error.value.line == 3


def test_truncated_unicode_escape_is_malformed() -> None:
    with pytest.raises(PropertiesError):
        parse_properties("k=\\u12")


def test_all_line_terminators() -> None:
    assert parse_properties("a=1\r\nb=2\rc=3\nd=4") == {"a": "1", "b": "2", "c": "3", "d": "4"}


def test_last_duplicate_wins() -> None:
    assert parse_properties("k=1\nk=2\n") == {"k": "2"}


def test_backslash_at_end_of_file_is_dropped() -> None:
    assert parse_properties("k=v\\") == {"k": "v"}


def test_files_are_iso_8859_1(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_bytes(b"name=caf\xe9\nnode.id=1\n")
    assert load_properties(path) == {"name": "café", "node.id": "1"}


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.properties"
    path.write_bytes(b"x=\\uZZZZ\n")
    with pytest.raises(PropertiesError, match=r"bad\.properties:1"):
        load_properties(path)
