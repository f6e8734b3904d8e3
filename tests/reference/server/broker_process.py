"""``lethe broker`` as a child process, as a user runs it: start, SIGTERM, kill -9,
and one request at a time over a socket (shared by the restart tests)."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.schema import Struct, message_info

__all__ = ["BrokerProcess"]


class BrokerProcess:
    """``lethe broker`` on a free port over ``log_dir``; restartable, killable."""

    def __init__(self, log_dir: Path, overrides: dict[str, str] | None = None) -> None:
        self.log_dir = log_dir
        self.overrides = [f"--override={k}={v}" for k, v in (overrides or {}).items()]
        self.stderr_path = log_dir.parent / "broker.stderr"
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    def start(self) -> None:
        offset = self.stderr_path.stat().st_size if self.stderr_path.exists() else 0
        command = [sys.executable, "-m", "lethe_tools.cli", "broker", "--listen", "127.0.0.1:0"]
        with self.stderr_path.open("ab") as stderr:
            self.process = subprocess.Popen(
                [*command, "--log-dir", str(self.log_dir), *self.overrides],
                stderr=stderr,
                stdout=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with self.stderr_path.open("rb") as log:
                log.seek(offset)
                text = log.read().decode(errors="replace")
            if "event=listening" in text:
                self.port = int(text.split("event=listening")[1].split("port=")[1].split()[0])
                return
            assert self.process.poll() is None, text
            time.sleep(0.05)
        raise AssertionError("lethe broker did not start")

    def stop(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(60) == 0
        self.process = None

    def crash(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(60)
        self.process = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def exchange(self, body: Struct, version: int) -> Struct:
        key = message_info(type(body)).api_key
        assert key is not None
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as sock:
            sock.sendall(frame(encode_request(RequestHeader(key, version, 7, "t"), body)))
            data = b""
            while len(data) < 4 or len(data) < 4 + struct.unpack_from(">i", data)[0]:
                chunk = sock.recv(65536)
                assert chunk, "connection closed"
                data += chunk
        return decode_response(ApiKey(key), version, data[4:])[1]
