/*
 * Hadoop's local filesystem (file:) with permissions set in the JVM instead of by a process.
 *
 * Without Hadoop's native library (libhadoop, which pip's pyspark does not ship),
 * RawLocalFileSystem.setPermission runs the chmod program for every file and directory it
 * creates: a process per Parquet file, per partition directory and per task attempt
 * directory that Spark's writers make.  This subclass sets the same mode through
 * java.nio's "unix" file attribute view (chmod(2) in this process).  Mode bits follow
 * chmod(1) exactly: the permission and sticky bits as given; a directory keeps its
 * set-user-ID and set-group-ID bits, a file loses them.  Where the JVM has no "unix" view,
 * Hadoop's own method runs.
 *
 * Compiled and used by ddlcore.spark.localjvm (docs/pipeline.md, Performance).  Reads and writes
 * exactly what LocalFileSystem does, checksum files included.
 */
package ddlcore.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

public class NioLocalFileSystem extends LocalFileSystem {
  public NioLocalFileSystem() {
    super(new Raw());
  }

  /** RawLocalFileSystem with setPermission in the JVM. */
  public static class Raw extends RawLocalFileSystem {
    private static final int SET_ID_BITS = 06000;
    private static final int MODE_BITS = 01777;

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      java.nio.file.Path path = pathToFile(p).toPath();
      int mode = permission.toShort() & MODE_BITS;
      try {
        if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
          int current = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
          mode |= current & SET_ID_BITS;
        }
        Files.setAttribute(path, "unix:mode", mode);
      } catch (UnsupportedOperationException | IllegalArgumentException e) {
        super.setPermission(p, permission);
      }
    }
  }
}
