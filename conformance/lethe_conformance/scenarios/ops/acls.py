"""Op create_acls: grant or deny a role rights through CreateAcls (capability principals).

A step lists bindings by name::

    {"op": "create_acls", "acls": [{"resource_type": "topic", "name": "t",
      "pattern_type": "literal", "principal": "user", "operation": "describe",
      "permission": "allow"}]}

``name`` is a topic symbol (its real name is used; a PREFIXED pattern on it
covers exactly that topic and any longer name), a group symbol, or ignored
for ``cluster`` (``kafka-cluster``). ``principal`` is a role (``admin``,
``user``) or ``*`` (``User:*``); ``host`` defaults to ``*``. The request goes
out on the step's connection (the admin's unless the step says otherwise), so
it works against any broker with an authorizer. ``expect.error`` is every
result's error (NONE by default). Created bindings are removed by the runner
after the scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lethe_conformance.client.acl_calls import (
    OPERATIONS,
    PATTERN_TYPES,
    PERMISSIONS,
    RESOURCE_TYPES,
    Acl,
    create_acls,
)
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import error_code
from lethe_conformance.scenarios.ops.registry import op

__all__ = ["acl_of"]

_CLUSTER_NAME = "kafka-cluster"


def acl_of(ctx: RunContext, data: Mapping[str, Any]) -> Acl:
    """The binding a step entry names, with real names, principal and Kafka's codes."""
    kind = data["resource_type"]
    if kind == "cluster":
        name = _CLUSTER_NAME
    elif kind == "group":
        name = ctx.group(data["name"])
    else:
        name = ctx.topic(data["name"])
    return Acl(
        resource_type=RESOURCE_TYPES[kind],
        resource_name=name,
        pattern_type=PATTERN_TYPES[data.get("pattern_type", "literal")],
        principal=ctx.principal(data["principal"]),
        host=data.get("host", "*"),
        operation=OPERATIONS[data["operation"]],
        permission=PERMISSIONS[data.get("permission", "allow")],
    )


@op("create_acls")
def create_acls_op(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    acls = [acl_of(ctx, entry) for entry in data["acls"]]
    response = create_acls(ctx.conn(), acls, version=data.get("version"))
    exp = Expectations()
    wanted = error_code(data.get("expect", {}).get("error", "NONE"))
    if not exp.equal(f"{path}.acls (results)", len(acls), len(response.results)):
        return exp.mismatches
    for index, (acl, result) in enumerate(zip(acls, response.results, strict=True)):
        exp.error(f"{path}.expect.error (acls[{index}])", wanted, result.error_code)
        if result.error_code == 0:
            ctx.acls.append(acl)
    return exp.mismatches
