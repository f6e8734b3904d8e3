"""Targets declare what they can do, discover what they offer, and act through their hooks."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_broker import FakeBroker, api_versions_body, response_frame
from lethe_conformance.client import AuthenticationError, PlainCredentials, calls
from lethe_conformance.client.batches import build_records, visible_records
from lethe_conformance.targets import (
    ALL_CAPABILITIES,
    BootstrapTarget,
    Capabilities,
    CapabilityMissingError,
    ControlError,
    ControlHook,
    parse_bootstrap,
)
from lethe_conformance.targets.embedded import DEFAULT_START_MS, EmbeddedTarget
from lethe_conformance.targets.profiles import discover_profiles
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersion
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
)
from lethe_formats.protocol.messages.metadata import MetadataResponse, MetadataResponseTopic
from lethe_formats.protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from lethe_formats.protocol.messages.sasl_handshake import SaslHandshakeResponse
from lethe_formats.records.builder import RecordSpec


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as target:
        yield target


# --- the embedded target ------------------------------------------------------------------


def test_the_embedded_target_has_every_capability(embedded: EmbeddedTarget) -> None:
    caps = embedded.capabilities
    assert caps.clock == "virtual"
    assert caps.log_dir is not None and (caps.log_dir / "meta.properties").is_file()
    assert caps.names() == ALL_CAPABILITIES
    embedded.trigger_cleaning()  # the reference broker's cleaner runs (nothing to clean yet)


#: The embedded reference broker offers every profile: the adopted KIPs, the extension
#: topic configs (kip68, kip87) and, switched on by the target, DeletePartitions (kip694).
ALL_PROFILES = {"kip107", "kip534", "kip68", "kip694", "kip87"}


def test_the_embedded_target_offers_every_profile(embedded: EmbeddedTarget) -> None:
    assert embedded.profiles() == ALL_PROFILES


def test_advance_time_moves_the_brokers_clock(embedded: EmbeddedTarget) -> None:
    """A LogAppendTime topic stamps records with the broker's clock: start + advanced."""
    with embedded.connect() as conn:
        calls.create_topic(conn, "clock", 1, {"message.timestamp.type": "LogAppendTime"})
        calls.produce(conn, "clock", 0, build_records([RecordSpec(b"k", b"v", timestamp=1)]))
        first = visible_records(
            calls.fetch(conn, "clock", 0, 0).responses[0].partitions[0].records, 0
        )
    embedded.advance_time(86_400_000)
    with embedded.connect() as conn:
        calls.produce(conn, "clock", 0, build_records([RecordSpec(b"k", b"v", timestamp=1)]))
        second = visible_records(
            calls.fetch(conn, "clock", 0, 1).responses[0].partitions[0].records, 1
        )
    assert first[0].timestamp >= DEFAULT_START_MS
    assert second[0].timestamp - first[0].timestamp == 86_400_000


def test_restart_serves_the_same_data_on_the_same_address(embedded: EmbeddedTarget) -> None:
    with embedded.connect() as conn:
        calls.create_topic(conn, "kept", 1, {})
        calls.produce(conn, "kept", 0, build_records([RecordSpec(b"k", b"v", timestamp=1)] * 3))
    address = embedded.bootstrap
    embedded.restart()
    assert embedded.bootstrap == address
    with embedded.connect() as conn:
        latest = calls.list_offsets(conn, [("kept", 0, -1)]).topics[0].partitions[0]
    assert latest.offset == 3


def test_an_owned_log_dir_is_removed_on_close_and_a_given_one_kept(tmp_path: Path) -> None:
    owned = EmbeddedTarget().start()
    owned_dir = owned.capabilities.log_dir
    owned.close()
    assert owned_dir is not None and not owned_dir.exists()
    with EmbeddedTarget(tmp_path / "dir") as given:
        assert given.capabilities.log_dir == tmp_path / "dir"
    assert (tmp_path / "dir" / "meta.properties").is_file()


# --- bootstrap targets ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "address", ["localhost", "localhost:", ":9092", "host:0", "host:99999", "h:x"]
)
def test_a_malformed_bootstrap_address_is_refused(address: str) -> None:
    with pytest.raises(ValueError, match="is not HOST:PORT"):
        parse_bootstrap(address)


def test_bootstrap_addresses_parse_with_ipv6_brackets() -> None:
    assert parse_bootstrap("[::1]:9092") == ("::1", 9092)
    assert parse_bootstrap("broker-1.example:19092") == ("broker-1.example", 19092)


def test_a_bare_bootstrap_target_is_wall_clock_without_log_dir_or_restart() -> None:
    target = BootstrapTarget("127.0.0.1:9092")
    assert target.capabilities == Capabilities()
    assert target.capabilities.names() == frozenset()
    for action in (lambda: target.advance_time(5), target.restart, target.trigger_cleaning):
        with pytest.raises(CapabilityMissingError):
            action()


def hook_script(tmp_path: Path, exit_code: int = 0) -> list[str]:
    """A control hook that appends its arguments to calls.jsonl and exits ``exit_code``."""
    script = tmp_path / "hook.py"
    log = tmp_path / "calls.jsonl"
    script.write_text(
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "print('hook says no', file=sys.stderr)\n"
        f"sys.exit({exit_code})\n"
    )
    return [sys.executable, str(script)]


def hook_calls(tmp_path: Path) -> list[list[str]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def test_the_control_hook_is_called_with_each_action(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    hook = ControlHook.parse(hook_script(tmp_path))
    target = BootstrapTarget(embedded.bootstrap, log_dir=tmp_path, control=hook)
    # edit-log-dir, own-log-dir, crash and inject-failure need a broker the runner starts
    # itself: never a hook's; principals needs two sets of SASL credentials, which this
    # target was not given
    assert target.capabilities.names() == ALL_CAPABILITIES - {
        "crash",
        "edit-log-dir",
        "own-log-dir",
        "inject-failure",
        "principals",
        "cluster-control",
    }
    target.advance_time(1500)
    target.trigger_cleaning()
    target.restart()  # the broker keeps serving, so the wait for it returns at once
    assert hook_calls(tmp_path) == [["advance-time", "1500"], ["trigger-cleaning"], ["restart"]]


def test_a_hook_declaring_fewer_actions_gives_fewer_capabilities(tmp_path: Path) -> None:
    hook = ControlHook.parse(hook_script(tmp_path), actions=frozenset({"restart"}))
    target = BootstrapTarget("127.0.0.1:9092", control=hook)
    assert target.capabilities.names() == {"restart"}
    assert target.capabilities.clock == "wall"
    with pytest.raises(CapabilityMissingError, match="clock-control"):
        target.advance_time(1)


def test_a_failing_hook_is_a_control_error_quoting_its_stderr(tmp_path: Path) -> None:
    target = BootstrapTarget("127.0.0.1:9092", control=ControlHook.parse(hook_script(tmp_path, 3)))
    with pytest.raises(ControlError, match=r"advance-time 10 exited 3: hook says no"):
        target.advance_time(10)


def test_a_hook_that_hangs_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    hook = ControlHook((sys.executable, "-c", "import time; time.sleep(30)"), timeout_s=0.3)
    with pytest.raises(ControlError, match="timed out"):
        hook.run("restart")


def test_unknown_hook_actions_and_empty_commands_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown control hook actions"):
        ControlHook.parse("x", actions=frozenset({"reboot"}))
    with pytest.raises(ValueError, match="empty"):
        ControlHook.parse("  ")


def test_sasl_plain_on_a_plaintext_listener_is_an_authentication_error(
    embedded: EmbeddedTarget,
) -> None:
    """Kafka answers a SaslHandshake on a PLAINTEXT listener with ILLEGAL_SASL_STATE."""
    target = BootstrapTarget(embedded.bootstrap, sasl=PlainCredentials("alice", "secret"))
    assert target.capabilities.sasl
    with pytest.raises(AuthenticationError, match=rf"{embedded.bootstrap} \(SASL_HANDSHAKE\)"):
        target.connect()


def test_sasl_plain_sends_the_rfc_4616_token() -> None:
    tokens: list[bytes] = []

    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        if header.api_key == ApiKey.API_VERSIONS:
            return response_frame(header, api_versions_body())
        if header.api_key == ApiKey.SASL_HANDSHAKE:
            return response_frame(header, SaslHandshakeResponse(0, ("PLAIN",)))
        tokens.append(payload)
        return response_frame(header, SaslAuthenticateResponse(0, None, b""))

    with FakeBroker(answer) as peer:
        BootstrapTarget(
            f"127.0.0.1:{peer.port}", sasl=PlainCredentials("alice", "s3cret")
        ).connect().close()
    assert tokens and tokens[0].endswith(
        b"\x00alice\x00s3cret" + b"\x00"
    )  # compact bytes, then tags


# --- profile discovery ----------------------------------------------------------------------


def discovery_broker(
    extra_api: int | None, configs: tuple[str, ...], drop: frozenset[int] = frozenset()
) -> FakeBroker:
    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        if header.api_key == ApiKey.API_VERSIONS:
            extra = (ApiVersion(extra_api, 0, 0),) if extra_api is not None else ()
            return response_frame(header, api_versions_body(drop=drop, extra=extra))
        if header.api_key == ApiKey.METADATA:
            return response_frame(
                header, MetadataResponse(topics=(MetadataResponseTopic(name="some"),))
            )
        entries = tuple(DescribeConfigsResourceResult(name=c, value="false") for c in configs)
        result = DescribeConfigsResult(resource_type=2, resource_name="some", configs=entries)
        return response_frame(header, DescribeConfigsResponse(results=(result,)))

    return FakeBroker(answer)


@pytest.mark.parametrize(
    ("extra_api", "configs", "drop", "offered"),
    [
        (None, (), frozenset(), {"kip107", "kip534"}),
        (10694, (), frozenset(), {"kip107", "kip534", "kip694"}),
        (None, ("retention.commitoffset.enable",), frozenset(), {"kip107", "kip534", "kip68"}),
        (
            None,
            ("tombstone.flag.enable", "cleanup.policy"),
            frozenset(),
            {"kip107", "kip534", "kip87"},
        ),
        (None, (), frozenset({ApiKey.DELETE_RECORDS}), {"kip534"}),
    ],
    ids=[
        "stock-kafka",
        "delete-partitions-api",
        "consumed-retention-config",
        "tombstone-config",
        "no-delete-records",
    ],
)
def test_profiles_are_discovered_from_api_versions_and_topic_configs(
    extra_api: int | None, configs: tuple[str, ...], drop: frozenset[int], offered: set[str]
) -> None:
    with discovery_broker(extra_api, configs, drop) as peer:
        assert BootstrapTarget(f"127.0.0.1:{peer.port}").profiles() == offered


def test_discovery_on_a_broker_without_topics_uses_a_probe_topic_and_removes_it(
    tmp_path: Path,
) -> None:
    with EmbeddedTarget(tmp_path / "fresh") as fresh, fresh.connect() as conn:
        assert discover_profiles(conn) == ALL_PROFILES
        assert [t.name for t in calls.metadata(conn, None).topics] == []
