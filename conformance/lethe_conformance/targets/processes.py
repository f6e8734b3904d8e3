"""The process edge of launched targets: nodes as OS processes, signals, free ports.

Theory of operation
-------------------
A :class:`Node` is one broker process of a launched target
(:mod:`lethe_conformance.targets.launched`), made from a
:class:`~lethe_conformance.targets.launcher.LauncherSpec`: its own folder
(``node-<id>/``, the log dir ``data/`` and the process output
``output.log`` in it), its own ports, and the config file written before
every start. The node never decides anything: the target says start,
stop (the launcher's ``stop`` signal, then ``kill`` after
``stop_timeout_s``), crash (``kill``), pause and resume.

Processes start in a session of their own (a Ctrl-C of the runner does not
reach them) and are killed when the node is closed, whatever happened.

Ports: :func:`free_ports` binds candidates of a range to see they are free.
The default range lies below the kernel's ephemeral range (32768+ on Linux),
so while a node is stopped no outgoing connection of any process can take
its port; the node restarts on the same ports, as Kafka's clients expect.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from lethe_conformance.targets.base import ControlError

__all__ = ["DEFAULT_PORT_RANGE", "Node", "free_ports"]

DEFAULT_PORT_RANGE = (20000, 32000)
_OUTPUT_TAIL = 2000


def free_ports(count: int, port_range: tuple[int, int], host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports of ``port_range`` (inclusive) that bind now."""
    low, high = port_range
    candidates = list(range(low, high + 1))
    random.shuffle(candidates)
    found: list[int] = []
    for port in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
        found.append(port)
        if len(found) == count:
            return found
    raise ControlError(f"no {count} free ports in {low}-{high} on {host}")


class Node:
    """One broker process: started, stopped, crashed, paused by signals (module docstring)."""

    def __init__(self, node_id: int, folder: Path, ports: Mapping[str, int]) -> None:
        self.node_id = node_id
        self.folder = folder
        self.log_dir = folder / "data"
        #: a second log dir, used only by launcher ``failures`` settings (``{spare_log_dir}``)
        self.spare_log_dir = folder / "spare"
        self.ports = dict(ports)
        self.output = folder / "output.log"
        self.prepared = False
        self._process: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(exist_ok=True)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def run_once(self, argv: list[str], env: Mapping[str, str], timeout_s: float) -> None:
        """A preparation command (a format): ControlError with its output if it fails."""
        try:
            done = subprocess.run(
                argv,
                env=_environment(env),
                capture_output=True,
                timeout=timeout_s,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ControlError(f"node {self.node_id}: {argv[0]} failed: {error}") from None
        if done.returncode != 0:
            text = (done.stderr or done.stdout).decode(errors="replace").strip()
            raise ControlError(
                f"node {self.node_id}: {' '.join(argv)} exited {done.returncode}: "
                f"{text[-_OUTPUT_TAIL:]}"
            )

    def start(self, argv: list[str], env: Mapping[str, str]) -> None:
        if self.running:
            raise ControlError(f"node {self.node_id} is already running")
        with self.output.open("ab") as out:
            out.write(f"\n--- start {time.strftime('%H:%M:%S')}: {' '.join(argv)}\n".encode())
            out.flush()
            try:
                self._process = subprocess.Popen(
                    argv,
                    env=_environment(env),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as error:
                raise ControlError(f"node {self.node_id}: cannot run {argv[0]}: {error}") from None

    def exit_status(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def stop(self, sig: int, timeout_s: float, kill: int) -> None:
        """Send ``sig`` and wait for the exit; ``kill`` after ``timeout_s`` (then ControlError)."""
        process = self._process
        if process is None or process.poll() is not None:
            self._process = None
            return
        self.signal(sig)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.signal(kill)
            process.wait()
            self._process = None
            raise ControlError(
                f"node {self.node_id} did not stop within {timeout_s} s of signal {sig}; killed"
            ) from None
        self._process = None

    def crash(self, kill: int) -> None:
        """``kill`` (SIGKILL): no shutdown work at all, as a power cut."""
        process = self._process
        if process is not None and process.poll() is None:
            self.signal(kill)
            process.wait()
        self._process = None

    def signal(self, sig: int) -> None:
        if self._process is not None and self._process.poll() is None:
            os.kill(self._process.pid, sig)

    def output_tail(self) -> str:
        try:
            return self.output.read_bytes()[-_OUTPUT_TAIL:].decode(errors="replace")
        except OSError:
            return ""

    def close(self, kill: int) -> None:
        """Whatever state the node is in, leave no process behind."""
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, kill)
            process.wait()
        self._process = None


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    return {**os.environ, **extra}
