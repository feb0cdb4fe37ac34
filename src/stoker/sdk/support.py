"""Support status of resource types, properties and attributes (seed 000).

Owns the SupportStatus value and the lifecycle rule
UNSUPPORTED -> SUPPORTED -> DEPRECATED -> HIDDEN, with DEPRECATED -> UNSUPPORTED.
It must not know about templates or the engine.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEPRECATED", "HIDDEN", "SUPPORTED", "SUPPORT_STATUSES", "UNKNOWN", "UNSUPPORTED", "Status", "SupportStatus"]

SUPPORT_STATUSES = (UNKNOWN, SUPPORTED, DEPRECATED, UNSUPPORTED, HIDDEN) = (
    "UNKNOWN",
    "SUPPORTED",
    "DEPRECATED",
    "UNSUPPORTED",
    "HIDDEN",
)

# Which status may follow which, going from previous_status to status.
_ALLOWED_NEXT = {
    UNSUPPORTED: {SUPPORTED},
    SUPPORTED: {DEPRECATED},
    DEPRECATED: {HIDDEN, UNSUPPORTED},
    HIDDEN: set(),
    UNKNOWN: {SUPPORTED, DEPRECATED, HIDDEN, UNSUPPORTED},
}


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
        if status not in SUPPORT_STATUSES:
            raise ValueError(f"Unknown support status {status!r}; use one of {', '.join(SUPPORT_STATUSES)}")
        if previous_status is not None and not isinstance(previous_status, SupportStatus):
            raise ValueError("previous_status must be a SupportStatus")
        self.status = status
        self.message = message
        self.version = version
        self.previous_status = previous_status
        self.substitute_class = substitute_class

    def chain_error(self) -> str | None:
        """Return why this status chain is impossible, or None when it is valid."""
        current: SupportStatus | None = self
        while current is not None and current.previous_status is not None:
            before = current.previous_status
            if current.status not in _ALLOWED_NEXT[before.status]:
                return f"support status {before.status} cannot be followed by {current.status}"
            current = before
        return None

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
