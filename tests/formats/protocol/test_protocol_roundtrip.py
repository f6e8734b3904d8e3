"""Any value valid for a version survives encode -> decode unchanged, for every
defined message and every version (values drawn from the field specs)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.registry import apis
from lethe_formats.protocol.schema import Struct
from wire_strategies import message_values


def _cases() -> list[Any]:
    cases = []
    for spec in apis().values():
        for version in range(spec.min_version, spec.max_version + 1):
            for cls in (spec.request, spec.response):
                cases.append(pytest.param(cls, version, id=f"{cls.__name__}-v{version}"))
    for header, versions in ((RequestHeader, range(3)), (ResponseHeader, range(2))):
        cases.extend(pytest.param(header, v, id=f"{header.__name__}-v{v}") for v in versions)
    return cases


@pytest.mark.parametrize(("cls", "version"), _cases())
@settings(max_examples=25)
@given(data=st.data())
def test_message_round_trips_at_every_version(
    cls: type[Struct], version: int, data: st.DataObject
) -> None:
    value = data.draw(message_values(cls, version))
    wire = encode(value, version)
    assert decode(cls, version, wire) == value
    assert encode(decode(cls, version, wire), version) == wire
