"""Hadoop's local filesystem without a process per file, for the local sessions ddlcore starts.

Owns: compiling ``java/NioLocalFileSystem.java`` (once per machine, cached) and the Spark
properties that put it in the JVM of a local session (``session_conf``).  Must not know: the
pipeline, any dialect.

Why: without Hadoop's native library (``libhadoop``, which pip's pyspark does not ship),
Hadoop's local filesystem sets the mode of every file and directory it creates by running the
``chmod`` program (``RawLocalFileSystem.setPermission``): a process per Parquet file, per
partition directory and per task attempt directory of every write.  A run of 40,000 events in
1,808 table versions started 4,209 of them (10 s of CPU in the processes, of 95 s in all).
``ddlcore.spark.NioLocalFileSystem`` sets the same modes from the JVM (``chmod(2)`` through
java.nio; the mode bits as ``chmod(1)`` sets them: a directory keeps its set-group-ID bit).
It reads and writes exactly what Hadoop's ``LocalFileSystem`` does.

When: a session whose JVM ``spark_session`` starts (none is running in this Python process
yet) with a ``local`` master.  A ``javac`` (``$JAVA_HOME/bin/javac``, else on ``PATH``)
compiles the class once against the Spark installation's Hadoop jars, into the cache
directory (``$DDLCORE_CACHE``, else ``$XDG_CACHE_HOME/ddlcore``, else ``~/.cache/ddlcore``).
Without a ``javac``, or where compiling fails, or where the Spark configuration already sets
the driver's class path (``spark-defaults.conf``, ``PYSPARK_SUBMIT_ARGS``), the session uses
Hadoop's own filesystem: only speed differs, and ``status()`` says why.  Cluster masters and
``spark-submit`` are left alone (their executors would need the class too).  A session's
``conf`` may name another ``spark.hadoop.fs.file.impl`` (e.g.
``org.apache.hadoop.fs.LocalFileSystem``): it is then used as given.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["FS_CLASS", "FS_IMPL_KEY", "CLASS_PATH_KEY", "session_conf", "classes_dir", "status"]

#: the filesystem class (Java) and the Spark properties that install it
FS_CLASS = "ddlcore.spark.NioLocalFileSystem"
FS_IMPL_KEY = "spark.hadoop.fs.file.impl"
CLASS_PATH_KEY = "spark.driver.extraClassPath"

_SOURCE = Path(__file__).parent / "java" / "NioLocalFileSystem.java"
_CLASS_FILES = ("ddlcore/spark/NioLocalFileSystem.class", "ddlcore/spark/NioLocalFileSystem$Raw.class")
#: what the compiler is given at most (a cold ``javac`` takes a second or two)
_COMPILE_TIMEOUT_S = 300

#: the outcome of this process's first ``classes_dir()``: (directory or None, why not)
_compiled: tuple[Path | None, str] | None = None
#: what the last ``session_conf`` decided, for ``status()``
_last = "not tried: no local session started by ddlcore in this process"


def status() -> str:
    """Which local filesystem the last session ``session_conf`` prepared uses, and why (one
    line)."""
    return _last


def session_conf(master: str, conf: dict[str, str] | None = None) -> dict[str, str]:
    """The Spark properties that put ``FS_CLASS`` in a session about to be started with
    ``master`` and the caller's ``conf``: ``spark.driver.extraClassPath`` (the compiled
    classes, before any class path ``conf`` gives) and ``spark.hadoop.fs.file.impl``; ``{}``
    for a master that is not ``local``/``local[...]``, where ``conf`` sets
    ``spark.hadoop.fs.file.impl`` itself, where the Spark configuration already sets the
    driver's class path, or where the class cannot be compiled (``status()``).  Call it only
    before the session's JVM starts: a running JVM's class path does not change."""
    global _last
    conf = conf or {}
    if not (master == "local" or master.startswith("local[")):
        _last = f"Hadoop's LocalFileSystem: master {master} is not local"
        return {}
    if FS_IMPL_KEY in conf:
        _last = f"{conf[FS_IMPL_KEY]}: as the session's conf names it"
        return {}
    configured = _configured_class_path()
    if configured:
        _last = f"Hadoop's LocalFileSystem: the driver's class path is set in {configured}"
        return {}
    where = classes_dir()
    if where is None:
        _last = f"Hadoop's LocalFileSystem: {_compiled[1] if _compiled else ''}"
        return {}
    _last = f"{FS_CLASS} from {where}"
    path = os.pathsep.join(p for p in (str(where), conf.get(CLASS_PATH_KEY)) if p)
    return {CLASS_PATH_KEY: path, FS_IMPL_KEY: FS_CLASS}


def classes_dir() -> Path | None:
    """The directory holding ``FS_CLASS``'s compiled classes (a class path entry), compiled
    now if the cache lacks them; ``None`` where that is not possible (``status()`` says why).
    The cache entry is named by a hash of the source and of the Hadoop jars it is compiled
    against; concurrent first calls in several processes each compile into a temporary
    directory and the first rename wins.  Tried once per process."""
    global _compiled
    if _compiled is None:
        _compiled = _compile()
    return _compiled[0]


def _compile() -> tuple[Path | None, str]:
    jars = _spark_jars()
    if jars is None:
        return None, "no Spark jars directory ($SPARK_HOME/jars or pyspark/jars)"
    hadoop = sorted(p.name for p in jars.glob("hadoop-client-api-*.jar"))
    if not hadoop:
        return None, f"no hadoop-client-api jar in {jars}"
    key = hashlib.sha256(_SOURCE.read_bytes() + "\0".join(hadoop).encode()).hexdigest()[:16]
    dest = _cache_root() / f"localfs-{key}"
    if all((dest / c).is_file() for c in _CLASS_FILES):
        return dest, ""
    javac = _javac()
    if javac is None:
        return None, "no javac ($JAVA_HOME/bin or PATH): Hadoop runs chmod per file it creates"
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".localfs-", dir=dest.parent))
    except OSError as exc:
        return None, f"cache directory {dest.parent}: {exc}"
    try:
        proc = subprocess.run([javac, "-nowarn", "--release", "17", "-cp", str(jars / "*"), "-d", str(tmp),
                               str(_SOURCE)], capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S)
        if proc.returncode != 0:
            return None, f"javac failed: {(proc.stderr or proc.stdout).strip()[:500]}"
        try:
            os.replace(tmp, dest)
        except OSError:  # another process renamed its copy first
            if not all((dest / c).is_file() for c in _CLASS_FILES):
                raise
        return dest, ""
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"compiling {_SOURCE.name}: {exc}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _spark_jars() -> Path | None:
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    try:
        import pyspark
    except ImportError:  # pragma: no cover - ddlcore.spark needs pyspark
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    return jars if jars.is_dir() else None


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "javac", os.X_OK):
        return str(Path(home) / "bin" / "javac")
    return shutil.which("javac")


def _cache_root() -> Path:
    if os.environ.get("DDLCORE_CACHE"):
        return Path(os.environ["DDLCORE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ddlcore"


def _configured_class_path() -> str | None:
    """Where the Spark configuration outside ``conf`` sets the driver's class path (this
    module's setting would replace it), or ``None``."""
    args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if "--driver-class-path" in args or CLASS_PATH_KEY in args:
        return "PYSPARK_SUBMIT_ARGS"
    conf_dirs = [os.environ.get("SPARK_CONF_DIR")]
    if os.environ.get("SPARK_HOME"):
        conf_dirs.append(str(Path(os.environ["SPARK_HOME"]) / "conf"))
    for d in filter(None, conf_dirs):
        defaults = Path(d) / "spark-defaults.conf"
        try:
            if CLASS_PATH_KEY in defaults.read_text(errors="replace"):
                return str(defaults)
        except OSError:
            continue
    return None
