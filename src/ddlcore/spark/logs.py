"""The Spark log of a ``ddlcore`` command: quiet on the terminal, complete in a file.

Owns: the log4j2 configuration the command line gives the JVM it starts (``configure``): every
Spark/Hadoop log line goes to a file under the output (``OUT/_logs/<command>-<UTC time>-<pid>.log``),
none to the terminal — ddlcore reports what goes wrong itself, in one line — unless ``-v`` (the
console shows ``WARN`` and above, Spark's own default) or ``DDLCORE_SPARK_LOG=LEVEL`` (the console
and the file show ``LEVEL`` and above).  Must not know: the pipeline (pyspark is imported only to
see whether this process runs a JVM already).

How: log4j 2 reads its configuration file from the ``LOG4J_CONFIGURATION_FILE`` environment
variable (log4j 2 manual, "Configuration: automatic configuration" and "System properties": every
``log4j2.*`` property may be given as an environment variable ``LOG4J_*``).  ``jvm_launch`` sets
it only while the JVM is launched (PySpark's ``launch_gateway`` hands ``spark-submit`` a copy of
this process's environment) and puts the previous value back afterwards, so a library caller's
environment — and any JVM it starts later, a cluster's daemons included — is untouched.  Spark
keeps a configuration it did not make (``Logging.scala``: only a
default-configured log4j gets Spark's ``log4j2-defaults.properties``). The terminal's
appender is a file appender on ``/dev/stderr``, not a console appender: Spark puts a ``WARN``
threshold of its own on every console appender of a PySpark driver (``SparkShellLoggingFilter``),
which would hide what ``DDLCORE_SPARK_LOG=INFO`` asks for.  What the JVM writes to its standard
error outside log4j (its own warnings, a stack trace printed directly) goes to the same file:
the JVM is started with its standard error on the file (``jvm_launch``).  Nothing is changed when
the JVM runs already (``spark-submit``, a session made earlier in the process) or when the user
configured log4j (the variable, or ``-Dlog4j2.configurationFile`` in ``spark.driver.extraJavaOptions``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

__all__ = ["configure", "jvm_launch", "config_file", "root_level", "LEVELS", "ENV_LEVEL", "LOG_DIR"]

#: log4j's levels, the values ``DDLCORE_SPARK_LOG`` accepts
LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
ENV_LEVEL = "DDLCORE_SPARK_LOG"
#: the directory under a local output that holds the logs
LOG_DIR = "_logs"
_ENV_FILE = "LOG4J_CONFIGURATION_FILE"

#: loggers that write a line per task or per block at INFO (kept at WARN in the file unless
#: ``DDLCORE_SPARK_LOG`` asks for more), and the third-party ones Spark's defaults quieten
_QUIET = {"org.apache.spark.scheduler.TaskSetManager": "WARN", "org.apache.spark.executor.Executor": "WARN",
          "org.apache.spark.storage.BlockManagerInfo": "WARN", "org.apache.spark.storage.memory.MemoryStore": "WARN",
          "org.sparkproject.jetty": "WARN", "org.apache.parquet": "ERROR", "parquet": "ERROR",
          "org.apache.hadoop.util.NativeCodeLoader": "ERROR"}

_TEMPLATE = """\
status = error
name = ddlcore
appender.file.type = File
appender.file.name = file
appender.file.fileName = {file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yyyy-MM-dd HH:mm:ss.SSS}} %p %c: %m%n%ex
appender.console.type = File
appender.console.name = console
appender.console.fileName = /dev/stderr
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = {console}
rootLogger.level = {root}
rootLogger.appenderRef.file.ref = file
rootLogger.appenderRef.console.ref = console
"""


def level_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """``DDLCORE_SPARK_LOG`` upper-cased, ``None`` when unset; ``ValueError`` (one line) for a
    value that is not a log4j level."""
    value = (env if env is not None else os.environ).get(ENV_LEVEL, "").strip().upper()
    if not value:
        return None
    if value not in LEVELS:
        raise ValueError(f"{ENV_LEVEL}={value}: expected one of {', '.join(LEVELS)}")
    return value


def root_level() -> str:
    """The level of the log file: ``INFO``, or ``DDLCORE_SPARK_LOG`` when it asks for more."""
    level = level_from_env()
    return level if level is not None and LEVELS.index(level) > LEVELS.index("INFO") else "INFO"


def _user_configured(conf: Mapping[str, str]) -> bool:
    return bool(os.environ.get(_ENV_FILE)) or "log4j2.configurationFile" in " ".join(
        conf.get(k, "") for k in ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions"))


def _log_dir(out: str | os.PathLike | None) -> Path:
    """``OUT/_logs`` for a local output (created), else a temporary directory's ``ddlcore-logs``."""
    from .fs import is_uri

    text = None if out is None else str(out)
    if text is not None and text.startswith("file:"):
        from urllib.parse import unquote, urlparse
        text = unquote(urlparse(text).path)
    if text is not None and not is_uri(text):
        d = Path(text) / LOG_DIR
        try:
            d.mkdir(parents=True, exist_ok=True)
            return d
        except OSError:
            pass
    d = Path(tempfile.gettempdir()) / "ddlcore-logs"
    d.mkdir(parents=True, exist_ok=True)
    return d


def configure(out: str | os.PathLike | None, *, verbose: bool = False, command: str = "run",
              conf: Mapping[str, str] | None = None) -> Path | None:
    """Write the log4j2 configuration of the module docstring for the JVM this process is about
    to start (``config_file``; ``jvm_launch`` gives it to the JVM), logging to a new file under
    ``out`` (a local output directory; for another filesystem or none, the temporary
    directory's ``ddlcore-logs``).  Returns the log file, or ``None`` when the JVM runs already
    or the user configured log4j (nothing written).  The environment is not changed.  Raises
    ``ValueError`` for a ``DDLCORE_SPARK_LOG`` that is not a level.  Call it before the Spark
    session is made."""
    level = level_from_env()
    conf = conf or {}
    try:
        from pyspark import SparkContext
        running = SparkContext._gateway is not None
    except ImportError:  # pragma: no cover - ddlcore.spark needs pyspark
        running = False
    if running or _user_configured(conf) or os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    log_file = _log_dir(out) / f"{command}-{stamp}-{os.getpid()}.log"
    console = level or ("WARN" if verbose else "OFF")
    root = root_level()
    text = _TEMPLATE.format(file=str(log_file).replace("\\", "/"), console=console, root=root)
    if level is None or LEVELS.index(level) <= LEVELS.index("INFO"):
        for i, (name, lvl) in enumerate(sorted(_QUIET.items())):
            text += f"logger.q{i}.name = {name}\nlogger.q{i}.level = {lvl}\n"
    config_file(log_file).write_text(text)
    return log_file


def config_file(log_file: Path) -> Path:
    """The log4j2 configuration ``configure`` wrote for ``log_file``."""
    return log_file.with_suffix(".log4j2.properties")


@contextmanager
def jvm_launch(log_file: Path | None, *, quiet: bool = True) -> Iterator[None]:
    """Around the start of the JVM (the Spark session): ``LOG4J_CONFIGURATION_FILE`` names
    ``configure``'s configuration for ``log_file``, and when ``quiet`` this process's standard
    error (file descriptor 2) is ``log_file`` (appended to), so that the JVM keeps it as its
    standard error; both are put back afterwards (the variable removed, or its previous value
    restored).  Nothing happens without a ``log_file``."""
    if log_file is None:
        yield
        return
    previous = os.environ.get(_ENV_FILE)
    os.environ[_ENV_FILE] = str(config_file(log_file))
    try:
        with _stderr_to(log_file if quiet else None):
            yield
    finally:
        if previous is None:
            os.environ.pop(_ENV_FILE, None)
        else:
            os.environ[_ENV_FILE] = previous


@contextmanager
def _stderr_to(log_file: Path | None) -> Iterator[None]:
    if log_file is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.dup2(fd, 2)
    finally:
        os.close(fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
