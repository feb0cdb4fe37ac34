"""The limits on evaluating a template, set from the settings in one call.

Owns the wiring from ``Settings`` to the value budget (``stoker.template.budget``) and
the yaql limits (``stoker.template.functions.yaql_function``), which are process-wide:
every template evaluated afterwards is held to them.
Must not: hold limits of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stoker.template import budget
from stoker.template.functions import yaql_function

if TYPE_CHECKING:
    from stoker.settings import Settings


def configure(settings: Settings) -> None:
    budget.configure(settings.max_value_bytes)
    yaql_function.configure(
        yaql_function.YaqlLimits(
            limit_iterators=settings.yaql_limit_iterators,
            memory_quota=settings.yaql_memory_quota_bytes,
            time_limit_s=settings.yaql_time_limit_s,
            workers=settings.yaql_workers,
            worker_memory_bytes=settings.yaql_worker_memory_bytes,
        )
    )
