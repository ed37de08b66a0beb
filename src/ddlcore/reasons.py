"""The key a quarantine record's reason is counted under, in a run's summary
(``RunResult.quarantine_reasons``) and in ``ddlcore status`` (``quarantine.reasons``).

Owns: ``short_reason``.  Imports nothing of Spark (``ddlcore status`` loads no pyspark).  Must
not know: how a reason is made (``ddlcore.spark.pipeline`` and the converters write them).
"""

from __future__ import annotations

import re

__all__ = ["short_reason"]

#: reasons that go on with details after their first ``": "``: their key is the part before it
_HEADS = ("cannot convert", "DDL could", "statement-format DML", "capture", "malformed")


def short_reason(reason: str) -> str:
    """The quarantine summary's key: the reason up to its first colon for the reasons that go
    on with details (conversion errors, DDL errors, blocked tables, statements); ``schema
    unknown since seq N``; for a malformed line of ``file:line``, its ``malformed ...`` part."""
    for head in _HEADS:
        if reason.startswith(head):
            return reason.split(": ", 1)[0]
    m = re.match(r"(schema unknown since seq \d+)", reason)
    if m:
        return m.group(1)
    m = re.match(r"(.+?:\d+): (malformed .*)", reason)
    if m:
        return m.group(2).split(": ", 1)[0]
    return reason
