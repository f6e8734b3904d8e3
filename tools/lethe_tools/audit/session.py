"""Start the audit's SparkSession: Java found and checked, workers on this Python, quiet logs.

Theory of operation
-------------------
PySpark starts a JVM (``spark-submit`` from the pyspark wheel) and Python
workers. Three things make that fail in ways a user cannot read, so they are
settled before the session starts:

* **Java**: Spark 4 needs Java 17 or newer. :func:`find_java` looks at
  ``JAVA_HOME/bin/java`` first, then ``java`` on ``PATH``, runs ``java
  -version`` and parses the version; anything missing or older is a
  :class:`JavaNotFoundError` whose message is one line (the CLI prints it and
  exits 2).
* **Worker interpreter**: ``PYSPARK_PYTHON`` (and the driver's) is set to
  ``sys.executable``, else workers start the machine's default ``python3``,
  which cannot import lethe, pyarrow or pandas of this environment. Set only
  when not set already, so a cluster's own setting wins.
* **Network and noise**: ``SPARK_LOCAL_IP=127.0.0.1`` for local masters
  (no host-name warning, no listening on other interfaces; local masters also
  get no web UI and as many shuffle partitions as cores instead of 200, the
  audit's check tables being small, and adaptive execution does not coalesce
  them: a shuffle of the batches (a few MB) would otherwise become one task,
  leaving the other cores idle after every window or join); the driver's log4j
  gets a small log4j2 file in the temp dir: everything at ERROR, with
  ``org.apache.spark`` named explicitly (PySpark announces its shell's default
  level unless the root and Spark's logger agree), and Spark's own console
  progress bar is off (the job prints its own, :mod:`lethe_tools.audit.progress`).
* **A short-lived JVM**: in local mode the driver JVM is the executor, and the
  audit's JVM work is many small queries (the bulk decoding runs in Python
  tasks). Java's optimising JIT compiler (C2) and parallel GC threads then
  mostly compete with the tasks for the cores, so local masters run the JVM
  with the quick C1 compiler only (``-XX:TieredStopAtLevel=1``) and the serial
  collector (a single comparison on the 2 GiB benchmark log dir, two shared
  cores: the checks took about a third less wall time; timings there vary).
  Measured again for the checks alone (2026-11-22, 1 and 3 GiB generated log
  dirs, local[1] and local[2], one run each, load average 1.3-4): with C2
  allowed (``-XX:+UseSerialGC`` only) every run was 3.3-4.6 s slower, and
  the extra time for the larger dir was no smaller (3.8 s vs 3.6 s at
  local[1]): the checks' stages are too short for C2's code to pay back its
  compile time, so C1 stays at both sizes. With C1 alone the JVM sizes its
  code cache as for a non-tiered VM (48 MiB); a long session of many queries
  (a test module's shared session) filled it ("Out of space in CodeCache for
  adapters"), so it is reserved at the tiered default, 240 MiB.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["MIN_JAVA", "Java", "JavaNotFoundError", "find_java", "start_session"]

MIN_JAVA = 17
_VERSION = re.compile(r'version "(?P<version>[^"]+)"')


class JavaNotFoundError(RuntimeError):
    """No usable Java: the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class Java:
    path: str
    version: str
    major: int


def _major(version: str) -> int:
    """Java's major version: ``1.8.0_392`` -> 8, ``17.0.9`` -> 17, ``21`` -> 21."""
    parts = re.findall(r"\d+", version)
    if not parts:
        return 0
    first = int(parts[0])
    return int(parts[1]) if first == 1 and len(parts) > 1 else first


def _candidate(environ: dict[str, str] | os._Environ[str]) -> str | None:
    home = environ.get("JAVA_HOME")
    if home:
        path = os.path.join(home, "bin", "java")
        return path if os.access(path, os.X_OK) else None
    return shutil.which("java", path=environ.get("PATH"))


def find_java(environ: dict[str, str] | os._Environ[str] | None = None) -> Java:
    """The Java Spark will run (JAVA_HOME first, then PATH), checked to be 17 or newer."""
    environ = os.environ if environ is None else environ
    path = _candidate(environ)
    where = "JAVA_HOME/bin/java" if environ.get("JAVA_HOME") else "java on PATH"
    if path is None:
        raise JavaNotFoundError(
            f"lethe audit needs Java {MIN_JAVA} or newer for Spark, and there is no {where} "
            f"(install a JDK {MIN_JAVA}, e.g. openjdk-17-jre-headless, or set JAVA_HOME)"
        )
    try:
        done = subprocess.run(
            [path, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise JavaNotFoundError(f"lethe audit: cannot run {path} -version: {error}") from None
    match = _VERSION.search(done.stderr + done.stdout)
    if match is None:
        raise JavaNotFoundError(f"lethe audit: {path} -version printed no version")
    version = match["version"]
    major = _major(version)
    if major < MIN_JAVA:
        raise JavaNotFoundError(
            f"lethe audit needs Java {MIN_JAVA} or newer for Spark; {path} is Java {version}"
        )
    return Java(path, version, major)


#: log4j2 configuration for the driver: Spark's own messages at ERROR only.
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
logger.sparkproject.name = org.sparkproject
logger.sparkproject.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.netty.name = io.netty
logger.netty.level = error
"""


def _log4j_file() -> str:
    """A log4j2 properties file (in the temp dir) that silences Spark below ERROR."""
    path = os.path.join(tempfile.gettempdir(), f"lethe-audit-log4j2-{os.getuid()}.properties")
    try:
        with open(path, encoding="utf-8") as handle:
            current = handle.read()
    except OSError:
        current = None
    if current != _LOG4J:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(_LOG4J)
    return path


#: JVM options for local masters (see the module docstring).
_LOCAL_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"
_LOCAL_CORES = re.compile(r"^local\[(\d+)")


def _local_cores(master: str) -> int:
    """Cores of a local master: ``local[2]`` -> 2, ``local``/``local[*]`` -> this machine's."""
    match = _LOCAL_CORES.match(master)
    if match:
        return max(1, int(match[1]))
    return 1 if master == "local" else os.cpu_count() or 1


def _prepare_environment(master: str) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def start_session(
    master: str = "local[*]", app_name: str = "lethe audit", conf: dict[str, str] | None = None
) -> SparkSession:
    """A SparkSession with the ``kafka-log`` data source registered (Java checked first)."""
    find_java()
    _prepare_environment(master)
    from pyspark.sql import SparkSession  # noqa: PLC0415 - pyspark loads only for the audit

    from lethe_tools.audit.datasource import register  # noqa: PLC0415 - imports pyspark

    local = master.startswith("local")
    java_options = f"-Dlog4j2.configurationFile={_log4j_file()}"
    java_options += f" {_LOCAL_JVM}" if local else ""
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if local:  # one machine: no web UI, one shuffle partition per core, kept apart
        builder = builder.config("spark.ui.enabled", "false")
        builder = builder.config("spark.sql.shuffle.partitions", str(_local_cores(master)))
        builder = builder.config("spark.sql.adaptive.coalescePartitions.enabled", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark
