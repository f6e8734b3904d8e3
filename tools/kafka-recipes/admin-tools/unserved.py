"""Recipe: what a broker does with a request for an API key or version it does not advertise.

    python unserved.py BROKER_PORT OUT_DIR

Each probe opens a fresh connection, sends one request frame (header v2: key, version,
correlation id 7, client id "probe", then a few body bytes, since the broker decides from
the header alone) and waits up to 10 s for the first response bytes or the end of the
stream. ``OUT_DIR/unserved.json`` gets, per probe, the key, version and what happened:
``"closed"`` (the broker closed the connection without answering) or the hex of the
answer. Probes: API keys a Kafka 4.0 broker listener does not enable (controller-only
ones such as Vote 52 and BrokerRegistration 62, the early-access share-group keys 76-79),
keys Kafka does not know (1000, -1) and known keys above their highest version.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
from pathlib import Path

#: (api key, api version) probed
PROBES = (
    (52, 0),
    (62, 0),
    (67, 0),
    (76, 0),
    (1000, 0),
    (-1, 0),
    (3, 99),
    (43, 3),
    (48, 2),
)


def frame(key: int, version: int) -> bytes:
    client = b"probe"
    header = struct.pack(">hhih", key, version, 7, len(client)) + client + b"\x00"
    body = header + b"\x00\x00\x00\x00"
    return struct.pack(">i", len(body)) + body


def probe(port: int, key: int, version: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(frame(key, version))
        try:
            data = sock.recv(65536)
        except TimeoutError:
            return "no answer in 10 s"
    return "closed" if not data else data.hex()


def main(port: int, out: Path) -> None:
    results = [{"api_key": k, "api_version": v, "outcome": probe(port, k, v)} for k, v in PROBES]
    out.mkdir(parents=True, exist_ok=True)
    (out / "unserved.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]))
