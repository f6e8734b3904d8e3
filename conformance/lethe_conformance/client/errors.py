"""The conformance client's own failures, kept apart from Kafka error codes.

A Kafka error code inside a response is an *answer* and goes to the
expectations; these exceptions are for the cases where there is no answer to
judge. The runner grades them differently, so the classes say which case it is:

``TargetUnreachableError``  no connection, or the connection broke: the target
                            could not be asked. Graded ERROR; but a connection
                            the target closed on an API it advertises
                            (``ConnectionClosedError.advertised``) is its FAIL,
                            and no response in time (``TargetTimeoutError``, a
                            hang) is INCONCLUSIVE.
``TargetNonsenseError``     bytes came back but are not an answer to what was
                            asked: undecodable, trailing bytes, a frame over the
                            size limit, a correlation id of another request.
                            Graded as the target's FAIL, never PASS.
``UnsupportedApiError``     the target does not advertise the API (or no
                            version both sides speak). Graded UNSUPPORTED.
``AuthenticationError``     SASL refused. Graded ERROR.

Every message names the target (``host:port``) and the API, so a report line
alone says what went wrong where.
"""

from __future__ import annotations

from lethe_formats.protocol.api_keys import api_name

__all__ = [
    "AuthenticationError",
    "ClientError",
    "ConnectionClosedError",
    "TargetNonsenseError",
    "TargetTimeoutError",
    "TargetUnreachableError",
    "UnsupportedApiError",
]


class ClientError(Exception):
    """Base of the client's failures; ``target`` is ``host:port``, ``api`` Kafka's API name."""

    def __init__(self, target: str, api: str | None, detail: str) -> None:
        where = f"{target} ({api})" if api else target
        super().__init__(f"{where}: {detail}")
        self.target = target
        self.api = api
        self.detail = detail


class TargetUnreachableError(ClientError):
    """Could not connect, the connection closed or broke."""


class ConnectionClosedError(TargetUnreachableError):
    """The target closed the connection instead of answering a request.

    ``advertised``: the request's API is one the target listed in ApiVersions, so
    closing on it is the target refusing a request it claims to serve (graded as
    the target's FAIL, not as an unreachable target)."""

    def __init__(self, target: str, api: str | None, detail: str, *, advertised: bool) -> None:
        super().__init__(target, api, detail)
        self.advertised = advertised


class TargetTimeoutError(TargetUnreachableError):
    """No (complete) response within the bounded timeout."""


class TargetNonsenseError(ClientError):
    """The target answered with bytes that are not a response to the request."""


class AuthenticationError(ClientError):
    """SASL authentication was refused (any mechanism)."""


class UnsupportedApiError(ClientError):
    """The target speaks no version of the API that the client also speaks."""

    def __init__(
        self,
        target: str,
        api_key: int,
        theirs: tuple[int, int] | None,
        ours: tuple[int, int],
    ) -> None:
        offered = f"versions {theirs[0]}-{theirs[1]}" if theirs else "no version"
        super().__init__(
            target,
            api_name(api_key),
            f"target offers {offered}, the client speaks {ours[0]}-{ours[1]}",
        )
        self.api_key = api_key
        self.theirs = theirs
        self.ours = ours
