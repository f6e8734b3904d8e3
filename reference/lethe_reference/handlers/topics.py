"""CreateTopics (19), DeleteTopics (20) and CreatePartitions (37), as a KRaft controller.

Theory of operation
-------------------
In Kafka 4.0 a broker forwards these requests to the controller; the
reference broker is its own controller, so each handler runs the controller's
logic (``ControllerApis`` + ``ReplicationControlManager``) and applies the
result at once: logs are created or renamed ``-delete`` before the response
leaves, where Kafka would do it moments later.

CreateTopics: names given twice get INVALID_REQUEST ``Duplicate topic name.``
and ``__cluster_metadata`` gets INVALID_REQUEST ``Creation of internal topic
__cluster_metadata is prohibited.``; both are listed after the other topics. The
rest go through :func:`~.topic_creation.plan_topic` in request order. A request
whose topics would need more than 10000 metadata records fails as a whole with
POLICY_VIOLATION ``Unable to perform excessively large batch operation.``.
Successes (and ``validate_only`` ones, which create nothing) carry a topic id
(v7+) and, from v5, the partition count, replication factor and effective
configs.

Authorization (only with an authorizer, :mod:`.topic_access`): CreateTopics
needs CREATE on the cluster or the topic (refusals listed after the duplicates;
a created topic's configs only with DESCRIBE_CONFIGS on it), DeleteTopics DESCRIBE (else 29
before existence) and DELETE on the topic, CreatePartitions ALTER on the
topic (29, null message, after the duplicates and before the others).

DeleteTopics: topics by name (v0-5 ``topic_names``, v6 ``topics[].name``) or by
id (v6). Neither or both given, duplicates, a name that maps to an id also
given: INVALID_REQUEST with Kafka's messages; unknown name
UNKNOWN_TOPIC_OR_PARTITION, unknown id UNKNOWN_TOPIC_ID, each with the
error's default message. With ``delete.topic.enable=false`` every topic gets
TOPIC_DELETION_DISABLED (v3+) or INVALID_REQUEST (v0-2). Kafka shuffles the
results "so that users can not use patterns in their positions"; lethe keeps
the order Kafka builds them in before the shuffle (errors of the request's
shape, then lookups, then deletions), which is one of the orders Kafka can send.

CreatePartitions: duplicates first (INVALID_REQUEST ``Duplicate topic name.``),
then per topic, both in the iteration order of the Java HashSets Kafka collects
the names in (:mod:`.java_order`; it decides which topic meets the 10,000-record
bound of :mod:`.controller_bounds` first): unknown UNKNOWN_TOPIC_OR_PARTITION
(no message), a count equal to the current one INVALID_PARTITIONS ``Topic
already has N partition(s).``, a smaller one ``The topic T currently has N
partition(s); M would not be an increase.`` (kafka-facts section 6: partitions
are never removed), assignments that do not match the number of new partitions
INVALID_REPLICA_ASSIGNMENT.
KIP-694: a topic whose partitions are pending deletion gets INVALID_PARTITIONS
"... is currently under changes" until the deletion completes (catalog
KIP694-ERR-5); the count check above is unchanged (KIP694-ERR-8).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
    CreatePartitionsTopicResult,
)
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.delete_topics import (
    DeletableTopicResult,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from lethe_formats.protocol.schema import ZERO_UUID
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_reference.handlers import topic_access
from lethe_reference.handlers.after_jobs import reply_after
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.controller_bounds import RecordBudget, check_partitions_per_request
from lethe_reference.handlers.delete_partitions import UNDER_CHANGE
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.java_order import java_hash_set_order
from lethe_reference.handlers.metadata import to_protocol_uuid
from lethe_reference.handlers.topic_creation import (
    MAX_RECORDS_PER_USER_OP,
    TopicError,
    TopicPlan,
    effective_configs,
    plan_topic,
)
from lethe_reference.handlers.topic_deletion import resolve_deletions
from lethe_reference.log_creation import LogCreation
from lethe_reference.metadata import TopicInfo, new_topic_id
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["CLUSTER_METADATA_TOPIC", "create_partitions", "create_topics", "delete_topics"]

CLUSTER_METADATA_TOPIC = "__cluster_metadata"
_TOO_LARGE = "Unable to perform excessively large batch operation."


# --- CreateTopics -------------------------------------------------------------------------


def _create_error(
    request: CreateTopicsRequest, code: ErrorCode, message: str | None
) -> CreateTopicsResponse:
    """``CreateTopicsRequest.getErrorResponse``: every topic gets the error."""
    return CreateTopicsResponse(
        topics=tuple(
            CreatableTopicResult(name=t.name, error_code=code, error_message=message)
            for t in request.topics
        )
    )


def _failure(name: str, code: ErrorCode, message: str | None) -> CreatableTopicResult:
    return CreatableTopicResult(name=name, error_code=code, error_message=message)


def _plan(broker: Broker, topic: CreatableTopic) -> TopicPlan:
    return plan_topic(
        broker,
        topic.name,
        num_partitions=topic.num_partitions,
        replication_factor=topic.replication_factor,
        configs=[(c.name, c.value) for c in topic.configs],
        assignments=[(a.partition_index, a.broker_ids) for a in topic.assignments],
    )


def _success(broker: Broker, plan: TopicPlan, topic_id: KafkaUuid) -> CreatableTopicResult:
    configs = tuple(
        CreatableTopicConfigs(
            name=entry.name,
            value=entry.value,
            read_only=False,
            config_source=int(entry.source),
            is_sensitive=False,
        )
        for entry in effective_configs(broker, plan.configs)
    )
    return CreatableTopicResult(
        name=plan.name,
        topic_id=to_protocol_uuid(topic_id),
        error_code=ErrorCode.NONE,
        error_message=None,
        topic_config_error_code=ErrorCode.NONE,
        num_partitions=plan.partitions,
        replication_factor=plan.replication_factor,
        configs=configs,
    )


def _split_names(topics: tuple[CreatableTopic, ...]) -> tuple[list[CreatableTopic], list[str]]:
    """(topics to try, in order; names given more than once, in first-seen order)."""
    counts: dict[str, int] = {}
    for topic in topics:
        counts[topic.name] = counts.get(topic.name, 0) + 1
    duplicates = [name for name, count in counts.items() if count > 1]
    return [t for t in topics if counts[t.name] == 1], duplicates


@handles(ApiKey.CREATE_TOPICS, error_response=_create_error)
def create_topics(
    broker: Broker, ctx: RequestContext, request: CreateTopicsRequest
) -> CreateTopicsResponse | Deferred[CreateTopicsResponse]:
    candidates, duplicates = _split_names(request.topics)
    allowed = [t for t in candidates if t.name != CLUSTER_METADATA_TOPIC]
    results: list[CreatableTopicResult] = []
    plans: list[TopicPlan] = []
    may_create = topic_access.creatable(broker, ctx, (t.name for t in allowed))
    denied = [t.name for t in allowed if t.name not in may_create]
    check_partitions_per_request(broker, (t for t in allowed if t.name in may_create))
    for topic in allowed:
        if topic.name not in may_create:
            continue
        try:
            plans.append(_plan(broker, topic))
            results.append(CreatableTopicResult(name=topic.name))  # filled in below
        except TopicError as error:
            results.append(_failure(topic.name, error.code, error.message))
    if sum(plan.records for plan in plans) > MAX_RECORDS_PER_USER_OP:
        raise error_for_code(ErrorCode.POLICY_VIOLATION, _TOO_LARGE)
    done = iter(plans)
    jobs: list[LogCreation] = []
    for index, result in enumerate(results):
        if result.error_code == ErrorCode.NONE:
            created = _create(broker, next(done), request.validate_only, jobs)
            if not topic_access.configs_visible(broker, ctx, created.name):
                created = _configs_hidden(created)
            results[index] = created
    results += [_failure(n, ErrorCode.INVALID_REQUEST, "Duplicate topic name.") for n in duplicates]
    if any(t.name == CLUSTER_METADATA_TOPIC for t in candidates):
        message = f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is prohibited."
        results.append(_failure(CLUSTER_METADATA_TOPIC, ErrorCode.INVALID_REQUEST, message))
    refused = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    results += [_failure(n, refused, topic_access.CREATE_DENIED) for n in denied]
    return reply_after(broker, jobs, CreateTopicsResponse(topics=tuple(results)))


def _configs_hidden(result: CreatableTopicResult) -> CreatableTopicResult:
    """A created topic the principal may not DESCRIBE_CONFIGS: no configs, counts -1."""
    return replace(
        result,
        topic_config_error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        num_partitions=-1,
        replication_factor=-1,
        configs=(),
    )


def _create(
    broker: Broker, plan: TopicPlan, validate_only: bool, jobs: list[LogCreation]
) -> CreatableTopicResult:
    """Register the topic; its logs are left to a job the response waits for."""
    if validate_only:
        return _success(broker, plan, new_topic_id())
    wanted = TopicInfo(plan.name, new_topic_id(), plan.partitions, dict(plan.configs))
    info, job = broker.begin_create_topic(wanted, plan.replication_factor)
    jobs.append(job)
    return _success(broker, plan, info.topic_id)


# --- DeleteTopics -------------------------------------------------------------------------


def _delete_error(
    request: DeleteTopicsRequest, code: ErrorCode, message: str | None
) -> DeleteTopicsResponse:
    """``DeleteTopicsRequest.getErrorResponse``: every topic gets the code (no message)."""
    named = [DeletableTopicResult(name=name, error_code=code) for name in request.topic_names]
    by_state = [
        DeletableTopicResult(name=t.name, topic_id=t.topic_id, error_code=code)
        for t in request.topics
    ]
    return DeleteTopicsResponse(responses=tuple(named + by_state))


@handles(ApiKey.DELETE_TOPICS, error_response=_delete_error)
def delete_topics(
    broker: Broker, ctx: RequestContext, request: DeleteTopicsRequest
) -> DeleteTopicsResponse:
    if not broker.config.get_bool("delete.topic.enable"):
        if ctx.api_version < 3:
            raise error_for_code(ErrorCode.INVALID_REQUEST, "Topic deletion is disabled.")
        raise error_for_code(ErrorCode.TOPIC_DELETION_DISABLED)
    states = [(t.name, KafkaUuid(t.topic_id.bytes)) for t in request.topics]
    rights = topic_access.deletion_rights(broker, ctx)
    results, to_delete = resolve_deletions(broker, request.topic_names, states, rights)
    out = [
        DeletableTopicResult(
            name=r.name,
            topic_id=ZERO_UUID if r.topic_id is None else to_protocol_uuid(r.topic_id),
            error_code=r.code,
            error_message=r.message,
        )
        for r in results
    ]
    for name in to_delete:
        info = broker.delete_topic(name)
        if info is not None:
            out.append(
                DeletableTopicResult(
                    name=name, topic_id=to_protocol_uuid(info.topic_id), error_code=ErrorCode.NONE
                )
            )
    return DeleteTopicsResponse(responses=tuple(out))


# --- CreatePartitions ---------------------------------------------------------------------


def _partitions_error(
    request: CreatePartitionsRequest, code: ErrorCode, message: str | None
) -> CreatePartitionsResponse:
    return CreatePartitionsResponse(
        results=tuple(
            CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=message)
            for t in request.topics
        )
    )


def _grow(
    broker: Broker, topic: CreatePartitionsTopic, validate_only: bool, budget: RecordBudget
) -> LogCreation | None:
    """``ReplicationControlManager.createPartitions`` for one topic; raises TopicError.
    The new logs are left to the returned job."""
    info = broker.metadata.get(topic.name)
    if info is None:
        raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
    if info.reduction is not None:
        raise TopicError(ErrorCode.INVALID_PARTITIONS, UNDER_CHANGE.format(name=topic.name))
    current = info.partitions
    if topic.count == current:
        raise TopicError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    if topic.count < current:
        raise TopicError(
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {topic.name} currently has {current} partition(s); "
            f"{topic.count} would not be an increase.",
        )
    additional = topic.count - current
    if topic.assignments is not None:
        if len(topic.assignments) != additional:
            raise TopicError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {additional} additional partition(s), but only "
                f"{len(topic.assignments)} assignment(s) were specified.",
            )
        for assignment in topic.assignments:
            _check_assignment(broker, assignment.broker_ids)
    if not budget.take(additional):  # controller_bounds: Kafka's code, no message
        raise TopicError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
    if validate_only:
        return None
    return broker.begin_create_partitions(topic.name, topic.count)[1]


def _check_assignment(broker: Broker, replicas: tuple[int, ...]) -> None:
    """``validateManualPartitionAssignment`` with the topic's replication factor (1)."""
    if not replicas:
        raise TopicError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes an empty replica list.",
        )
    for broker_id in sorted(replicas):
        if broker_id != broker.node_id:
            raise TopicError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker {broker_id}, but no such "
                "broker is registered.",
            )
    if len(replicas) > 1:
        raise TopicError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"The manual partition assignment includes the broker {broker.node_id} more than once.",
        )


@handles(ApiKey.CREATE_PARTITIONS, error_response=_partitions_error)
def create_partitions(
    broker: Broker, ctx: RequestContext, request: CreatePartitionsRequest
) -> CreatePartitionsResponse | Deferred[CreatePartitionsResponse]:
    seen: set[str] = set()
    repeated: list[str] = []  # in the order the second mention is met
    for topic in request.topics:
        if topic.name in seen:
            repeated.append(topic.name)
        seen.add(topic.name)
    results = [
        CreatePartitionsTopicResult(
            name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name."
        )
        for name in java_hash_set_order(repeated)
    ]
    by_name = {topic.name: topic for topic in reversed(request.topics)}  # the first mention
    allowed: list[str] = []
    for name in java_hash_set_order((t.name for t in request.topics), removed=set(repeated)):
        if topic_access.alterable(broker, ctx, name):
            allowed.append(name)
        else:
            denied = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            results.append(CreatePartitionsTopicResult(name=name, error_code=denied))
    budget = RecordBudget()
    jobs: list[LogCreation] = []
    for name in allowed:
        topic = by_name[name]
        try:
            job = _grow(broker, topic, request.validate_only, budget)
            jobs.extend([] if job is None else [job])
            results.append(CreatePartitionsTopicResult(name=topic.name, error_code=ErrorCode.NONE))
        except TopicError as error:
            results.append(
                CreatePartitionsTopicResult(
                    name=topic.name, error_code=error.code, error_message=error.message
                )
            )
    return reply_after(broker, jobs, CreatePartitionsResponse(results=tuple(results)))
