"""Regular expressions written by users, matched in time linear in the text (RE2), or
under a time limit when they need backtracking.

Owns the one way a pattern from a template, a parameter constraint or a yaql expression
is compiled. Python's ``re`` backtracks: ``(a+)+$`` against fifty ``a`` and a ``!``
takes longer than the age of the universe, in one C call that holds the GIL, so no
timeout in the process can stop it. RE2 never backtracks, and takes every pattern it can
compile. The rest (backreferences, lookahead and lookbehind: a password policy such as
``^(?=.*[A-Z])(?=.*\\d).{8,}$`` is common in Heat templates) go to the ``regex`` module,
which matches with the GIL released and gives up after ``TIME_LIMIT_S``: such a match
that runs out of time raises ``PatternTimeoutError`` instead of stopping the server.

The module answers enough of ``re``'s surface (``compile``, ``search``, ``escape``, the
flags yaql passes) to stand in for it where user patterns are matched.
Must not: be used for the engine's own fixed patterns; ``re`` is right for those.
"""

from __future__ import annotations

import re as _python_re
from typing import Any

import re2
import regex as _timed_re

__all__ = ["DOTALL", "IGNORECASE", "MULTILINE", "UNICODE", "PatternError", "PatternTimeoutError", "UserPattern", "compile", "escape", "error", "search"]

# The values of ``re``'s flags, so code written for ``re`` passes them unchanged.
IGNORECASE = int(_python_re.IGNORECASE)
MULTILINE = int(_python_re.MULTILINE)
DOTALL = int(_python_re.DOTALL)
UNICODE = int(_python_re.UNICODE)  # RE2 reads text as UTF-8 always

_INLINE_FLAGS = ((IGNORECASE, "i"), (MULTILINE, "m"), (DOTALL, "s"))
# Memory RE2 may take for one compiled pattern (bytes); a pattern needing more is refused.
MAX_PATTERN_MEMORY_BYTES = 8 * 1024 * 1024
# How long one match of a backtracking pattern may take (seconds).
TIME_LIMIT_S = 1.0


class PatternError(ValueError):
    """A pattern RE2 cannot compile: invalid, or using a feature only backtracking has."""


class PatternTimeoutError(PatternError):
    """A backtracking pattern took longer than TIME_LIMIT_S to match a text."""


error = PatternError  # ``re.error``'s name, for code written against ``re``


class UserPattern:
    """A compiled user pattern, with ``re``'s method signatures: RE2's, or for a pattern
    RE2 cannot take, ``regex``'s with the GIL released and the time limit."""

    __slots__ = ("compiled", "pattern", "timed")

    def __init__(self, compiled: Any, pattern: str, timed: bool):
        self.compiled = compiled
        self.pattern = pattern
        self.timed = timed

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if not self.timed:
            return getattr(self.compiled, method)(*args, **kwargs)
        try:
            result = getattr(self.compiled, method)(*args, timeout=TIME_LIMIT_S, concurrent=True, **kwargs)
            return list(result) if method == "finditer" else result
        except TimeoutError:
            raise PatternTimeoutError(
                f"matching the pattern {self.pattern!r} took longer than {TIME_LIMIT_S:g} s "
                "(it backtracks); simplify it, or write it without lookaround or backreferences"
            ) from None

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("search", *args, **kwargs)

    def match(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("match", *args, **kwargs)

    def fullmatch(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("fullmatch", *args, **kwargs)

    def finditer(self, *args: Any, **kwargs: Any) -> Any:
        return iter(self._call("finditer", *args, **kwargs))

    def findall(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("findall", *args, **kwargs)

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("sub", *args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("split", *args, **kwargs)


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.max_mem = MAX_PATTERN_MEMORY_BYTES
    return options


_OPTIONS = _options()


def compile(pattern: str | UserPattern, flags: int = 0) -> UserPattern:  # noqa: A001 - ``re.compile``'s name
    """The compiled pattern (``search``, ``match``, ``fullmatch``, ``finditer``, ``sub``,
    ``split``, with ``re``'s signatures); raises PatternError."""
    if isinstance(pattern, UserPattern):
        return pattern
    if not isinstance(pattern, str):
        raise PatternError(f"a pattern must be a string, not {type(pattern).__name__}")
    letters = "".join(letter for flag, letter in _INLINE_FLAGS if flags & flag)
    text = f"(?{letters}){pattern}" if letters else pattern
    try:
        return UserPattern(re2.compile(text, _OPTIONS), pattern, timed=False)
    except re2.error as failure:
        detail = failure.args[0] if failure.args else "invalid pattern"
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
    try:
        _python_re.compile(text)  # compiling does not backtrack; only matching does
    except _python_re.error as invalid:
        raise PatternError(str(invalid)) from None  # the message a Python user knows
    try:
        return UserPattern(_timed_re.compile(text, _timed_re.V0), pattern, timed=True)
    except _timed_re.error as failure:  # valid for ``re`` but not for ``regex``: rare
        raise PatternError(f"{failure} (RE2 could not take it either: {detail})") from None


def search(pattern: str, string: str, flags: int = 0) -> Any:
    return compile(pattern, flags).search(string)


def escape(text: str) -> str:
    return re2.escape(text)
