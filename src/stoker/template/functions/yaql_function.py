"""yaql: evaluate a YAQL expression on data, within limits (from 2016-10-14).

Owns the YAQL limits and the ``yaql`` function. ``limit_iterators`` (elements a
collection may have) and ``memory_quota`` (bytes a value may take) are Heat's ``[yaql]``
options with Heat's defaults, enforced by yaql itself. The rest Heat lacks, and a user's
expression needs: ``time_limit_s`` bounds the wall time of one evaluation and
``worker_memory_bytes`` the memory of the process evaluating it. Both are enforced from
outside the evaluation: expressions run in worker processes
(``stoker.template.functions.yaql_sandbox``) that are killed when they miss the deadline,
because one C call (a power with millions of digits, a regular expression) cannot be
interrupted from within. Expressions are parsed here, in the caller's process (to report
a bad one at validation), and evaluated there; the result is JSON data within the value
budget (``stoker.template.budget``).
"""

from __future__ import annotations

import collections.abc  # noqa: F401 - yaql 3 uses collections.abc without importing it
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template import budget
from stoker.template.functions import yaql_sandbox
from stoker.template.functions.base import Function, ResolutionContext, contains_unresolved, resolve


@dataclass(frozen=True)
class YaqlLimits:
    limit_iterators: int = 200  # elements in one collection (Heat's default)
    memory_quota: int = 10_000  # bytes one value may take (Heat's default)
    time_limit_s: float = 1.0  # wall time of one evaluation
    # Address space of a worker process (bytes): the interpreter and yaql take about 30 MB.
    worker_memory_bytes: int = 256 * 1024 * 1024
    workers: int = 2  # worker processes evaluating at once


DEFAULT_LIMITS = YaqlLimits()
_limits = DEFAULT_LIMITS


def configure(limits: YaqlLimits) -> None:
    """Set the limits every yaql evaluation uses from now on (engine configuration)."""
    global _limits
    _limits = limits


def current_limits() -> YaqlLimits:
    return _limits


_engines: dict[tuple[int, int], Any] = {}
_expressions: OrderedDict[tuple[tuple[int, int], str], Any] = OrderedDict()
_EXPRESSION_CACHE_SIZE = 256
_lock = threading.Lock()  # guards the two caches; yaql engines themselves are shared read-only


def _engine(limits: YaqlLimits) -> Any:
    key = (limits.limit_iterators, limits.memory_quota)
    # yaql (about 20 ms to import, most of the template package's start) is loaded
    # when a template first parses an expression, not by every command that loads the
    # function tables: a read of a stack whose template has no yaql never needs it.
    import yaql

    with _lock:
        engine = _engines.get(key)
        if engine is None:
            options = {"yaql.limitIterators": limits.limit_iterators, "yaql.memoryQuota": limits.memory_quota}
            engine = _engines[key] = yaql.YaqlFactory().create(options)
        return engine


def parse_expression(text: str, limits: YaqlLimits | None = None) -> Any:
    """The parsed expression; raises ValueError with yaql's message when it is invalid."""
    limits = limits or _limits
    key = ((limits.limit_iterators, limits.memory_quota), text)
    with _lock:
        parsed = _expressions.get(key)
        if parsed is not None:
            _expressions.move_to_end(key)
            return parsed
    from yaql.language import exceptions as yaql_errors

    try:
        parsed = _engine(limits)(text)
    except yaql_errors.YaqlException as error:
        raise ValueError(str(error))
    except RecursionError:
        raise ValueError("the expression is nested too deeply")
    with _lock:
        _expressions[key] = parsed
        if len(_expressions) > _EXPRESSION_CACHE_SIZE:
            _expressions.popitem(last=False)
    return parsed


def evaluate(text: str, data: Any, limits: YaqlLimits | None = None) -> Any:
    """Evaluate ``text`` with ``$.data`` bound to ``data``, in a worker process. Raises
    ValueError with a plain message for a bad expression or a broken limit."""
    limits = limits or _limits
    parse_expression(text, limits)  # a bad expression is refused without a worker
    request = yaql_sandbox.Request(
        expression=text,
        data=data,
        limit_iterators=limits.limit_iterators,
        memory_quota=limits.memory_quota,
        time_limit_s=limits.time_limit_s,
        max_result_bytes=budget.max_value_bytes(),
    )
    return yaql_sandbox.pool(limits.workers, limits.worker_memory_bytes).evaluate(request)


_EXAMPLE = "{yaql: {expression: $.data.var1.sum(), data: {var1: [3, 2, 1]}}}"


class Yaql(Function):
    """``{yaql: {expression: TEXT, data: {...}}}``: the value of the YAQL expression, with
    ``$.data`` bound to ``data`` (optional)."""

    __slots__ = ()
    description = "A function for executing a yaql expression."

    def check(self) -> None:
        args = self.args
        if not isinstance(args, dict):
            raise self.error(f'Arguments to "{self.fn_name}" must be a map.', hint=_EXAMPLE)
        if "expression" not in args or set(args) - {"expression", "data"}:
            raise self.error(
                f'"{self.fn_name}" syntax should be a map with the keys expression and (optionally) data',
                hint=_EXAMPLE,
            )
        expression = args["expression"]
        if isinstance(expression, Function):
            return
        self._parse(expression)

    def _parse(self, expression: Any) -> Any:
        if not isinstance(expression, str):
            raise self.error(f'The "expression" argument to {self.fn_name} must contain a string.')
        try:
            return parse_expression(expression)
        except ValueError as error:
            raise self.error(f"Bad expression {error}.")

    def result(self, context: ResolutionContext) -> Any:
        expression = resolve(self.args["expression"], context)
        data = resolve(self.args.get("data", {}), context)
        if expression is UNRESOLVED or contains_unresolved(data):
            return UNRESOLVED
        self._parse(expression)
        try:
            return evaluate(expression, data)
        except ValueError as error:
            raise self.error(f"The yaql expression failed: {error}")
