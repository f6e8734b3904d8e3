"""Recipe: what DescribeGroups v5 and v6 answer for a consumer group and an unknown group.

    python probe_describe_groups.py BROKER_PORT GROUP... > OUT.jsonl

Run after record.py against the same broker (the group ``cg848`` then exists as an
empty consumer group). One request per version, each line the request and the
response frame as hex (size prefix included), as frames.jsonl does.
"""

from __future__ import annotations

import json
import socket
import struct
import sys

from lethe_formats.protocol.envelope import encode_request
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.describe_groups import DescribeGroupsRequest


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def main(port: int, groups: list[str]) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for version in (5, 6):
            body = DescribeGroupsRequest(groups=tuple(groups), include_authorized_operations=True)
            request = frame(encode_request(RequestHeader(15, version, version, "probe"), body))
            sock.sendall(request)
            head = _read(sock, 4)
            response = head + _read(sock, struct.unpack(">i", head)[0])
            line = {"api_version": version, "request": request.hex(), "response": response.hex()}
            print(json.dumps(line))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
