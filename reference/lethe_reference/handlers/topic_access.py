"""CreateTopics and DeleteTopics under an authorizer (``ControllerApis`` in Kafka 4.0).

Theory of operation
-------------------
CreateTopics: CREATE on the CLUSTER allows every topic of the request; without
it, each topic needs CREATE on itself. A refused topic is answered
TOPIC_AUTHORIZATION_FAILED (29) "Authorization failed." before any validation
of its settings, and nothing is created (:func:`creatable`).

DeleteTopics (by name): a topic the principal may not DESCRIBE is 29 whether or
not it exists, so a principal cannot probe for names; one it may describe
but that does not exist is UNKNOWN_TOPIC_OR_PARTITION as usual; an existing
one without DELETE is 29. :func:`split_deletions` takes the first kind out
before the names are resolved, :func:`undeletable` the last kind after. The
message is the error's default, ``Topic authorization failed.`` (Kafka's
``new ApiError(TOPIC_AUTHORIZATION_FAILED)``). A topic given by id is held to
DELETE the same way (Kafka answers an undescribable id with a null name; here
the name is kept).

Without an authorizer every check passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize, authorize_cluster
from lethe_reference.handlers.context import RequestContext

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["CREATE_DENIED", "creatable", "split_deletions", "undeletable"]

CREATE_DENIED = "Authorization failed."


def _may(broker: Broker, ctx: RequestContext, op: AclOperation, name: str) -> bool:
    return authorize(broker, ctx, op, ResourceType.TOPIC, name)


def creatable(broker: Broker, ctx: RequestContext, names: Iterable[str]) -> set[str]:
    """The names the principal may create (all of them with CREATE on the cluster)."""
    wanted = set(names)
    if authorize_cluster(broker, ctx, AclOperation.CREATE):
        return wanted
    return {n for n in wanted if _may(broker, ctx, AclOperation.CREATE, n)}


def split_deletions(
    broker: Broker, ctx: RequestContext, names: Iterable[str]
) -> tuple[list[str], list[str]]:
    """(names the principal may not DESCRIBE, the others), in request order."""
    denied: list[str] = []
    kept: list[str] = []
    for name in names:
        (kept if _may(broker, ctx, AclOperation.DESCRIBE, name) else denied).append(name)
    return denied, kept


def undeletable(broker: Broker, ctx: RequestContext, names: Iterable[str]) -> list[str]:
    """The existing topics among ``names`` the principal may not DELETE."""
    return [n for n in names if not _may(broker, ctx, AclOperation.DELETE, n)]
