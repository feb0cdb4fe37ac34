"""Errors and warnings found in templates and environments, each with its place.

    StokerError (stoker.sdk.exceptions)
      ValidationError
        TemplateError            one problem: message, template path, file:line:column, hint
          TemplateSyntaxError    the text is not valid YAML/JSON
          TemplateLimitError     the text is too big, too deep or expands too much
          InvalidTemplateVersionError  the version key names no known version
        TemplateErrors           several TemplateErrors found in one pass (validation lists all)
        NestedStackErrors        a nested stack's TemplateErrors, as one error of its resource

``TemplateWarning`` is not an exception: something Heat accepts silently that an author
probably did not mean (a key written twice, a function name the version does not have).
It is reported beside the result and never stops anything.

A template path is dotted (``resources.web.properties.flavor``) with list indexes in
brackets (``depends_on[0]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from stoker.sdk.exceptions import StokerError, ValidationError


@dataclass(frozen=True, slots=True)
class Location:
    """Where a node sits in its source file (line and column are 1-based)."""

    file: str | None
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file or '<template>'}:{self.line}:{self.column}"


def format_path(path: Iterable[object]) -> str:
    """``('resources', 'web', 'depends_on', 0)`` -> ``resources.web.depends_on[0]``."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            text += f".{step}" if text else str(step)
    return text


class TemplateError(ValidationError):
    """A problem at one place in a template or environment."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        location: Location | None = None,
        hint: str | None = None,
    ):
        super().__init__(message, path=path, hint=hint)
        self.location = location
        # A nested stack's problems this one sums up in Heat's words (``verbatim``).
        self.nested: list[TemplateError] = []

    @classmethod
    def of(cls, error: StokerError, path: str | None = None) -> TemplateError:
        """``error`` at its own path (or ``path``), keeping its hint and whether its
        message is Heat's verbatim text."""
        found = cls(error.message, path=error.path or path, location=getattr(error, "location", None), hint=error.hint)
        found.verbatim = error.verbatim
        if error.verbatim:  # Heat's words do not place the problems they sum up: keep them
            found.nested = list(getattr(error, "errors", ()))
        return found

    def __str__(self) -> str:
        where = []
        if self.location is not None:
            where.append(str(self.location))
        if self.path:
            where.append(self.path)
        text = f"{': '.join(where)}: {self.message}" if where else self.message
        if self.hint:
            text = f"{text} ({self.hint})"
        return text + "".join(f"\n    - {error}" for error in self.nested)


class InvalidTemplateVersionError(TemplateError):
    """The template's version key names no version stoker knows (Heat's InvalidTemplateVersion)."""


class TemplateSyntaxError(TemplateError):
    """The document cannot be parsed."""


class TemplateLimitError(TemplateError):
    """The document breaks a size, depth or expansion limit."""


class TemplateErrors(ValidationError):
    """Every problem found in one validation pass."""

    def __init__(self, errors: list[TemplateError]):
        # In reading order: by position where known, the rest after. A problem found
        # twice (when the template is read, and again when what uses it is evaluated)
        # is reported once.
        unique: dict[str, TemplateError] = {}
        for error in errors:
            unique.setdefault(str(error), error)
        self.errors = sorted(
            unique.values(),
            key=lambda e: (e.location is None, e.location.line if e.location else 0, e.location.column if e.location else 0),
        )
        super().__init__("; ".join(str(e) for e in self.errors) or "invalid template")

    def __str__(self) -> str:
        if len(self.errors) == 1:
            return str(self.errors[0])
        return f"{len(self.errors)} problems:\n" + "\n".join(f"  - {e}" for e in self.errors)


class NestedStackErrors(ValidationError):
    """A nested stack's problems as one error of the resource that makes the stack:
    ``errors`` are the nested template's, each with its own place."""

    def __init__(self, message: str, errors: list[TemplateError], *, path: str | None = None):
        super().__init__(message, path=path)
        self.errors = list(errors)

    def __str__(self) -> str:
        text = super().__str__()
        if self.verbatim:  # Heat's words, which do not place each nested problem: list them
            text += "".join(f"\n    - {error}" for error in self.errors)
        return text


@dataclass(slots=True)
class TemplateWarning:
    """Something Heat accepts (so stoker does too) that an author may not have meant,
    with its place; shown as ``file:line:column: path: message (hint)``."""

    message: str
    path: str | None = None
    location: Location | None = None
    hint: str | None = None

    def __str__(self) -> str:
        where = [str(part) for part in (self.location, self.path) if part]
        text = f"{': '.join(where)}: {self.message}" if where else self.message
        return f"{text} ({self.hint})" if self.hint else text
