"""The output directory of ``ddlcore run`` through Hadoop's ``FileSystem`` API.

Owns: every file operation the driver does on the output (the checkpoint, the commit plan
``pending.json``, the state files, the schema and quarantine files, listing the staged files,
the renames of the commit, deleting the staging area).  They go through the driver JVM's
``org.apache.hadoop.fs.FileSystem`` (over the py4j gateway), configured by the session's
Hadoop configuration, so an output URI works for whatever filesystem Spark writes to —
``file://``, ``hdfs://``, ``s3a://``, ``abfs://``, ``gs://``, ``viewfs://`` (the connector on
the classpath) — and a plain path is a local one.  Must not know: the pipeline's layout.

Files the driver makes many of at once (the schema files of a run, the directories above new
table versions) are made with Python in a local temporary directory and moved in by one rename
(``put_tree``; Hadoop's copy on another filesystem): on a local filesystem without Hadoop's
native library every Hadoop ``create`` and ``mkdirs`` runs a ``chmod`` process.

Paths given to the methods are relative to the output root (``"_state/checkpoint.json"``),
with ``/`` separators; an absolute path or a URI (a commit plan written by an earlier version
held absolute local paths) is used as it is.

Atomicity (docs/pipeline.md, "Crash safety"): ``write_text(..., atomic=True)`` writes a
temporary file, syncs it (``hsync``) and renames it over the target (``replace``).  A rename
is atomic on POSIX local filesystems and on HDFS (and ABFS with hierarchical namespace); on an
object store without rename (S3A, GCS) the connector copies and deletes, so a rename is neither
atomic nor cheap — a file is still never seen half-written (an object appears when complete),
but a group of renames can be seen in part.  Hadoop has no directory sync: on a local
filesystem a power failure (not a crash of the run) can undo the latest renames.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Iterator

__all__ = ["OutputFS", "is_uri"]

#: a ``FileStatus``' path and kind in its ``toString()`` (``...{path=P; isDirectory=B; ...}``)
_STATUS = re.compile(r"path=(.*?); isDirectory=(true|false)")
#: characters Hadoop's glob patterns give a meaning
_GLOB = frozenset("*?[]{}\\")


def is_uri(text: object) -> bool:
    """``text`` names a file of a filesystem other than the local one (``hdfs://…``,
    ``s3a://…``): a URI with a scheme that is not ``file``."""
    from urllib.parse import urlparse

    scheme = urlparse(str(text)).scheme
    return len(scheme) > 1 and scheme != "file"


class OutputFS:
    """The output directory ``uri`` (a plain path is local) through Hadoop's ``FileSystem``
    of ``spark``'s driver JVM.  Raises ``py4j.protocol.Py4JJavaError`` (an ``IOException``)
    where Hadoop does; ``read_text`` returns ``None`` for a missing file."""

    def __init__(self, spark, uri: str):
        self._jvm = spark._jvm
        self._gateway = spark.sparkContext._gateway
        self._conf = spark._jsc.hadoopConfiguration()
        self._Path = self._jvm.org.apache.hadoop.fs.Path
        given = self._Path(str(uri))
        # a private instance: the cached one is shared with Spark's own writers
        self.fs = self._jvm.org.apache.hadoop.fs.FileSystem.newInstance(given.toUri(), self._conf)
        # no checksum side files for what the driver writes (a local filesystem's ``.crc``)
        self.fs.setWriteChecksum(False)
        self.root = self.fs.makeQualified(given)
        self._root_path = self.root.toUri().getPath().rstrip("/")
        self._fc = None
        self._made: set[str] = set()  # directories made by ``replace``

    @property
    def uri(self) -> str:
        """The qualified root (``file:/tmp/out``, ``hdfs://nn:8020/out``)."""
        return self.root.toString()

    @property
    def scheme(self) -> str:
        return self.root.toUri().getScheme()

    @property
    def local_root(self) -> str | None:
        """The root as a local path when the filesystem is the local one, else ``None``."""
        return self._root_path if self.scheme == "file" else None

    def local(self, rel: str = "") -> str | None:
        """The local path of ``rel`` when the filesystem is the local one, else ``None``."""
        return self.path(rel).toUri().getPath() if self.scheme == "file" else None

    def path(self, rel: str = ""):
        """The Hadoop ``Path`` of ``rel``."""
        rel = str(rel)
        if not rel:
            return self.root
        if rel.startswith("/") or ":" in rel.split("/", 1)[0]:
            return self.fs.makeQualified(self._Path(rel))
        return self._Path(self.root, rel)

    def str(self, rel: str = "") -> str:
        """The qualified URI string of ``rel`` (what Spark's readers and writers take)."""
        return self.path(rel).toString()

    def rel(self, path) -> str:
        """``path`` (a Hadoop ``Path``) relative to the root."""
        p = path.toUri().getPath()
        if p == self._root_path:
            return ""
        if not p.startswith(self._root_path + "/"):
            raise ValueError(f"{p} is not under the output {self._root_path}")
        return p[len(self._root_path) + 1:]

    # -- queries -----------------------------------------------------------------------------

    def exists(self, rel: str = "") -> bool:
        return bool(self.fs.exists(self.path(rel)))

    def is_dir(self, rel: str = "") -> bool:
        p = self.path(rel)
        return bool(self.fs.exists(p) and self.fs.getFileStatus(p).isDirectory())

    def _statuses(self, array) -> list[tuple[str, bool]]:
        """``(path relative to the root, is_directory)`` of a Java ``FileStatus[]``, read from
        its text in one gateway call (element by element would take several per file: seconds
        for the thousands of files of a run)."""
        if array is None:
            return []
        text = self._jvm.org.apache.commons.lang3.ArrayUtils.toString(array)
        found = _STATUS.findall(text)
        if any(p == "null" for p, _ in found):  # a wrapper status (viewfs) whose text has no path
            return [(self.rel(st.getPath()), bool(st.isDirectory())) for st in array]
        return [(self._rel_text(p), kind == "true") for p, kind in found]

    def _rel_text(self, qualified: str) -> str:
        path = qualified
        if "://" in path:  # scheme://authority/path
            path = path[path.find("/", path.index("://") + 3):]
        elif ":" in path.split("/", 1)[0]:  # scheme:/path
            path = path[path.index(":") + 1:]
        if path == self._root_path:
            return ""
        if not path.startswith(self._root_path + "/"):
            raise ValueError(f"{qualified} is not under the output {self.uri}")
        return path[len(self._root_path) + 1:]

    def list(self, rel: str = "") -> list[tuple[str, bool]]:
        """``(name, is_directory)`` of the entries directly in ``rel`` (none when it is missing).
        On the local filesystem the text of each status runs an ``ls`` process (Hadoop loads
        its permissions lazily, without its native library): where the names are enough,
        ``names`` is much cheaper."""
        p = self.path(rel)
        if not self.fs.exists(p):
            return []
        return sorted((r.rpartition("/")[2], d) for r, d in self._statuses(self.fs.listStatus(p)))

    def names(self, rel: str = "") -> list[str]:
        """The names of the entries directly in ``rel`` (none when it is missing), sorted: one
        glob (``rel/*``) and the text of its paths, a few gateway calls whatever the number of
        entries, and no status text (``list``)."""
        if _GLOB & set(self._root_path + "/" + str(rel)):
            return [name for name, _ in self.list(rel)]
        found = self.fs.globStatus(self.path(f"{str(rel).rstrip('/')}/*" if rel else "*"))
        if found is None or len(found) == 0:
            return []
        text = str(self._jvm.org.apache.commons.lang3.ArrayUtils.toString(
            self._jvm.org.apache.hadoop.fs.FileUtil.stat2Paths(found)))
        # "{P/a,P/b}" where P is the directory's qualified path (names never hold "," + P)
        parent = self.path(rel).toString().rstrip("/") + "/"
        items = text[1:-1].split("," + parent)
        if not items[0].startswith(parent) or any("/" in i for i in items[1:]):  # pragma: no cover
            return [name for name, _ in self.list(rel)]  # a path whose text is not the expected one
        items[0] = items[0][len(parent):]
        return sorted(items)

    def walk(self, rel: str = "") -> list[tuple[str, bool]]:
        """Every entry under ``rel``, recursively — ``(path relative to the root,
        is_directory)``, sorted; none when ``rel`` is missing: one glob per directory level
        (``rel/*``, ``rel/*/*``, ...), a few gateway calls each, whatever the number of files."""
        p = self.path(rel)
        if not self.fs.exists(p):
            return []
        found: list[tuple[str, bool]] = []
        if _GLOB & set(self._root_path + "/" + str(rel)):  # not a glob: directory by directory
            todo = [p]
            while todo:
                entries = self._statuses(self.fs.listStatus(todo.pop()))
                found += entries
                todo += [self.path(r) for r, is_dir in entries if is_dir]
            return sorted(found)
        pattern = str(rel).rstrip("/")
        for _ in range(64):
            pattern = f"{pattern}/*" if pattern else "*"
            entries = self._statuses(self.fs.globStatus(self.path(pattern)))
            found += entries
            if not any(is_dir for _, is_dir in entries):
                break
        return sorted(found)

    def walk_files(self, rel: str = "") -> Iterator[str]:
        """Every file under ``rel``, recursively, relative to the root (sorted; ``walk``)."""
        return iter([r for r, is_dir in self.walk(rel) if not is_dir])

    def read_text(self, rel: str) -> str | None:
        p = self.path(rel)
        if not self.fs.exists(p):
            return None
        stream = self.fs.open(p)
        try:
            return bytes(stream.readAllBytes()).decode("utf-8")
        finally:
            stream.close()

    # -- changes -----------------------------------------------------------------------------

    def mkdirs(self, rel: str = "") -> None:
        self.fs.mkdirs(self.path(rel))

    def write_text(self, rel: str, text: str, *, atomic: bool = False) -> None:
        """Write ``text`` (UTF-8) to ``rel``, replacing it; ``atomic``: through a temporary
        file synced to disk (``hsync``) and renamed over it (module docstring), so a reader or
        a crash sees the old content or the new, never a part.  Without ``atomic`` (a staged
        file, moved into place by a commit) nothing is synced: a run writes thousands of them."""
        target = self.path(rel)
        dest = self._Path(target.getParent(), f".{target.getName()}.{uuid.uuid4().hex[:8]}.tmp") if atomic else target
        stream = self.fs.create(dest, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
            if atomic:
                stream.hsync()
        finally:
            stream.close()
        if atomic:
            self._replace(dest, target)

    def move(self, src: str, dst: str) -> bool:
        """Rename the file ``src`` to ``dst``, replacing a file there (``dst``'s parent directories
        made); ``False`` when ``src`` does not exist — moved already: a roll-forward repeats the
        moves of a commit.  One rename (two more calls where it fails: is ``src`` gone, or does
        this filesystem's rename not replace a file?)."""
        parent = str(dst).rpartition("/")[0]
        if parent not in self._made:
            self.fs.mkdirs(self.path(parent))
            self._made.add(parent)
        s, d = self.path(src), self.path(dst)
        if self._rename(s, d):  # the local filesystem's rename(2) replaces a file atomically
            return True
        if not self.fs.exists(s):
            return False
        self._overwrite(s, d)
        return True

    def move_dir(self, src: str, dst: str) -> bool:
        """Rename the directory ``src`` to ``dst``, which does not exist yet (its parent does):
        one rename, whatever the number of files in it — atomic on a local filesystem and HDFS.
        ``False`` when ``src`` does not exist (moved already: a roll-forward repeats it).  When
        ``dst`` exists — an object store renames a directory by copying it file by file, so a
        crash can leave part of it there — the files of ``src`` are moved into it one by one
        (``move``) and ``src`` is deleted: never the directory itself, which Hadoop's rename
        would put *inside* ``dst``.  Files whose names begin with ``.`` (a local filesystem's
        ``.crc`` side files) are left to the rename of their file."""
        s, d = self.path(src), self.path(dst)
        if not self.fs.exists(d):
            if self._rename(s, d):
                return True
            if not self.fs.exists(s):
                return False
            raise OSError(f"cannot rename {s.toString()} to {d.toString()}")
        if not self.fs.exists(s):
            return False
        base = self.rel(s)
        for f in self.walk_files(base):
            if not f.rpartition("/")[2].startswith("."):
                self.move(f, f"{str(dst).rstrip('/')}/{f[len(base) + 1:]}")
        self.fs.delete(s, True)
        return True

    def rename_new(self, src: str, dst: str) -> None:
        """Rename ``src`` (a file or a directory) to ``dst``, which the caller knows does not
        exist (from a listing just made; its parent exists): one rename, without ``move_dir``'s
        check — on the local filesystem ``exists`` of a missing path costs more than the
        rename (Hadoop builds a ``FileNotFoundException``).  Raises ``OSError`` when the rename
        fails."""
        s, d = self.path(src), self.path(dst)
        if not self._rename(s, d):
            raise OSError(f"cannot rename {s.toString()} to {d.toString()}")

    def _rename(self, s, d) -> bool:
        """Hadoop's rename of ``s`` to ``d``: ``False`` where it fails — also where it raises
        ``FileNotFoundException``, as the local filesystem does for a missing ``s`` (HDFS
        returns ``False``; Hadoop's filesystem specification allows both)."""
        from py4j.protocol import Py4JJavaError

        try:
            return bool(self.fs.rename(s, d))
        except Py4JJavaError as exc:
            if exc.java_exception.getClass().getName() != "java.io.FileNotFoundException":
                raise
            return False

    def put_tree(self, local: str, rel: str) -> None:
        """Move the local directory ``local`` — files the driver wrote with Python — to ``rel``,
        which does not exist yet (its parent does); ``local`` is gone afterwards.  On a local
        output one rename (Hadoop copies when the two are on different filesystems), elsewhere
        Hadoop's copy from the local filesystem: the files are made in the JVM, without a
        gateway call each.  Where many small files are made at once this is much cheaper than
        ``write_text`` per file: on the local filesystem without Hadoop's native library, every
        ``create`` and ``mkdirs`` of Hadoop's runs a ``chmod`` process (``setPermission``)."""
        src = self._Path(Path(local).resolve().as_uri())
        dst = self.path(rel)
        if self.scheme == "file" and self.fs.rename(src, dst):
            return
        self.fs.copyFromLocalFile(True, False, src, dst)

    def _replace(self, s, d) -> None:
        if self.fs.rename(s, d):  # the local filesystem's rename(2) replaces a file atomically
            return
        if not self.fs.exists(s):
            raise FileNotFoundError(f"cannot rename {s.toString()}: it does not exist")
        self._overwrite(s, d)

    def _overwrite(self, s, d) -> None:
        """Rename ``s`` over the existing file ``d``, where this filesystem's rename does not
        replace (HDFS, object stores): FileContext's rename with OVERWRITE (atomic on HDFS)."""
        if self._fc is None:
            self._fc = self._jvm.org.apache.hadoop.fs.FileContext.getFileContext(self.root.toUri(), self._conf)
        Rename = self._jvm.org.apache.hadoop.fs.Options.Rename
        opts = self._gateway.new_array(Rename, 1)
        opts[0] = Rename.OVERWRITE
        self._fc.rename(s, d, opts)

    def delete(self, rel: str, recursive: bool = False) -> bool:
        """Delete ``rel`` (a directory with ``recursive``); ``False`` when it did not exist."""
        return bool(self.fs.delete(self.path(rel), recursive))

    def copy_to_local(self, rel: str, local: str) -> None:
        self.fs.copyToLocalFile(False, self.path(rel), self._Path(f"file://{local}"), True)

    def copy_from_local(self, local: str, rel: str) -> None:
        self.fs.copyFromLocalFile(False, True, self._Path(f"file://{local}"), self.path(rel))

    def close(self) -> None:
        self.fs.close()
