"""The file ``spark-submit`` runs: the ``ddlcore`` command line as a Python application.

``spark-submit`` takes a ``.py`` file, not a console script or a module, so::

    spark-submit --master spark://HOST:7077 [--conf ...] "$(python -m ddlcore.spark.submit)" \\
        run --changelog LOG --out OUT

``python -m ddlcore.spark.submit`` prints this file's path; run as a script (what
``spark-submit`` does) it runs ``ddlcore`` with its arguments.  The session then takes the
master and properties ``spark-submit`` was given (``ddlcore.spark.pipeline.submitted``).
"""

from __future__ import annotations

import sys


def _main() -> None:
    if __spec__ is not None:  # python -m ddlcore.spark.submit
        print(__file__)
        return
    # run as a script: its directory (ddlcore/spark) is sys.path[0], where ``schema``,
    # ``options``, ... would shadow top-level modules of those names
    sys.path.pop(0)
    from ddlcore.cli import main

    main(prog_name="ddlcore")


if __name__ == "__main__":
    _main()
