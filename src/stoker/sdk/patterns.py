"""Regular expressions written by users, matched in time linear in the text (RE2).

Owns the one way a pattern from a template, a parameter constraint or a yaql expression
is compiled. Python's ``re`` backtracks: ``(a+)+$`` against fifty ``a`` and a ``!``
takes longer than the age of the universe, in one C call that holds the GIL, so no
timeout in the process can stop it. RE2 never backtracks; what it gives up for that
(backreferences, lookahead and lookbehind) is refused with a message that says so.

The module answers enough of ``re``'s surface (``compile``, ``search``, ``escape``, the
flags yaql passes) to stand in for it where user patterns are matched.
Must not: be used for the engine's own fixed patterns; ``re`` is right for those.
"""

from __future__ import annotations

import re as _python_re
from typing import Any

import re2

__all__ = ["DOTALL", "IGNORECASE", "MULTILINE", "UNICODE", "PatternError", "compile", "escape", "error", "search"]

# The values of ``re``'s flags, so code written for ``re`` passes them unchanged.
IGNORECASE = int(_python_re.IGNORECASE)
MULTILINE = int(_python_re.MULTILINE)
DOTALL = int(_python_re.DOTALL)
UNICODE = int(_python_re.UNICODE)  # RE2 reads text as UTF-8 always

_INLINE_FLAGS = ((IGNORECASE, "i"), (MULTILINE, "m"), (DOTALL, "s"))
# Memory RE2 may take for one compiled pattern (bytes); a pattern needing more is refused.
MAX_PATTERN_MEMORY_BYTES = 8 * 1024 * 1024


class PatternError(ValueError):
    """A pattern RE2 cannot compile: invalid, or using a feature only backtracking has."""


error = PatternError  # ``re.error``'s name, for code written against ``re``


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.max_mem = MAX_PATTERN_MEMORY_BYTES
    return options


_OPTIONS = _options()


def compile(pattern: str, flags: int = 0) -> Any:  # noqa: A001 - ``re.compile``'s name
    """The compiled pattern (``search``, ``match``, ``fullmatch``, ``finditer``, ``sub``,
    ``split``, with ``re``'s signatures); raises PatternError."""
    if not isinstance(pattern, str):
        raise PatternError(f"a pattern must be a string, not {type(pattern).__name__}")
    letters = "".join(letter for flag, letter in _INLINE_FLAGS if flags & flag)
    text = f"(?{letters}){pattern}" if letters else pattern
    try:
        return re2.compile(text, _OPTIONS)
    except re2.error as failure:
        detail = failure.args[0] if failure.args else "invalid pattern"
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
    try:
        _python_re.compile(text)  # compiling does not backtrack; only matching does
    except _python_re.error as invalid:
        raise PatternError(str(invalid)) from None  # the message a Python user knows
    raise PatternError(
        f"it needs a backtracking matcher ({detail}); patterns are matched by RE2, in linear "
        "time, without backreferences, lookahead or lookbehind"
    )


def search(pattern: str, string: str, flags: int = 0) -> Any:
    return compile(pattern, flags).search(string)


def escape(text: str) -> str:
    return re2.escape(text)
