"""SCRAM credentials in an EmbeddedCluster: an AlterUserScramCredentials sent to any
broker reaches every running broker (as every Kafka broker replays the controller's
credential records), and each keeps them in its own log dir, where its SCRAM
authenticator looks users up."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cluster_support import connect, running_cluster
from lethe_formats.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    ScramUpsertion,
)
from lethe_formats.protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    ScramUserName,
    UserScramResult,
)
from lethe_reference.cluster.scram_credentials import scram_store

SALT = b"cluster-salt"


def test_an_alteration_on_one_broker_reaches_every_broker(tmp_path: Path) -> None:
    salted = hashlib.pbkdf2_hmac("sha512", b"alice-secret", SALT, 5000)
    upsert = ScramUpsertion("alice", 2, 5000, SALT, salted)
    with running_cluster(tmp_path) as cluster:
        with connect(cluster, 2) as conn:
            answer = conn.request(AlterUserScramCredentialsRequest((), (upsert,)), version=0)
        assert [(r.user, r.error_code) for r in answer.results] == [("alice", 0)]
        for node in (1, 2, 3):
            with connect(cluster, node) as conn:
                described = conn.request(
                    DescribeUserScramCredentialsRequest((ScramUserName("alice"),)), version=0
                )
            assert described.results == (
                UserScramResult("alice", 0, "", (CredentialInfo(2, 5000),)),
            ), node
            store = cluster.call(lambda n=node: scram_store(cluster.broker(n)))
            assert ("alice", "SCRAM-SHA-512") in store.credentials
            assert (cluster.broker(node).log_dir / "scram-credentials.json").exists()
