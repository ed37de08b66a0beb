"""The ``ddlcore`` command line (click + rich): a package with one module per command group
below one module of shared helpers.

* ``common``: what every command shares — the root group (one-line errors, exit statuses,
  ``--debug``), the option vocabulary (``-o`` dialect options, ``-s`` Spark options, ``--conf``
  Spark properties, ``--dialect``, ``-v``, the capture commands' common options), the JSON and
  terminal renderings of the model.  It imports no command module.
* ``main``: the root ``ddlcore`` group, ``dialects``, ``parse`` and the ``capture`` group (its
  commands come from plugins); it registers the other groups.
* ``history_cli``: ``ddlcore history ...``; ``run_cli``: ``ddlcore run``.

The entry point is ``ddlcore.cli:main``; ``python -m ddlcore.cli`` runs it too.
"""

from .common import model_json, render_tables
from .main import main

__all__ = ["main", "model_json", "render_tables"]
