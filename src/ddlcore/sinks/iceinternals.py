"""The ``pyiceberg`` versions whose internals ddlcore's Iceberg modules are written against.

``ddlcore.sinks.rowdelta`` (the current-state snapshot), ``iceavro`` (the manifest writers'
cached schemas), ``icecreate`` (a new table's metadata and catalog row), ``icesnap`` and
``icetx`` use ``pyiceberg`` names that are not its public API; each checks ``SUPPORTED``
before relying on them (``rowdelta.check_version`` refuses a run with another version; the
others fall back to ``pyiceberg``'s public path).

Owns: ``SUPPORTED``, ``supported``.  Must not know: what the internals are used for.
"""

from __future__ import annotations

__all__ = ["SUPPORTED", "supported"]

#: ``pyiceberg`` versions (prefixes of ``pyiceberg.__version__``) the internals were read from
SUPPORTED = ("0.12.",)


def supported() -> bool:
    """Whether the installed ``pyiceberg`` is one of ``SUPPORTED``."""
    import pyiceberg

    return pyiceberg.__version__.startswith(SUPPORTED)
