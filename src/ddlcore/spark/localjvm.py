"""The JVM of a local session that ddlcore starts: its local filesystem and its collector.

Owns: the Spark properties ``spark_session`` adds when it starts a local session's JVM
(``session_conf``), and compiling ``java/NioLocalFileSystem.java`` for it (once per machine,
cached).  Must not know: the pipeline, any dialect.  Measured in docs/pipeline.md,
"Performance" ("Settings that matter", "Why it is built this way").

**Local filesystem.** Without Hadoop's native library (``libhadoop``, which pip's pyspark does
not ship), Hadoop's local filesystem sets the mode of every file and directory it creates by
running the ``chmod`` program (``RawLocalFileSystem.setPermission``): a process per Parquet
file, per partition directory and per task attempt directory of every write.  A run of 40,000
events in 1,808 table versions started 4,209 of them (10 s of CPU in the processes, of 95 s
in all).  ``ddlcore.spark.NioLocalFileSystem`` sets the same modes from the JVM (``chmod(2)``
through java.nio, the bits as ``chmod(1)`` sets them: a directory keeps its set-group-ID bit)
and otherwise reads and writes exactly what Hadoop's ``LocalFileSystem`` does.  A ``javac``
(``$JAVA_HOME/bin/javac``, else on ``PATH``) compiles it once against the Spark installation's
Hadoop jars into the cache directory (``$DDLCORE_CACHE``, else ``$XDG_CACHE_HOME/ddlcore``,
else ``~/.cache/ddlcore``); without one, or where compiling fails, the session uses Hadoop's
filesystem: only speed differs.

**Collector.** The parallel collector (``-XX:+UseParallelGC``), the JVM's throughput
collector, instead of G1: a batch job's pauses do not matter, and G1's write barriers make
every compiled method larger.  2M events in 2,000 table versions: 77.0 s instead of 87.7 s
(means of three runs), with less CPU in the collector (5 s against 8–12 s) and in the JIT
(48–52 s against 54–58 s).  Its adaptive size policy stays on: the generations grow with the
live data up to ``spark.driver.memory``.  With fixed generation sizes
(``-XX:-UseAdaptiveSizePolicy``, 6bb59d4) the old generation kept the size the JVM starts
with (a share of 1/64 of the machine's memory, whatever ``spark.driver.memory`` says): a fresh
JVM's first job on a table of 128 columns needs more live heap than that for its plans and
their code generation, and spent minutes in back-to-back full collections of a full 260 MB
old generation of a 1 GB heap (a machine of 24 GB).  The peak memory it saved (801–820 MB
against 1,100–1,140 MB at 2M events) is not worth a stalled first job (docs/pipeline.md,
Performance).

When: a session whose JVM ``spark_session`` starts (none is running in this Python process
yet) with a ``local`` master.  Each setting is left out where the caller's ``conf`` or the
Spark configuration outside it (``spark-defaults.conf``, ``PYSPARK_SUBMIT_ARGS``, the JVM's
option variables) already decides it — a given ``spark.hadoop.fs.file.impl`` (e.g.
``org.apache.hadoop.fs.LocalFileSystem``) or collector is used as given — and where adding
it would replace the configuration's own value of the same property.  Cluster masters and
``spark-submit`` are left alone.  ``status()`` says what the last session got, and why.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["FS_CLASS", "FS_IMPL_KEY", "CLASS_PATH_KEY", "JAVA_OPTIONS_KEY", "COLLECTOR", "CLASS_FILES",
           "JVM_OPTION_VARIABLES", "session_conf", "classes_dir", "compile_outcome", "javac", "status"]

#: the filesystem class (Java) and the Spark properties that install it
FS_CLASS = "ddlcore.spark.NioLocalFileSystem"
FS_IMPL_KEY = "spark.hadoop.fs.file.impl"
CLASS_PATH_KEY = "spark.driver.extraClassPath"
#: the collector (the module docstring's "Collector") and the property
#: that selects it
JAVA_OPTIONS_KEY = "spark.driver.extraJavaOptions"
COLLECTOR = "-XX:+UseParallelGC"

_SOURCE = Path(__file__).parent / "java" / "NioLocalFileSystem.java"
CLASS_FILES = ("ddlcore/spark/NioLocalFileSystem.class", "ddlcore/spark/NioLocalFileSystem$Raw.class")
#: what the compiler is given at most (a cold ``javac`` takes a second or two)
_COMPILE_TIMEOUT_S = 300
#: a JVM option that chooses a collector (``-XX:+UseG1GC``, ``-XX:+UseZGC``, ...)
_COLLECTOR_OPTION = re.compile(r"-XX:\+Use\w*GC\b")
#: the JVM's own option variables (read by every JVM this process starts)
JVM_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
#: ``spark-submit``'s flags for the driver's class path and options
_SUBMIT_FLAGS = {CLASS_PATH_KEY: "--driver-class-path", JAVA_OPTIONS_KEY: "--driver-java-options"}

#: the outcome of this process's first ``classes_dir()``: (directory or None, why not)
_compiled: tuple[Path | None, str] | None = None
#: what the last ``session_conf`` decided, for ``status()``
_last = "not tried: no local session started by ddlcore in this process"


def compile_outcome() -> tuple[Path | None, str] | None:
    """This process's ``classes_dir()`` outcome: ``(directory or None, why not)``, ``None``
    before the first call."""
    return _compiled


def status() -> str:
    """What the last session ``session_conf`` prepared got — its local filesystem and its
    collector — and why (one line)."""
    return _last


def session_conf(master: str, conf: dict[str, str] | None = None) -> dict[str, str]:
    """The Spark properties to add to a session about to be started with ``master`` and the
    caller's ``conf``: ``spark.driver.extraClassPath`` (the compiled classes, then any class
    path ``conf`` gives) and ``spark.hadoop.fs.file.impl`` for the filesystem;
    ``spark.driver.extraJavaOptions`` (the collector, then any options ``conf`` gives) for the
    collector.  ``{}`` for a master that is not ``local``/``local[...]``; a setting is left
    out where ``conf`` or the Spark configuration decides it (module docstring) or the class
    cannot be compiled (``status()``).  Call it only before the session's JVM starts: a
    running JVM's class path and collector do not change."""
    global _last
    conf = conf or {}
    if not (master == "local" or master.startswith("local[")):
        _last = f"Hadoop's LocalFileSystem and the default collector: master {master} is not local"
        return {}
    out: dict[str, str] = {}
    fs, collector = _filesystem(conf, out), _collector(conf, out)
    _last = f"filesystem: {fs}; collector: {collector}"
    return out


def _filesystem(conf: dict[str, str], out: dict[str, str]) -> str:
    if FS_IMPL_KEY in conf:
        return f"{conf[FS_IMPL_KEY]}, as the session's conf names it"
    configured = _configured(CLASS_PATH_KEY)
    if configured:
        return f"Hadoop's LocalFileSystem: the driver's class path is set in {configured}"
    where = classes_dir()
    if where is None:
        return f"Hadoop's LocalFileSystem: {_compiled[1] if _compiled else ''}"
    out[CLASS_PATH_KEY] = os.pathsep.join(p for p in (str(where), conf.get(CLASS_PATH_KEY)) if p)
    out[FS_IMPL_KEY] = FS_CLASS
    return f"{FS_CLASS} from {where}"


def _collector(conf: dict[str, str], out: dict[str, str]) -> str:
    given = " ".join(conf.get(k, "") for k in (JAVA_OPTIONS_KEY, "spark.driver.defaultJavaOptions"))
    given += " " + " ".join(os.environ.get(v, "") for v in JVM_OPTION_VARIABLES)
    chosen = _COLLECTOR_OPTION.search(given)
    if chosen:
        return f"{chosen.group(0)}, as given"
    configured = _configured(JAVA_OPTIONS_KEY)
    if configured:
        return f"the JVM's default: the driver's Java options are set in {configured}"
    out[JAVA_OPTIONS_KEY] = " ".join(p for p in (COLLECTOR, conf.get(JAVA_OPTIONS_KEY)) if p)
    return COLLECTOR


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
    if all((dest / c).is_file() for c in CLASS_FILES):
        return dest, ""
    compiler = javac()
    if compiler is None:
        return None, "no javac ($JAVA_HOME/bin or PATH): Hadoop runs chmod per file it creates"
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".localfs-", dir=dest.parent))
    except OSError as exc:
        return None, f"cache directory {dest.parent}: {exc}"
    try:
        proc = subprocess.run([compiler, "-nowarn", "--release", "17", "-cp", str(jars / "*"), "-d", str(tmp),
                               str(_SOURCE)], capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S)
        if proc.returncode != 0:
            return None, f"javac failed: {(proc.stderr or proc.stdout).strip()[:500]}"
        try:
            os.replace(tmp, dest)
        except OSError:  # another process renamed its copy first
            if not all((dest / c).is_file() for c in CLASS_FILES):
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


def javac() -> str | None:
    """The Java compiler: ``$JAVA_HOME/bin/javac``, else the one on ``PATH``; ``None``: none."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "javac", os.X_OK):
        return str(Path(home) / "bin" / "javac")
    return shutil.which("javac")


def _cache_root() -> Path:
    if os.environ.get("DDLCORE_CACHE"):
        return Path(os.environ["DDLCORE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ddlcore"


def _configured(key: str) -> str | None:
    """Where the Spark configuration outside a session's ``conf`` sets ``key`` (a property
    this module would replace there), or ``None``."""
    args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if _SUBMIT_FLAGS.get(key, key) in args or key in args:
        return "PYSPARK_SUBMIT_ARGS"
    conf_dirs = [os.environ.get("SPARK_CONF_DIR")]
    if os.environ.get("SPARK_HOME"):
        conf_dirs.append(str(Path(os.environ["SPARK_HOME"]) / "conf"))
    for d in filter(None, conf_dirs):
        defaults = Path(d) / "spark-defaults.conf"
        try:
            lines = defaults.read_text(errors="replace").splitlines()
        except OSError:
            continue
        if any(line.split(None, 1)[:1] == [key] for line in lines):  # "key value"; "#" lines are comments
            return str(defaults)
    return None
