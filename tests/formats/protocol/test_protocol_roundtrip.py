"""Any value valid for a version survives encode -> decode unchanged, for every
defined message and every version (values drawn from the field specs)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.schema import Struct
from wire_strategies import every_message_version, message_values


def _cases() -> list[Any]:
    return [
        pytest.param(cls, version, id=f"{cls.__name__}-v{version}")
        for cls, version in every_message_version()
    ]


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
