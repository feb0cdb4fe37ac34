"""What is shown of hidden parameters: their values, wherever they would leave the
server or the CLI in a response, a message or a log line, become ``******``.

A hidden parameter's value is masked by name where the name is known (a stack's
parameters, an environment's ``parameters`` and ``parameter_defaults``, an environment
file among a stack's files), and by value everywhere else: a string equal to one of the
values, or containing one of at least ``MIN_MASKED_LENGTH`` characters, has it replaced
(an attribute that echoes a property, a property error that quotes its value, a
snapshot's resolved properties, a software config or deployment a stack's resource made
with it: ``shown`` gives the copy such a record keeps for users).

Must not: change what is stored or what an engine works with; only copies are masked.
Export and abandon data keep the values on purpose (adopt needs them): see
docs/hidden-parameters.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

MASK = "******"
# Shorter values are masked only where a string is the value itself: replacing every
# "1" or "no" inside messages would garble them without hiding anything worth hiding.
MIN_MASKED_LENGTH = 4
# The environment sections that hold parameter values by name.
ENVIRONMENT_VALUE_SECTIONS = ("parameters", "parameter_defaults")
# A file with one of these keys is a template: its ``parameters`` are schemas, not values.
TEMPLATE_VERSION_KEYS = ("heat_template_version", "HeatTemplateFormatVersion", "AWSTemplateFormatVersion")


def _texts(value: Any, items: bool = False) -> Iterable[str]:
    """The ways a parameter value can appear in text: itself, its items, its JSON.
    ``items``: a string is a comma_delimited_list given as one string."""
    if value is None:
        return
    if isinstance(value, str):
        yield value
        if items and "," in value:
            yield from (item.strip() for item in value.split(","))
        return
    if isinstance(value, bool):
        yield str(value).lower()
        yield str(value)
        return
    if isinstance(value, (int, float)):
        yield str(value)
        return
    if isinstance(value, Mapping):
        yield json.dumps(value)
        for item in value.values():
            yield from _texts(item)
        return
    if isinstance(value, (list, tuple)):
        yield ",".join(str(item) for item in value)
        for item in value:
            yield from _texts(item)


@dataclass(frozen=True)
class HiddenValues:
    """The hidden parameters of one stack or request: their names and their values."""

    names: frozenset[str] = frozenset()
    texts: tuple[str, ...] = ()  # longest first, so a value inside another is masked whole

    @classmethod
    def of(cls, schemas: Mapping[str, Any], *sources: Mapping[str, Any] | None) -> HiddenValues:
        """From a template's parameter schemas (anything with ``hidden``) and the mappings
        that give values by name (user parameters, resolved values, an environment's
        ``parameters`` or ``parameter_defaults``)."""
        names = frozenset(name for name, schema in schemas.items() if getattr(schema, "hidden", False))
        lists = {name for name in names if getattr(schemas[name], "type", None) == "comma_delimited_list"}
        texts: set[str] = set()
        for source in sources:
            if not isinstance(source, Mapping):
                continue
            for name in names & set(source):
                texts.update(text for text in _texts(source[name], items=name in lists) if text)
        return cls(names, tuple(sorted(texts, key=len, reverse=True)))

    def __bool__(self) -> bool:
        return bool(self.names)

    def with_values_of(self, other: HiddenValues) -> HiddenValues:
        """These names, masking ``other``'s values as well (a nested stack masks the
        values its owners' hidden parameters gave it, under whatever name it has them)."""
        if not other.texts:
            return self
        return HiddenValues(self.names, tuple(sorted(set(self.texts) | set(other.texts), key=len, reverse=True)))

    def text(self, message: str) -> str:
        """``message`` with every hidden value in it masked."""
        if not self.texts or not isinstance(message, str):
            return message
        for secret in self.texts:
            if message == secret:
                return MASK
            if len(secret) >= MIN_MASKED_LENGTH and secret in message:
                message = message.replace(secret, MASK)
        return message

    def data(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` with every hidden value in its strings masked."""
        if not self.texts:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.data(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(item) for item in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and str(value) in self.texts:
            return MASK
        return value

    def parameters(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Parameter values by name, the hidden ones masked."""
        return {name: MASK if name in self.names else value for name, value in values.items()}

    def environment(self, body: Mapping[str, Any] | None) -> dict[str, Any]:
        """An environment body with the hidden parameters' values masked."""
        shown = dict(body or {})
        for section in ENVIRONMENT_VALUE_SECTIONS:
            if isinstance(shown.get(section), Mapping):
                shown[section] = self.parameters(shown[section])
        return self.data(shown)

    def stack_data(self, data: Mapping[str, Any] | None) -> Any:
        """Snapshot (or export) data: its ``parameters`` and ``environment`` by name,
        everything else (resources' properties and data) by value."""
        if not isinstance(data, Mapping):
            return self.data(data)
        shown = dict(data)
        if isinstance(shown.get("parameters"), Mapping):
            shown["parameters"] = self.parameters(shown["parameters"])
        if isinstance(shown.get("environment"), Mapping):
            shown["environment"] = self.environment(shown["environment"])
        return self.data(shown)

    def shown(self, value: Any) -> Any:
        """What a record keeps to show users of ``value`` (a software config's body, a
        deployment's input values): its copy with the hidden values masked, or None
        when no hidden value is in it (it is shown as it is)."""
        masked = self.data(value)
        return None if masked == value else masked

    def files(self, files: Mapping[str, str] | None, parse: Any) -> dict[str, str]:
        """A stack's files as shown: an environment file (what ``-e`` and heatclient send
        among the files) that gives a hidden parameter a value is shown rewritten with
        that value masked by name (as YAML, or JSON for a file that was JSON; comments
        are not kept); every file has the values masked where they appear in its text.
        ``parse``: text -> data (the environment reader), raising on text it refuses."""
        shown: dict[str, str] = {}
        for name, text in (files or {}).items():
            if self.names and isinstance(text, str):
                text = self._environment_file(text, parse)
            shown[name] = self.text(text)
        return shown

    def _environment_file(self, text: str, parse: Any) -> str:
        try:
            data = parse(text)
        except Exception:  # noqa: BLE001 - not an environment (a script, a broken file): by value
            return text
        if not isinstance(data, Mapping) or any(key in data for key in TEMPLATE_VERSION_KEYS):
            return text
        if not any(isinstance(data.get(section), Mapping) and self.names & set(data[section]) for section in ENVIRONMENT_VALUE_SECTIONS):
            return text
        masked = self.environment(data)
        if text.lstrip().startswith("{"):
            return json.dumps(masked, indent=2) + "\n"
        return yaml.safe_dump(masked, sort_keys=False, default_flow_style=False, allow_unicode=True)
