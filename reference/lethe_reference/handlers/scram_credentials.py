"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): ``KafkaApis`` /
``ControllerApis``.

The rules are :mod:`lethe_reference.cluster.scram_credentials`; this module is the wire:

* DescribeUserScramCredentials needs DESCRIBE on the cluster (else
  CLUSTER_AUTHORIZATION_FAILED (31), null message, on the request and on one result
  per requested user, each with an empty user name: ``getErrorResponse``). Users
  null or empty: every user with a credential. Per user (``ScramImage.describe``), in
  ``HashMap<String, Boolean>`` order: a name requested twice DUPLICATE_RESOURCE (92)
  "Cannot describe SCRAM credentials for the same user twice in a single request: U",
  a user without credential RESOURCE_NOT_FOUND (91) "Attempt to describe a user
  credential that does not exist: U", else its (mechanism, iterations) with an empty
  (not null) message, as the request's own message is empty. Kafka keeps the
  mechanisms in a ``HashMap`` keyed by an enum (identity hash codes: an order that
  changes from run to run); lethe takes SCRAM-SHA-256 before SCRAM-SHA-512, in the
  credential list and in the walk of every user for an empty request (the order the
  recorded Kafka 4.0.0 run showed).
* AlterUserScramCredentials needs ALTER on the cluster (else 31 for every user named,
  in name order, with the error's default message: Kafka's names the request object,
  text no other broker can reproduce). Results as ``alterCredentials`` builds them:
  the deletions done, then the upsertions done, then the failures, each group in
  ``HashMap<String, ...>`` order.

Credentials are shared by an ``EmbeddedCluster``: every running broker's store
gets each change.

Decided here (Kafka has no answer to copy): a describe with ``users`` null refused
for authorization makes Kafka's ``getErrorResponse`` throw a NullPointerException,
which its request handler logs, sending nothing, so the client waits for its request
timeout. lethe answers it as the empty list would be answered (31 on the request, no
results): the client learns what Kafka meant to tell it, at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import KafkaError
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    ScramUserResult,
)
from lethe_formats.protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    UserScramResult,
)

from lethe_reference.cluster import scram_credentials as rules
from lethe_reference.cluster.acl import AclOperation
from lethe_reference.cluster.group.support import java_string_hash
from lethe_reference.cluster.membership import cluster_brokers
from lethe_reference.handlers.authz import authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.java_order import java_hash_map_order
from lethe_reference.protocol.scram import ScramCredential

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["alter_error_response", "describe_error_response"]

_DUPLICATE_DESCRIBE = (
    "Cannot describe SCRAM credentials for the same user twice in a single request: "
)
_ABSENT = "Attempt to describe a user credential that does not exist: "
_TWICE = "A user credential cannot be altered twice in the same request"


def _java_order(names: list[str]) -> list[str]:
    return java_hash_map_order(names, java_string_hash)


# --- DescribeUserScramCredentials -----------------------------------------------------------


def _every_user(store: rules.ScramCredentialStore) -> list[str]:
    """The users in the order ``ScramImage.describe`` meets them: per mechanism
    (SCRAM-SHA-256 first, see the module docstring), its users' HashMap order."""
    out: list[str] = []
    for mechanism in rules.MECHANISM_TYPES.values():
        out += _java_order(list(store.users(mechanism)))
    return out


def describe_error_response(
    request: DescribeUserScramCredentialsRequest, code: ErrorCode, message: str | None
) -> DescribeUserScramCredentialsResponse:
    """``DescribeUserScramCredentialsRequest.getErrorResponse``: the error on the
    request and on one nameless result per requested user."""
    results = tuple(UserScramResult("", code, message, ()) for _ in request.users or ())
    return DescribeUserScramCredentialsResponse(0, code, message, results)


@handles(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, error_response=describe_error_response)
def handle_describe(
    broker: Broker, ctx: RequestContext, request: DescribeUserScramCredentialsRequest
) -> DescribeUserScramCredentialsResponse:
    if not authorize_cluster(broker, ctx, AclOperation.DESCRIBE):
        return describe_error_response(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    store = rules.scram_store(broker)
    twice: dict[str, bool] = {}
    if request.users:
        for wanted in request.users:
            twice[wanted.name] = wanted.name in twice
    else:
        twice = dict.fromkeys(_every_user(store), False)
    results = []
    for user in _java_order(list(twice)):
        infos = store.mechanisms_of(user)
        if twice[user]:
            code, message = ErrorCode.DUPLICATE_RESOURCE, _DUPLICATE_DESCRIBE + user
        elif not infos:
            code, message = ErrorCode.RESOURCE_NOT_FOUND, _ABSENT + user
        else:
            code, message = ErrorCode.NONE, ""
        shown = () if code else tuple(CredentialInfo(m, i) for m, i in infos)
        results.append(UserScramResult(user, code, message, shown))
    return DescribeUserScramCredentialsResponse(0, ErrorCode.NONE, "", tuple(results))


# --- AlterUserScramCredentials --------------------------------------------------------------


def alter_error_response(
    request: AlterUserScramCredentialsRequest, code: ErrorCode, message: str | None
) -> AlterUserScramCredentialsResponse:
    """``AlterUserScramCredentialsRequest.getErrorResponse``: every user named, sorted."""
    names = {d.name for d in request.deletions} | {u.name for u in request.upsertions}
    return AlterUserScramCredentialsResponse(
        0, tuple(ScramUserResult(name, code, message) for name in sorted(names))
    )


Changes = dict[rules.Key, ScramCredential | None]


class _Alteration:
    """One request's bookkeeping, as ``alterCredentials`` keeps it in three HashMaps."""

    def __init__(self, store: rules.ScramCredentialStore) -> None:
        self.store = store
        self.deletions: dict[str, rules.Key] = {}
        #: user -> (key, credential: None until derived from the salted password)
        self.upsertions: dict[str, tuple[rules.Key, ScramCredential | None]] = {}
        self.errors: dict[str, tuple[int, str | None]] = {}

    def fail(self, user: str, error: KafkaError) -> None:
        unknown = error.code == ErrorCode.UNKNOWN_SERVER_ERROR
        self.errors[user] = (error.code, None if unknown else error.message)

    def seen_again(self, user: str) -> bool:
        """True (and the user failed) when the user was named before."""
        if self.deletions.pop(user, None) is None and self.upsertions.pop(user, None) is None:
            return False
        self.errors[user] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
        return True

    def response(self) -> AlterUserScramCredentialsResponse:
        ok = ErrorCode.NONE
        results = [ScramUserResult(u, ok, None) for u in _java_order(list(self.deletions))]
        results += [ScramUserResult(u, ok, None) for u in _java_order(list(self.upsertions))]
        results += [ScramUserResult(u, *self.errors[u]) for u in _java_order(list(self.errors))]
        return AlterUserScramCredentialsResponse(0, tuple(results))


def _validated(alteration: _Alteration, request: AlterUserScramCredentialsRequest) -> None:
    for deletion in request.deletions:
        if deletion.name in alteration.errors or alteration.seen_again(deletion.name):
            continue
        try:
            mechanism = rules.check_deletion(alteration.store, deletion.name, deletion.mechanism)
            alteration.deletions[deletion.name] = (deletion.name, mechanism)
        except KafkaError as error:
            alteration.fail(deletion.name, error)
    for up in request.upsertions:
        if up.name in alteration.errors or alteration.seen_again(up.name):
            continue
        try:
            mechanism = rules.check_upsertion(up.name, up.mechanism, up.iterations)
        except KafkaError as error:
            alteration.fail(up.name, error)
            continue
        alteration.upsertions[up.name] = ((up.name, mechanism), None)
    # ``finishUpsertion`` runs over the accepted upsertions in their HashMap order
    # (which decides where a failure lands among the errors)
    accepted = {up.name: up for up in request.upsertions if up.name in alteration.upsertions}
    for name in _java_order(list(alteration.upsertions)):
        key, up = alteration.upsertions[name][0], accepted[name]
        try:
            credential = rules.credential_from_salted(
                key[1], up.salt, up.salted_password, up.iterations
            )
            alteration.upsertions[name] = (key, credential)
        except KafkaError as error:
            del alteration.upsertions[name]
            alteration.fail(name, error)


@handles(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, error_response=alter_error_response)
def handle_alter(
    broker: Broker, ctx: RequestContext, request: AlterUserScramCredentialsRequest
) -> AlterUserScramCredentialsResponse:
    if not authorize_cluster(broker, ctx, AclOperation.ALTER):
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return alter_error_response(request, denied, denied.message)
    alteration = _Alteration(rules.scram_store(broker))
    _validated(alteration, request)
    changes: Changes = dict.fromkeys(alteration.deletions.values())
    for key, credential in alteration.upsertions.values():
        changes[key] = credential
    if changes:
        for peer in cluster_brokers(broker):
            rules.scram_store(peer).apply(changes)
    return alteration.response()
