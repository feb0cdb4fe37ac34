"""Support status of resource types, properties and attributes (seed 000).

Owns the SupportStatus value and the lifecycle UNSUPPORTED -> SUPPORTED -> DEPRECATED ->
HIDDEN, with DEPRECATED -> UNSUPPORTED. The lifecycle is a process, not a grammar: Heat
checks no chain, and its own plugins skip steps (magnum's BayModel hides a property
straight from SUPPORTED). A chain that skips a step or goes back is loaded as written; the
plugin loader reports ``lifecycle_note`` as a warning. It must not know about templates or
the engine.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

__all__ = ["DEPRECATED", "HIDDEN", "SUPPORTED", "SUPPORT_STATUSES", "UNKNOWN", "UNSUPPORTED", "Status", "SupportStatus"]

SUPPORT_STATUSES = (UNKNOWN, SUPPORTED, DEPRECATED, UNSUPPORTED, HIDDEN) = (
    "UNKNOWN",
    "SUPPORTED",
    "DEPRECATED",
    "UNSUPPORTED",
    "HIDDEN",
)

# A release mark, "5.0.0" or "2014.2": what a status given where a version belongs looks like.
_VERSION = re.compile(r"^\d+(\.\d+)+$")

# Which status follows which in the lifecycle, going from previous_status to status.
_LIFECYCLE_NEXT = {
    UNSUPPORTED: {SUPPORTED},
    SUPPORTED: {DEPRECATED},
    DEPRECATED: {HIDDEN, UNSUPPORTED},
    HIDDEN: set(),
    UNKNOWN: {SUPPORTED, DEPRECATED, HIDDEN, UNSUPPORTED},
}


_ORDER = (UNSUPPORTED, SUPPORTED, DEPRECATED, HIDDEN)


def _departure(before: str, after: str) -> str:
    if before in _ORDER and after in _ORDER and _ORDER.index(after) > _ORDER.index(before):
        skipped = _ORDER[_ORDER.index(before) + 1 : _ORDER.index(after)]
        return f"{before} -> {after} skips {' and '.join(skipped)}"
    return f"{before} -> {after} goes back"


class SupportStatus:
    """Where a type, property or attribute stands in its lifecycle."""

    def __init__(
        self,
        status: str = SUPPORTED,
        message: str | None = None,
        version: str | None = None,
        previous_status: SupportStatus | None = None,
        substitute_class: type | None = None,
    ):
        if previous_status is not None and not isinstance(previous_status, SupportStatus):
            raise ValueError("previous_status must be a SupportStatus")
        if status not in SUPPORT_STATUSES:
            # Heat's SupportStatus.validate: not fatal, the status becomes UNKNOWN (a plugin
            # written for Heat, ``SupportStatus('5.0.0')``, loads there and must load here).
            # The plugin loader reports the warning with the plugin's path.
            hint = f" (did you mean version={status!r}?)" if isinstance(status, str) and _VERSION.match(status) else ""
            warnings.warn(
                f"Unknown support status {status!r}{hint}; use one of {', '.join(SUPPORT_STATUSES)}. "
                f"Defaulting to {UNKNOWN}",
                UserWarning,
                stacklevel=2,
            )
            status, message, version, previous_status = UNKNOWN, f"Specified status is invalid, defaulting to {UNKNOWN}", None, None
        self.status = status
        self.message = message
        self.version = version
        self.previous_status = previous_status
        self.substitute_class = substitute_class

    def lifecycle_note(self) -> str | None:
        """How this status chain departs from the lifecycle (a step skipped, a step back),
        or None when it follows it. Never a reason to refuse the object (seed 000)."""
        notes = []
        current: SupportStatus | None = self
        while current is not None and current.previous_status is not None:
            before = current.previous_status
            if current.status not in _LIFECYCLE_NEXT[before.status]:
                notes.append(_departure(before.status, current.status))
            current = before
        if not notes:
            return None
        return (
            f"support status {'; '.join(reversed(notes))} "
            f"(the lifecycle is {' -> '.join(_ORDER)}, or {DEPRECATED} -> {UNSUPPORTED}); loaded as written"
        )

    def says_more_than_supported(self) -> bool:
        """Whether this status tells more than the default ``SupportStatus()`` (a version
        a SUPPORTED object is available since, a message, a history): then the schema's
        resource-type view shows it."""
        return self.status != SUPPORTED or any(value is not None for value in (self.version, self.message, self.previous_status))

    def is_substituted(self, new_class: type) -> bool:
        """Whether a resource of this status may become ``new_class`` in place: its
        ``substitute_class`` or a class extending it (seed 000). Heat's is_substituted
        accepts the substitute class itself only."""
        return isinstance(self.substitute_class, type) and isinstance(new_class, type) and issubclass(new_class, self.substitute_class)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "version": self.version,
            "previous_status": self.previous_status.to_dict() if self.previous_status else None,
        }

    def __repr__(self) -> str:
        return f"SupportStatus({self.status!r}, version={self.version!r})"


def Status(version: str | None = None, **kwargs: Any) -> SupportStatus:  # noqa: N802 - seed guide name
    """Shorthand used by the seed guide: ``support.Status('5.0.0')``."""
    return SupportStatus(version=version, **kwargs)
