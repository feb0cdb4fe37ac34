"""yaql: evaluate a YAQL expression on data, within limits (from 2016-10-14).

Owns the YAQL engine and its limits: ``limit_iterators`` (elements a collection may have)
and ``memory_quota`` (bytes a value may take) are Heat's ``[yaql]`` options with Heat's
defaults, enforced by yaql itself; ``time_limit_s`` bounds the wall time of one
evaluation, which Heat lacks: nested loops (200 x 200 x 200 ...) or a count over an
endless sequence stay within the other two limits and would otherwise run for ever.

The time guard traces Python calls and the lines of yaql's own code in the evaluating
thread (``sys.settrace``), so it stops any loop written in Python; work done inside one C
call (a regular expression that backtracks for ever) cannot be interrupted this way.
While an expression runs, a tracer already installed (a debugger, coverage) is suspended.
"""

from __future__ import annotations

import collections.abc  # noqa: F401 - yaql 3 uses collections.abc without importing it
import os
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import yaql
from yaql.language import exceptions as yaql_errors

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, ResolutionContext, contains_unresolved, resolve


@dataclass(frozen=True)
class YaqlLimits:
    limit_iterators: int = 200  # elements in one collection (Heat's default)
    memory_quota: int = 10_000  # bytes one value may take (Heat's default)
    time_limit_s: float = 1.0  # wall time of one evaluation


DEFAULT_LIMITS = YaqlLimits()
_limits = DEFAULT_LIMITS


def configure(limits: YaqlLimits) -> None:
    """Set the limits every yaql evaluation uses from now on (engine configuration)."""
    global _limits
    _limits = limits


def current_limits() -> YaqlLimits:
    return _limits


class YaqlTimeoutError(BaseException):
    """Raised by the tracer inside the expression's frames. A BaseException, so that no
    ``except Exception`` in yaql can swallow it and carry on."""


_YAQL_DIR = os.path.dirname(yaql.__file__)
_engines: dict[tuple[int, int], Any] = {}
_expressions: OrderedDict[tuple[tuple[int, int], str], Any] = OrderedDict()
_EXPRESSION_CACHE_SIZE = 256
_lock = threading.Lock()  # guards the two caches; yaql engines themselves are shared read-only
_root_context = None


def _engine(limits: YaqlLimits) -> Any:
    key = (limits.limit_iterators, limits.memory_quota)
    with _lock:
        engine = _engines.get(key)
        if engine is None:
            options = {"yaql.limitIterators": limits.limit_iterators, "yaql.memoryQuota": limits.memory_quota}
            engine = _engines[key] = yaql.YaqlFactory().create(options)
        return engine


def _context() -> Any:
    global _root_context
    with _lock:
        if _root_context is None:
            _root_context = yaql.create_context()
        return _root_context.create_child_context()


def parse_expression(text: str, limits: YaqlLimits | None = None) -> Any:
    """The parsed expression; raises ValueError with yaql's message when it is invalid."""
    limits = limits or _limits
    key = ((limits.limit_iterators, limits.memory_quota), text)
    with _lock:
        parsed = _expressions.get(key)
        if parsed is not None:
            _expressions.move_to_end(key)
            return parsed
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
    """Evaluate ``text`` with ``$.data`` bound to ``data``. Raises ValueError with a
    plain message for a bad expression or a broken limit."""
    limits = limits or _limits
    statement = parse_expression(text, limits)
    deadline = time.monotonic() + limits.time_limit_s
    previous = sys.gettrace()

    def local(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise YaqlTimeoutError
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise YaqlTimeoutError
        # Line events only in yaql's own frames: its loops (a count over an endless
        # sequence) call nothing, so only their lines show that time passes.
        return local if frame.f_code.co_filename.startswith(_YAQL_DIR) else None

    sys.settrace(tracer)
    try:
        return statement.evaluate({"data": data}, _context())
    except YaqlTimeoutError:
        raise ValueError(f"the expression ran longer than {limits.time_limit_s:g} s and was stopped")
    except yaql_errors.CollectionTooLargeException:
        raise ValueError(f"the expression built a collection of more than {limits.limit_iterators} elements")
    except yaql_errors.MemoryQuotaExceededException:
        raise ValueError(f"the expression used more than {limits.memory_quota} bytes of memory")
    except RecursionError:
        raise ValueError("the expression is nested too deeply")
    except (yaql_errors.YaqlException, ArithmeticError, TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
        raise ValueError(f"{type(error).__name__}: {error}")
    finally:
        sys.settrace(previous)


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
