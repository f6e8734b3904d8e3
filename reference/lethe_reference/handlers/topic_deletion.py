"""Which topics a DeleteTopics request deletes, and the errors for the rest.

``ControllerApis.deleteTopics`` resolves names and ids and authorizes them
before anything is deleted (:class:`Rights` says which names the principal may
DESCRIBE and DELETE; without an authorizer, all)::

    topic_names (v0-5) and topics[] with a name and no id   -> names
    topics[] with an id and no name (v6)                    -> ids
    topics[] with neither        INVALID_REQUEST "Neither topic name nor id were specified."
    topics[] with both           INVALID_REQUEST "You may not specify both topic name and topic id."
    a name given twice           INVALID_REQUEST "Duplicate topic name."
    an id given twice            INVALID_REQUEST "Duplicate topic id."
    an unknown id                UNKNOWN_TOPIC_ID (its default message)
    an unknown name              UNKNOWN_TOPIC_OR_PARTITION (its default message)
    a known id, no DELETE        TOPIC_AUTHORIZATION_FAILED with the name when the
                                 principal may DESCRIBE it, else with a null name
    a name, no DESCRIBE          TOPIC_AUTHORIZATION_FAILED, zero id (before existence,
                                 so absent and hidden topics look alike)
    an unknown name              UNKNOWN_TOPIC_OR_PARTITION (its default message)
    a name, no DELETE            TOPIC_AUTHORIZATION_FAILED, zero id
    a name whose id was given    INVALID_REQUEST "The provided topic name maps to an ID
                                 that was already supplied." (and the id is not deleted;
                                 only when both are authorized, so no mapping leaks)

TOPIC_AUTHORIZATION_FAILED carries its default message ``Topic authorization
failed.`` (``new ApiError(TOPIC_AUTHORIZATION_FAILED)``). Results come in that
order: shape errors as met, duplicates, id lookups, id refusals, name lookups;
the topics left are deleted (ids first, then names).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.storage.kafka_uuid import ZERO_UUID, KafkaUuid

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["ALL_RIGHTS", "DeletionError", "Rights", "resolve_deletions"]


@dataclass(frozen=True)
class DeletionError:
    name: str | None
    topic_id: KafkaUuid | None
    code: ErrorCode
    message: str | None


@dataclass(frozen=True)
class Rights:
    """Whether the principal may DESCRIBE / DELETE a topic, by name."""

    may_describe: Callable[[str], bool]
    may_delete: Callable[[str], bool]


ALL_RIGHTS = Rights(lambda _: True, lambda _: True)
_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


def _denied(name: str | None, topic_id: KafkaUuid) -> DeletionError:
    return DeletionError(name, topic_id, _DENIED, _DENIED.message)


def _request_error(name: str | None, topic_id: KafkaUuid | None, message: str) -> DeletionError:
    return DeletionError(name, topic_id, ErrorCode.INVALID_REQUEST, message)


class _Provided:
    """Insertion-ordered sets of given names and ids, with their duplicates."""

    def __init__(self) -> None:
        self.names: dict[str, None] = {}
        self.duplicate_names: dict[str, None] = {}
        self.ids: dict[KafkaUuid, None] = {}
        self.duplicate_ids: dict[KafkaUuid, None] = {}

    def add_name(self, name: str) -> None:
        if name in self.duplicate_names or name in self.names:
            self.duplicate_names[name] = None
            self.names.pop(name, None)
        else:
            self.names[name] = None

    def add_id(self, topic_id: KafkaUuid) -> None:
        if topic_id in self.duplicate_ids or topic_id in self.ids:
            self.duplicate_ids[topic_id] = None
            self.ids.pop(topic_id, None)
        else:
            self.ids[topic_id] = None


def resolve_deletions(
    broker: Broker,
    topic_names: Sequence[str],
    states: Sequence[tuple[str | None, KafkaUuid]],
    rights: Rights = ALL_RIGHTS,
) -> tuple[list[DeletionError], list[str]]:
    """(errors, names of the topics to delete); see the module docstring."""
    errors: list[DeletionError] = []
    given = _provided(topic_names, states, errors)
    errors += [_request_error(n, ZERO_UUID, "Duplicate topic name.") for n in given.duplicate_names]
    errors += [_request_error(None, i, "Duplicate topic id.") for i in given.duplicate_ids]
    id_to_name: dict[KafkaUuid, str] = {}
    for topic_id in given.ids:
        info = broker.metadata.by_id(topic_id)
        if info is None:
            code = ErrorCode.UNKNOWN_TOPIC_ID
            errors.append(DeletionError(None, topic_id, code, code.message))
        elif not rights.may_delete(info.name):
            errors.append(_denied(info.name if rights.may_describe(info.name) else None, topic_id))
        else:
            id_to_name[topic_id] = info.name
    for wanted in given.names:
        errors += _by_name(broker, wanted, given, id_to_name, rights)
    return errors, list(id_to_name.values())


def _provided(
    topic_names: Sequence[str],
    states: Sequence[tuple[str | None, KafkaUuid]],
    errors: list[DeletionError],
) -> _Provided:
    """The names and ids given, with the errors of the request's shape appended."""
    given = _Provided()
    for listed in topic_names:
        given.add_name(listed)
    for name, topic_id in states:
        if name is None and topic_id == ZERO_UUID:
            errors.append(
                _request_error(None, ZERO_UUID, "Neither topic name nor id were specified.")
            )
        elif name is None:
            given.add_id(topic_id)
        elif topic_id == ZERO_UUID:
            given.add_name(name)
        else:
            errors.append(
                _request_error(name, topic_id, "You may not specify both topic name and topic id.")
            )
    return given


def _by_name(
    broker: Broker,
    wanted: str,
    given: _Provided,
    id_to_name: dict[KafkaUuid, str],
    rights: Rights,
) -> list[DeletionError]:
    """One topic given by name: its error, or none (it joins ``id_to_name``)."""
    if not rights.may_describe(wanted):
        return [_denied(wanted, ZERO_UUID)]
    found = broker.metadata.get(wanted)
    if found is None:
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return [DeletionError(wanted, ZERO_UUID, code, code.message)]
    if not rights.may_delete(wanted):
        return [_denied(wanted, ZERO_UUID)]
    if found.topic_id in given.duplicate_ids or found.topic_id in id_to_name:
        given.duplicate_ids[found.topic_id] = None
        id_to_name.pop(found.topic_id, None)
        message = "The provided topic name maps to an ID that was already supplied."
        return [_request_error(wanted, found.topic_id, message)]
    id_to_name[found.topic_id] = wanted
    return []
