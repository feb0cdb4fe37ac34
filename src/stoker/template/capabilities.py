"""The ``capabilities`` section of a HOT template (heat_template_version 2015-10-15 and
later): what a template says it provides, so that an environment can choose among
candidate templates for one type (seed 003, Heat's resource-capabilities blueprint).

One section, two uses:

* tag-based: ``deployment: puppet``. Any key, with a scalar value or a list of them
  (a template that works either way). Not validated further, so that a template stays
  portable: an environment that asks nothing of a key ignores it.
* type-based: ``resource_type: OS::TripleO::Controller`` or a list of types: the types
  the template may implement. Checked: text, or a list of text.

This module owns reading and checking the section (every problem with its place) and
matching requirements against what a template declares. It does not choose among
candidates, nor read files (``stoker.environment.capabilities`` does both).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker.template.errors import TemplateError

SECTION = "capabilities"
RESOURCE_TYPE = "resource_type"
# The first HOT version with the section (Heat's Mitaka). versions.py lists the section
# from this date on; tests/unit/template/test_capabilities.py keeps the two in step.
SINCE = "2015-10-15"
_SHAPE_HINT = "e.g. capabilities: {deployment: puppet, resource_type: [OS::TripleO::Controller]}"


def as_text(value: Any) -> str:
    """A capability value as it is compared: YAML's ``true`` is ``true``, ``2`` is ``2``,
    a map its sorted JSON text (it matches only the same map)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, default=str)


def _values(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    return tuple(dict.fromkeys(as_text(item) for item in items))


@dataclass(frozen=True)
class Capabilities:
    """What one template declares: each key with the values it provides, in the order
    written. ``resource_type`` is one of the keys."""

    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_section(cls, section: Any) -> Capabilities:
        """Read leniently (a section ``check_section`` refuses reads as far as it can)."""
        if not isinstance(section, Mapping):
            return cls({})
        return cls({str(key): _values(value) for key, value in section.items()})

    @property
    def resource_types(self) -> tuple[str, ...]:
        return self.values.get(RESOURCE_TYPE, ())

    def declares(self, key: str) -> bool:
        return key in self.values

    def implements(self, type_name: str) -> bool:
        """False only when a ``resource_type`` annotation is present and lacks the type."""
        return RESOURCE_TYPE not in self.values or type_name in self.values[RESOURCE_TYPE]

    def unmet(self, requirements: Mapping[str, Any]) -> list[str]:
        """Why these capabilities do not satisfy ``requirements`` (empty when they do).
        A requirement's value is one value, or a list of values any of which will do."""
        reasons = []
        for key, wanted in requirements.items():
            accepted = _values(wanted)
            have = self.values.get(str(key))
            if have is None:
                reasons.append(f"declares no {key}")
            elif not set(accepted) & set(have):
                reasons.append(f"{key} is {describe(have)}, not {describe(accepted, 'or')}")
        return reasons

    def to_dict(self) -> dict[str, list[str]]:
        return {key: list(values) for key, values in self.values.items()}


def describe(values: tuple[str, ...] | list[str], joiner: str = "and") -> str:
    if len(values) == 1:
        return values[0]
    return ", ".join(values[:-1]) + f" {joiner} {values[-1]}"


def describe_requirements(requirements: Mapping[str, Any]) -> str:
    """``deployment=puppet, network=bond|bridge``, as written on a command line."""
    if not requirements:
        return "(none)"
    return ", ".join(f"{key}={'|'.join(_values(value))}" for key, value in requirements.items())


def section_hint(key: Any, version: Any) -> str | None:
    """What to say when a version refuses the section (older HOT, or a CFN format)."""
    if key != SECTION:
        return None
    if getattr(version, "kind", "hot") != "hot":
        return "the capabilities section is HOT's: use heat_template_version 2015-10-15 or later"
    return f"the capabilities section needs heat_template_version {SINCE} or later"


def check_section(section: Any, locate: Any = None) -> list[TemplateError]:
    """Every problem of a capabilities section, each with its place: the section must be
    a map; ``resource_type`` text or a list of text. ``locate``: path -> Location."""
    errors: list[TemplateError] = []

    def fail(message: str, path: str, hint: str | None = None) -> None:
        errors.append(TemplateError(message, path=path, location=locate(path) if locate else None, hint=hint))

    if section is None:
        return errors
    if not isinstance(section, Mapping):
        fail(f"The capabilities section must be a map of capability names to values, not {_kind(section)}", SECTION, _SHAPE_HINT)
        return errors
    if RESOURCE_TYPE in section:
        kinds = section[RESOURCE_TYPE]
        where = f"{SECTION}.{RESOURCE_TYPE}"
        hint = "give a resource type name or a list of them, e.g. [OS::TripleO::Controller, OS::TripleO::Compute]"
        if isinstance(kinds, list):
            if not kinds:
                fail("resource_type must name at least one resource type", where, hint)
            for index, kind in enumerate(kinds):
                if not isinstance(kind, str) or not kind:
                    fail(f"Each resource_type must be a type name (text), not {_kind(kind)}", f"{where}[{index}]", hint)
        elif not isinstance(kinds, str) or not kinds:
            fail(f"resource_type must be a type name or a list of type names, not {_kind(kinds)}", where, hint)
    return errors


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "empty text" if not value else "text"
    return {dict: "a map", list: "a list", bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def read(data: Any) -> tuple[Capabilities | None, list[TemplateError]]:
    """A template's capabilities from its parsed data: None when it declares none (or is
    not a HOT template that may), with the problems of a malformed or misplaced section."""
    if not isinstance(data, Mapping) or SECTION not in data:
        return None, []
    version = data.get("heat_template_version")
    if version is None:
        return None, [TemplateError("A capabilities section needs a HOT template (heat_template_version)", path=SECTION, hint=section_hint(SECTION, None))]
    if str(version) < SINCE and not _is_alias(str(version)):
        return None, [TemplateError(f"The template section is invalid: capabilities (heat_template_version {version} has none)", path=SECTION, hint=section_hint(SECTION, None))]
    errors = check_section(data[SECTION])
    return Capabilities.from_section(data[SECTION]), errors


def _is_alias(version: str) -> bool:
    # The release names (newton, ocata, ...) all came after 2015-10-15.
    return version.isalpha()
