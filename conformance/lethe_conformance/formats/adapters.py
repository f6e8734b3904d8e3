"""The implementation under test, seen through one method: ``decode(request)``.

Theory of operation
-------------------
An adapter turns a case's request (``{"kind", "input", "context"?}``, see
:meth:`.cases.Case.request`) into one of three outcomes:

* :class:`Decoded` - the implementation accepted the input; ``value`` is its
  tagged JSON decoding;
* :class:`Rejected` - it refused the input, naming an error id (and, if it
  knows them, the byte ``position`` or text ``line`` of the fault);
* :class:`Broken` - it did neither properly: crashed, timed out, printed
  something that is not the contract's JSON, or exited with another code.
  The runner reports these as implementation errors, never as passes.

:class:`SubprocessAdapter` is the language-neutral contract
(``fixtures/formats/README.md``): the command is started once per case, gets
the request as one JSON document on stdin, and answers with

====  =====================================================================
exit  stdout
====  =====================================================================
0     the decoded value, one JSON document
1     ``{"error": "<id>"}``, optionally with ``"position"``, ``"line"``,
      ``"message"``
else  (anything) - an implementation error
====  =====================================================================

Each run has a timeout (the child is killed when it expires). Any in-process
object with a ``name`` and the same ``decode`` method is an adapter too.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "Adapter",
    "AdapterResult",
    "Broken",
    "Decoded",
    "Rejected",
    "SubprocessAdapter",
    "interpret_output",
]


@dataclass(frozen=True)
class Decoded:
    """The input was accepted and decoded to ``value``."""

    value: Any


@dataclass(frozen=True)
class Rejected:
    """The input was refused with error id ``error``."""

    error: str
    position: int | None = None
    line: int | None = None
    message: str | None = None


@dataclass(frozen=True)
class Broken:
    """The implementation failed to follow the contract."""

    reason: str


AdapterResult = Decoded | Rejected | Broken


class Adapter(Protocol):
    """Anything that decodes a request; ``name`` appears in reports."""

    @property
    def name(self) -> str: ...

    def decode(self, request: Mapping[str, Any]) -> AdapterResult: ...


def _tail(data: bytes, limit: int = 400) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _rejection(stdout: bytes) -> Rejected | Broken:
    try:
        reply = json.loads(stdout)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return Broken(f"exit 1 but stdout is not JSON: {_tail(stdout)!r}")
    if not isinstance(reply, dict) or not isinstance(reply.get("error"), str) or not reply["error"]:
        return Broken(f'exit 1 but stdout is not {{"error": "<id>"}}: {_tail(stdout)!r}')
    for key in ("position", "line"):
        value = reply.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            return Broken(f"exit 1 with a non-integer {key!r}: {_tail(stdout)!r}")
    message = reply.get("message")
    return Rejected(
        reply["error"],
        reply.get("position"),
        reply.get("line"),
        message if isinstance(message, str) else None,
    )


def interpret_output(returncode: int, stdout: bytes, stderr: bytes) -> AdapterResult:
    """Grade one run of an adapter command by the contract's exit codes."""
    if returncode == 0:
        try:
            return Decoded(json.loads(stdout))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return Broken(f"exit 0 but stdout is not one JSON document: {_tail(stdout)!r}")
    detail = f"; stderr: {_tail(stderr)}" if stderr.strip() else ""
    if returncode == 1:
        rejection = _rejection(stdout)
        return Broken(rejection.reason + detail) if isinstance(rejection, Broken) else rejection
    return Broken(f"exit code {returncode} (the contract allows 0 and 1){detail}")


class SubprocessAdapter:
    """Runs ``command`` once per case with the request on stdin."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        timeout: float = 10.0,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if not command:
            raise ValueError("an adapter command is needed")
        self.command = list(command)
        self.timeout = timeout
        self.env = dict(env) if env is not None else None
        self._name = name or " ".join(self.command)

    @property
    def name(self) -> str:
        return self._name

    def decode(self, request: Mapping[str, Any]) -> AdapterResult:
        payload = json.dumps(request).encode("utf-8")
        try:
            done = subprocess.run(
                self.command,
                input=payload,
                capture_output=True,
                timeout=self.timeout,
                env=self.env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Broken(f"no answer within {self.timeout:g} s (killed)")
        except OSError as exc:
            return Broken(f"could not start {self.command[0]!r}: {exc}")
        return interpret_output(done.returncode, done.stdout, done.stderr)
