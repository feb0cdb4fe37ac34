"""Values Heat allows that stoker cannot serve (a transport that needs Keystone or
Zaqar, say), refused when a template is validated with the reason and what to use.

A constraint rather than a check in ``validate()``: it applies as soon as the value is
known, even while other properties of the resource still wait for references.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stoker.sdk.constraints import AllowedValues


class ServedValues(AllowedValues):
    """The value is one stoker serves: each of ``unserved`` is refused with its reason."""

    def __init__(self, allowed: Sequence[str], unserved: Mapping[str, str], property_name: str):
        super().__init__([value for value in allowed if value not in unserved])
        self.unserved = dict(unserved)
        self.property_name = property_name

    def _explain(self, value: Any) -> str:
        reason = self.unserved.get(value)
        served = ", ".join(self.allowed)
        if reason is None:
            return super()._explain(value)
        return f"{self.property_name} {value} is not supported: {reason}; use one of {served}"

    def to_dict(self) -> dict[str, Any]:
        return {"allowed_values": list(self.allowed), "description": "the values stoker serves"}
