"""`lethe dump ... | head` ends quietly when the reader closes the pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lethe_formats.records.builder import RecordSpec, build_batch


def test_closed_stdout_is_not_reported_as_a_file_error(tmp_path: Path) -> None:
    # Far more output than a pipe buffers (64 KiB), so the writer must meet
    # the closed pipe.
    records = [RecordSpec(b"k%05d" % i, b"v" * 50, timestamp=1_700_000_000_000) for i in range(100)]
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"".join(build_batch(records, base_offset=100 * n) for n in range(100)))
    process = subprocess.Popen(
        [sys.executable, "-m", "lethe_tools.cli", "dump", "--deep-iteration", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    process.stdout.close()  # the reader goes away after one line
    _, err = process.communicate(timeout=60)
    assert first == f"Dumping {log}\n".encode()
    assert b"Broken pipe" not in err
    assert b"Traceback" not in err
    assert process.returncode == 0
