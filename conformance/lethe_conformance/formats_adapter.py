"""``lethe-format-adapter``: lethe's decoders behind the format suite's process contract.

Theory of operation
-------------------
The format conformance runner judges any decoder through a command that
reads one request on stdin and answers on stdout (``fixtures/formats/README.md``,
"Subprocess contract"). This is that command for lethe itself, so the suite
can check lethe exactly as it checks an implementation in another language::

    $ echo '{"kind": "txn-index", "input": {"hex": ""}}' | lethe-format-adapter
    {"entries": []}

Exit 0 with the decoded tagged JSON, exit 1 with ``{"error": id, ...}`` for an
input lethe rejects, exit 2 for a request that is not the contract's JSON
(message on stderr). Anything unexpected escapes as a traceback and Python's
exit status 1 would be wrong, so it is caught and reported with exit 3: the
runner counts every status other than 0 and 1 as an implementation error.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any, TextIO

from lethe_conformance.formats.adapters import Broken, Decoded
from lethe_conformance.formats.cases import KINDS, TEXT_KINDS
from lethe_conformance.formats.lethe_adapter import decode_request

__all__ = ["main", "parse_request"]


class RequestError(ValueError):
    """stdin is not a request of the contract."""


def parse_request(text: str) -> dict[str, Any]:
    """The request on stdin, checked against the contract's shape."""
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RequestError(f"stdin is not JSON: {exc}") from None
    if not isinstance(request, dict) or request.get("kind") not in KINDS:
        raise RequestError(f"request needs a 'kind' among {', '.join(KINDS)}")
    source = request.get("input")
    member = "text" if request["kind"] in TEXT_KINDS else "hex"
    if not isinstance(source, dict) or not isinstance(source.get(member), str):
        raise RequestError(f"kind {request['kind']} needs 'input': {{'{member}': ...}}")
    if member == "hex":
        try:
            bytes.fromhex(source["hex"])
        except ValueError:
            raise RequestError("input.hex is not hex") from None
    if request["kind"] in ("record", "checkpoint") and not isinstance(request.get("context"), dict):
        raise RequestError(f"kind {request['kind']} needs a 'context' object")
    return request


def main(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    source = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    try:
        request = parse_request(source.read())
    except RequestError as exc:
        print(f"lethe-format-adapter: {exc}", file=sys.stderr)
        return 2
    try:
        result = decode_request(request)
    except Exception:
        traceback.print_exc()
        return 3
    if isinstance(result, Broken):  # not produced by lethe's adapter; kept for completeness
        print(result.reason, file=sys.stderr)
        return 3
    if isinstance(result, Decoded):
        out.write(json.dumps(result.value) + "\n")
        return 0
    reply: dict[str, Any] = {"error": result.error}
    for key in ("position", "line", "message"):
        if getattr(result, key) is not None:
            reply[key] = getattr(result, key)
    out.write(json.dumps(reply) + "\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
