"""Automatic cyclic garbage collection paused for a block (``gc_paused``).

Owns: the pause.  For code that makes or holds many objects none of which is in a reference
cycle (a capture's batch of decoded messages, a run's lineages of every table): each
collection of the oldest generation walks the whole heap (the driver's modules, Spark's and
``pyiceberg``'s included: about 0.14 s per collection on this machine), and such a block
triggers several.  Reference counting still frees everything as usual; cyclic garbage made
meanwhile is collected later.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Automatic garbage collection off for the block (``gc.disable``), back on after it if it
    was on (module docstring)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
