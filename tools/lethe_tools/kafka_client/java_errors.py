"""Kafka error codes as the Java client names them: ``org.apache.kafka.common.errors.*``.

Why this exists
---------------
Kafka's command-line tools print failures as Java exceptions: the Java admin
turns a response's error code into ``Errors.forCode(code).exception()`` and
``kafka-delete-records.sh`` prints ``ExecutionException.getMessage()``, which is
the cause's ``toString()``::

    org.apache.kafka.common.errors.PolicyViolationException: Request parameters do not ...
    |<------- package ------------>| |<--- class name ---->|  |<- Errors default message ->

lethe's tools print the same text, so this module keeps the one fact the
protocol table (:mod:`lethe_formats.protocol.error_codes`) does not: the Java
exception class of each code in Kafka 4.0's ``Errors`` enum. The default
messages and the retriable flags come from that table, not from here.

Codes Kafka's client does not know become ``UNKNOWN_SERVER_ERROR``
(``Errors.forCode`` logs "Unexpected error code" and does the same).

:data:`INVALID_METADATA_CODES` lists the codes whose exception extends
``InvalidMetadataException``: the Java admin answers those by looking the
partition leader up again rather than by retrying the same broker.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.error_codes import ErrorCode, known_code

__all__ = [
    "INVALID_METADATA_CODES",
    "JAVA_EXCEPTION_CLASSES",
    "JavaException",
    "java_exception",
    "java_exception_class",
]

_ERRORS_PACKAGE = "org.apache.kafka.common.errors"
#: The one exception of the enum that lives outside ``common.errors``.
_OTHER_PACKAGES = {"InvalidRecordException": "org.apache.kafka.common"}

#: Error code -> simple name of the exception class ``Errors`` builds for it.
JAVA_EXCEPTION_CLASSES: dict[int, str] = {
    -1: "UnknownServerException",
    1: "OffsetOutOfRangeException",
    2: "CorruptRecordException",
    3: "UnknownTopicOrPartitionException",
    4: "InvalidFetchSizeException",
    5: "LeaderNotAvailableException",
    6: "NotLeaderOrFollowerException",
    7: "TimeoutException",
    8: "BrokerNotAvailableException",
    9: "ReplicaNotAvailableException",
    10: "RecordTooLargeException",
    11: "ControllerMovedException",
    12: "OffsetMetadataTooLarge",
    13: "NetworkException",
    14: "CoordinatorLoadInProgressException",
    15: "CoordinatorNotAvailableException",
    16: "NotCoordinatorException",
    17: "InvalidTopicException",
    18: "RecordBatchTooLargeException",
    19: "NotEnoughReplicasException",
    20: "NotEnoughReplicasAfterAppendException",
    21: "InvalidRequiredAcksException",
    22: "IllegalGenerationException",
    23: "InconsistentGroupProtocolException",
    24: "InvalidGroupIdException",
    25: "UnknownMemberIdException",
    26: "InvalidSessionTimeoutException",
    27: "RebalanceInProgressException",
    28: "InvalidCommitOffsetSizeException",
    29: "TopicAuthorizationException",
    30: "GroupAuthorizationException",
    31: "ClusterAuthorizationException",
    32: "InvalidTimestampException",
    33: "UnsupportedSaslMechanismException",
    34: "IllegalSaslStateException",
    35: "UnsupportedVersionException",
    36: "TopicExistsException",
    37: "InvalidPartitionsException",
    38: "InvalidReplicationFactorException",
    39: "InvalidReplicaAssignmentException",
    40: "InvalidConfigurationException",
    41: "NotControllerException",
    42: "InvalidRequestException",
    43: "UnsupportedForMessageFormatException",
    44: "PolicyViolationException",
    45: "OutOfOrderSequenceException",
    46: "DuplicateSequenceException",
    47: "InvalidProducerEpochException",
    48: "InvalidTxnStateException",
    49: "InvalidPidMappingException",
    50: "InvalidTxnTimeoutException",
    51: "ConcurrentTransactionsException",
    52: "TransactionCoordinatorFencedException",
    53: "TransactionalIdAuthorizationException",
    54: "SecurityDisabledException",
    55: "OperationNotAttemptedException",
    56: "KafkaStorageException",
    57: "LogDirNotFoundException",
    58: "SaslAuthenticationException",
    59: "UnknownProducerIdException",
    60: "ReassignmentInProgressException",
    61: "DelegationTokenDisabledException",
    62: "DelegationTokenNotFoundException",
    63: "DelegationTokenOwnerMismatchException",
    64: "UnsupportedByAuthenticationException",
    65: "DelegationTokenAuthorizationException",
    66: "DelegationTokenExpiredException",
    67: "InvalidPrincipalTypeException",
    68: "GroupNotEmptyException",
    69: "GroupIdNotFoundException",
    70: "FetchSessionIdNotFoundException",
    71: "InvalidFetchSessionEpochException",
    72: "ListenerNotFoundException",
    73: "TopicDeletionDisabledException",
    74: "FencedLeaderEpochException",
    75: "UnknownLeaderEpochException",
    76: "UnsupportedCompressionTypeException",
    77: "StaleBrokerEpochException",
    78: "OffsetNotAvailableException",
    79: "MemberIdRequiredException",
    80: "PreferredLeaderNotAvailableException",
    81: "GroupMaxSizeReachedException",
    82: "FencedInstanceIdException",
    83: "EligibleLeadersNotAvailableException",
    84: "ElectionNotNeededException",
    85: "NoReassignmentInProgressException",
    86: "GroupSubscribedToTopicException",
    87: "InvalidRecordException",
    88: "UnstableOffsetCommitException",
    89: "ThrottlingQuotaExceededException",
    90: "ProducerFencedException",
    91: "ResourceNotFoundException",
    92: "DuplicateResourceException",
    93: "UnacceptableCredentialException",
    94: "InconsistentVoterSetException",
    95: "InvalidUpdateVersionException",
    96: "FeatureUpdateFailedException",
    97: "PrincipalDeserializationException",
    98: "SnapshotNotFoundException",
    99: "PositionOutOfRangeException",
    100: "UnknownTopicIdException",
    101: "DuplicateBrokerRegistrationException",
    102: "BrokerIdNotRegisteredException",
    103: "InconsistentTopicIdException",
    104: "InconsistentClusterIdException",
    105: "TransactionalIdNotFoundException",
    106: "FetchSessionTopicIdException",
    107: "IneligibleReplicaException",
    108: "NewLeaderElectedException",
    109: "OffsetMovedToTieredStorageException",
    110: "FencedMemberEpochException",
    111: "UnreleasedInstanceIdException",
    112: "UnsupportedAssignorException",
    113: "StaleMemberEpochException",
    114: "MismatchedEndpointTypeException",
    115: "UnsupportedEndpointTypeException",
    116: "UnknownControllerIdException",
    117: "UnknownSubscriptionIdException",
    118: "TelemetryTooLargeException",
    119: "InvalidRegistrationException",
    120: "TransactionAbortableException",
    121: "InvalidRecordStateException",
    122: "ShareSessionNotFoundException",
    123: "InvalidShareSessionEpochException",
    124: "FencedStateEpochException",
    125: "InvalidVoterKeyException",
    126: "DuplicateVoterException",
    127: "VoterNotFoundException",
    128: "InvalidRegularExpression",
    129: "RebootstrapRequiredException",
}

#: Codes whose Java exception is an ``InvalidMetadataException``.
INVALID_METADATA_CODES: frozenset[int] = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.REPLICA_NOT_AVAILABLE,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.KAFKA_STORAGE_ERROR,
        ErrorCode.LISTENER_NOT_FOUND,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
        ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
        ErrorCode.ELECTION_NOT_NEEDED,
        ErrorCode.UNKNOWN_TOPIC_ID,
        ErrorCode.INCONSISTENT_TOPIC_ID,
    }
)


@dataclass(frozen=True, slots=True)
class JavaException:
    """A Java exception as a Kafka tool prints it: ``str()`` is ``toString()``."""

    class_name: str  # fully qualified
    message: str

    def __str__(self) -> str:
        return f"{self.class_name}: {self.message}" if self.message else self.class_name

    @property
    def simple_name(self) -> str:
        return self.class_name.rpartition(".")[2]


def java_exception_class(code: int) -> str:
    """The fully qualified Java class of ``code`` (unknown codes: UnknownServerException)."""
    if code == ErrorCode.NONE:
        raise ValueError("error code 0 (NONE) has no exception")
    name = JAVA_EXCEPTION_CLASSES.get(code, JAVA_EXCEPTION_CLASSES[ErrorCode.UNKNOWN_SERVER_ERROR])
    return f"{_OTHER_PACKAGES.get(name, _ERRORS_PACKAGE)}.{name}"


def java_exception(code: int, message: str | None = None) -> JavaException:
    """``Errors.forCode(code).exception(message)``: the default message when None."""
    member = known_code(code) or ErrorCode.UNKNOWN_SERVER_ERROR
    text = member.message if message is None else message
    return JavaException(java_exception_class(member.value), text)
