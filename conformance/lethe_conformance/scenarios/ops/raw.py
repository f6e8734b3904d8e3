"""``raw_request``: hand-made request bytes, judged by whether the target answers at all.

Theory of operation
-------------------
Kafka closes the connection when a request names an API key it does not serve:
``SocketServer``'s processor parses the request header first (``RequestHeader.parse``
-> ``ApiKeys.forId`` fails on an unknown id; a known but disabled API fails
``isApiEnabled``) and on that exception closes the channel without a response.
So "the key is unknown" is observable only as a closed connection, and a scenario
needs a step that sends a request no typed op would send to a target that does
not advertise it::

    send   header (api_key, version, correlation id, client id) | body bytes as given
    recv   a response with our correlation id   -> connection_closed false
           end of stream (or reset)             -> connection_closed true
           nothing within the request timeout   -> ERROR (no answer to judge)

The header versions follow lethe_formats' registry when it knows the API (the
KIP-694 key included), else ``flexible`` says which header to use. The body is
a fixture bytes value (``{"hex": ...}``): the scenario carries a *valid*
request body, so a target that served the key would answer it rather than
close the connection over a malformed body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lethe_conformance.client.errors import TargetTimeoutError, TargetUnreachableError
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import to_bytes
from lethe_conformance.scenarios.ops.registry import op

__all__ = ["raw_request"]


@op("raw_request")
def raw_request(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    conn = ctx.conn()
    body = to_bytes(data["body"]) or b""
    try:
        conn.request_raw(data["api_key"], data["version"], body, flexible=data.get("flexible"))
        closed = False
    except TargetTimeoutError:
        raise
    except TargetUnreachableError:
        ctx.drop_connection()
        closed = True
    exp = Expectations()
    expect = data.get("expect", {})
    if "connection_closed" in expect:
        exp.equal(f"{path}.expect.connection_closed", expect["connection_closed"], closed)
    return exp.mismatches
