"""Interop fixtures: one embedded reference broker per test process, unique topics, a watchdog.

Theory of operation
-------------------
Each pytest process (each xdist worker) starts one
:class:`~lethe_reference.embedded.EmbeddedBroker` on an ephemeral loopback port
in its own temporary log directory, for the whole session. Tests never share a
topic: :func:`topic` makes a name from the test's name and a random suffix, so
two workers (two brokers) and tests in any order cannot see each other's data.

Nothing may hang. Every client call carries its own timeout (the clients'
``socket.timeout.ms`` / ``request_timeout_ms`` / ``timeout=`` arguments, and
``asyncio.wait_for`` for aiokafka), and a watchdog backs them up:
``faulthandler.dump_traceback_later`` prints every thread's stack and ends the
process when a test (or the broker's start) overruns :data:`TEST_DEADLINE_S`.
Under xdist that is reported as a crashed worker naming the test, and the
remaining tests go on in a fresh worker.
"""

from __future__ import annotations

import faulthandler
import re
import uuid
from collections.abc import Iterator

import pytest
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config

#: Longest a single interop test may run before the watchdog ends the process.
TEST_DEADLINE_S = 120
#: Longest the broker may take to start or stop.
BROKER_DEADLINE_S = 60


def pytest_configure(config: pytest.Config) -> None:
    # kafka-python loads its protocol schemas with importlib.resources' legacy calls
    for message in ("read_text is deprecated", "open_text is deprecated"):
        config.addinivalue_line("filterwarnings", f"ignore:{message}:DeprecationWarning")


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """The session's broker (consumer groups rebalance at once: no initial delay)."""
    log_dir = tmp_path_factory.mktemp("interop-broker")
    faulthandler.dump_traceback_later(BROKER_DEADLINE_S, exit=True)
    config = broker_config(overrides={"group.initial.rebalance.delay.ms": "0"})
    embedded = EmbeddedBroker(log_dir, config=config)
    with embedded:
        faulthandler.cancel_dump_traceback_later()
        yield embedded
        faulthandler.dump_traceback_later(BROKER_DEADLINE_S, exit=True)
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="session")
def bootstrap(broker: EmbeddedBroker) -> str:
    """``host:port`` of the session's broker."""
    return broker.bootstrap


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(TEST_DEADLINE_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def topic(request: pytest.FixtureRequest) -> str:
    """A topic name no other test uses: the test's name plus a random suffix."""
    return unique_name(request.node.name)


def unique_name(base: str) -> str:
    legal = re.sub(r"[^a-zA-Z0-9._-]+", "-", base).strip("-")[:80]
    return f"{legal}-{uuid.uuid4().hex[:10]}"
