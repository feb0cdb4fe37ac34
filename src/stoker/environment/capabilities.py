"""Choosing among candidate templates, and what a set of templates offers (seed 003).

Resolution. A ``resource_registry`` entry may map a type to a list of candidate
templates (``OS::TripleO::Controller: [puppet/controller.yaml, docker/controller.yaml]``);
the environment's ``requires`` section (``deployment: puppet``) chooses the one whose
``capabilities`` satisfy it. A candidate matches when:

* its ``resource_type`` annotation, where it has one, includes the mapped type; and
* it satisfies every requirement on a capability that some candidate of the list
  declares. A requirement no candidate of the list mentions does not bear on this choice
  (``requires`` is one section for the whole environment: ``nic: bond`` must not rule out
  every controller template because controllers say nothing of NICs). The explanation
  says which requirements were set aside.

Zero or several matches is a ``CapabilityResolutionError`` naming the type, the
requirements and every candidate with why it matched or not. Without a list nothing
here runs: the registry resolves as before.

Introspection, over templates sent as a files map (any client can send one):
``find`` lists the templates whose capabilities satisfy every requirement given (here
strictly: a template must declare each key); ``summary`` gathers every capability value
offered (``{"deployment": ["puppet", "docker"]}``) and, per resource type, the templates
that may implement it (``{"OS::TripleO::Controller": [...]}``).

This module reads template text it is handed; it never reads files, and knows nothing of
plugins (``registry`` calls ``choose_entry`` once it has found a list entry).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from stoker.sdk.exceptions import ValidationError
from stoker.template import capabilities as template_capabilities
from stoker.template import loader
from stoker.template.capabilities import RESOURCE_TYPE, Capabilities, describe_requirements
from stoker.template.errors import TemplateError

REQUIRES = "requires"
TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template", ".json")


class CapabilityResolutionError(ValidationError):
    """No candidate template, or more than one, satisfies the environment's requires."""

    def __init__(self, resolution: Resolution):
        super().__init__(resolution.explain(), path=f"resource_registry.{resolution.type_name}", hint=resolution.hint())
        self.resolution = resolution


# -- reading a candidate -------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """A template's capabilities as read from its text; ``problem`` when it cannot be read."""

    capabilities: Capabilities | None
    problem: str | None = None


# text digest -> Declared. Resolution runs each time the engine asks for a class; the
# same candidate texts come back every time, so each is parsed once per process.
_DECLARED: OrderedDict[str, Declared] = OrderedDict()
_DECLARED_MAX = 16384  # entries; each a few small tuples


def declared(text: str | bytes | None, name: str = "") -> Declared:
    """The capabilities a template's text declares (None: it declares none)."""
    if text is None:
        return Declared(None, "it is not in the files map")
    raw = text.encode() if isinstance(text, str) else text
    key = hashlib.blake2b(raw, digest_size=16).hexdigest()
    found = _DECLARED.get(key)
    if found is not None:
        _DECLARED.move_to_end(key)
        return found
    found = _read(text, name)
    _DECLARED[key] = found
    while len(_DECLARED) > _DECLARED_MAX:
        _DECLARED.popitem(last=False)
    return found


def _read(text: str | bytes, name: str) -> Declared:
    data = _quick_data(text, name)
    if data is None:
        try:
            data = loader.parse(text, name or None).data
        except TemplateError as error:
            return Declared(None, f"it cannot be read: {error}")
    if not isinstance(data, Mapping) or not any(key in data for key in ("heat_template_version", "AWSTemplateFormatVersion", "HeatTemplateFormatVersion")):
        return Declared(None, "it is not a template")
    capabilities, problems = template_capabilities.read(data)
    if problems:
        return Declared(None, "; ".join(f"{error.path}: {error.message}" for error in problems))
    return Declared(capabilities)


_QUICK_KEYS = ("heat_template_version", template_capabilities.SECTION)
_TOP_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[ ]*:(?:[ ]|$)")


def _quick_data(text: str | bytes, name: str) -> dict[str, Any] | None:
    """The version and capabilities of a block-style YAML template, read from their own
    lines only (parsing the whole of a thousand templates was most of the time spent);
    None when the text is anything else (JSON, flow style, anchors, directives), or
    when the lines do not parse alone: the whole text is parsed then, as always."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    kept: list[str] = []
    keeping = False
    for line in text.splitlines():
        if not line or line[0] in " #":
            if keeping:
                kept.append(line)
            continue
        match = _TOP_KEY.match(line)
        if match is None:
            return None  # not a plain top-level key: let the loader judge
        keeping = line[: match.end()].rstrip(": ").rstrip() in _QUICK_KEYS
        if keeping:
            kept.append(line)
    snippet = "\n".join(kept)
    if not snippet.startswith("heat_template_version") and "\nheat_template_version" not in snippet:
        return None
    if any(mark in snippet for mark in ("&", "*", "<<", "!", "%")) or snippet.count("[") + snippet.count("{") > _QUICK_MAX_BRACKETS:
        # Anchors, aliases, merge keys, tags (only the whole text has their targets), or
        # deep nesting: the guarded loader, with its limits, reads those.
        return None
    try:
        data = yaml.load(snippet, Loader=_SnippetLoader)  # noqa: S506 - a safe loader, on a snippet without aliases
    except (yaml.YAMLError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


_QUICK_MAX_BRACKETS = 64


class _SnippetLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML's safe loader keeping dates as text, as the template loader does
    (``heat_template_version: 2015-10-15``, ``release: 2024-01-01``)."""


_SnippetLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


# -- resolution ----------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """One candidate, and why it matched or not."""

    template: str
    matched: bool
    reasons: tuple[str, ...] = ()

    def explain(self) -> str:
        if self.matched:
            return f"{self.template}: matches" + (f" ({'; '.join(self.reasons)})" if self.reasons else "")
        return f"{self.template}: does not match ({'; '.join(self.reasons)})"


@dataclass(frozen=True)
class Resolution:
    """The choice for one type: the candidates, the requirements that bore on it, each
    candidate's verdict and the one chosen (None when not exactly one matched)."""

    type_name: str
    candidates: tuple[str, ...]
    requirements: Mapping[str, Any]
    verdicts: tuple[Verdict, ...]
    # requirements no candidate declares: set aside for this choice
    ignored: tuple[str, ...] = ()
    resource_name: str | None = None

    @property
    def matches(self) -> list[str]:
        return [verdict.template for verdict in self.verdicts if verdict.matched]

    @property
    def chosen(self) -> str | None:
        matches = self.matches
        return matches[0] if len(matches) == 1 else None

    def explain(self) -> str:
        matches = self.matches
        owner = f" (resource {self.resource_name})" if self.resource_name else ""
        requires = describe_requirements(self.requirements)
        if len(matches) == 1:
            head = f"{self.type_name}{owner} resolved to {matches[0]} by requires {requires}"
        elif not matches:
            head = f"No candidate template for {self.type_name}{owner} satisfies requires {requires}"
        else:
            head = f"{len(matches)} candidate templates for {self.type_name}{owner} satisfy requires {requires}; exactly one must"
        lines = [head + ":"] + [f"{verdict.explain()}" for verdict in self.verdicts]
        if self.ignored:
            lines.append(f"not considered for this type (no candidate declares it): {', '.join(self.ignored)}")
        return " ".join(lines[:1]) + " " + "; ".join(lines[1:])

    def hint(self) -> str:
        if self.matches:
            return "add a requirement that tells the matching candidates apart to the environment's requires section"
        return "change the environment's requires section, or add a candidate template whose capabilities satisfy it"

    def to_dict(self) -> dict[str, Any]:
        return {
            "resource_type": self.type_name,
            "resource_name": self.resource_name,
            "chosen": self.chosen,
            "requires": dict(self.requirements),
            "candidates": [{"template": v.template, "matched": v.matched, "reasons": list(v.reasons)} for v in self.verdicts],
            "not_considered": list(self.ignored),
        }


def resolve(
    type_name: str,
    candidates: Sequence[str],
    requirements: Mapping[str, Any] | None,
    text_of: Callable[[str], str | bytes | None],
    resource_name: str | None = None,
) -> Resolution:
    """Judge every candidate (``text_of(name)``: its text, or None when absent). The
    result says which matched; ``choose`` raises unless exactly one did."""
    requirements = dict(requirements or {})
    read = [(str(name), declared(text_of(str(name)), str(name))) for name in candidates]
    offered = {key for _, found in read if found.capabilities is not None for key in found.capabilities.values}
    bearing = {key: value for key, value in requirements.items() if str(key) in offered}
    ignored = tuple(str(key) for key in requirements if str(key) not in offered)
    verdicts = []
    for name, found in read:
        if found.capabilities is None:
            verdicts.append(Verdict(name, False, (found.problem or "it declares no capabilities",)))
            continue
        reasons = []
        if not found.capabilities.implements(type_name):
            reasons.append(f"its resource_type is {template_capabilities.describe(found.capabilities.resource_types)}, not {type_name}")
        reasons.extend(found.capabilities.unmet(bearing))
        if reasons:
            verdicts.append(Verdict(name, False, tuple(reasons)))
        else:
            # What tells it apart: the requirements it meets, or else all it declares.
            keys = [str(key) for key in bearing] or [key for key in found.capabilities.values if key != RESOURCE_TYPE]
            shown = ", ".join(f"{key}={'|'.join(found.capabilities.values[key])}" for key in keys)
            verdicts.append(Verdict(name, True, (f"declares {shown}",) if shown else ()))
    return Resolution(type_name, tuple(str(c) for c in candidates), bearing or requirements, tuple(verdicts), ignored, resource_name)


def choose(
    type_name: str,
    candidates: Sequence[str],
    requirements: Mapping[str, Any] | None,
    text_of: Callable[[str], str | bytes | None],
    resource_name: str | None = None,
) -> Resolution:
    """``resolve``, raising CapabilityResolutionError unless exactly one candidate matches."""
    resolution = resolve(type_name, candidates, requirements, text_of, resource_name)
    if resolution.chosen is None:
        raise CapabilityResolutionError(resolution)
    return resolution


class Aliases(dict):
    """A stack's user registry as the resource registry reads it (``type_aliases``),
    carrying the environment's ``requires`` so that a list entry can be resolved where
    the registry finds it, at every level a mapping can sit."""

    def __init__(self, registry: Mapping[str, Any], requires: Mapping[str, Any] | None = None):
        super().__init__(registry)
        self.requires: dict[str, Any] = dict(requires or {})


def requires_of(aliases: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(getattr(aliases, "requires", None) or {})


def choose_entry(entry: Any, type_name: str, aliases: Mapping[str, Any] | None, files: Mapping[str, str], global_files: Mapping[str, str]) -> Any:
    """A registry entry whose value is a list of candidates, made the entry of the one
    chosen (``entry``: a ``registry.RegistryEntry``). A user entry's candidates come from
    the request's files; a global one's from the global environment's templates."""
    def text_of(name: str) -> str | None:
        text = files.get(name)
        if text is None and not entry.user:
            text = global_files.get(name)
        return text

    resource_name = entry.path[1] if len(entry.path) == 3 and entry.path[0] == "resources" else None
    resolution = choose(type_name, entry.value, requires_of(aliases), text_of, resource_name)
    return dataclasses.replace(entry, value=resolution.chosen)


def resolutions(
    registry: Mapping[str, Any],
    requires: Mapping[str, Any] | None,
    files: Mapping[str, str],
    uses: Iterable[tuple[str, str]],
) -> list[Resolution]:
    """How each (resource name, type) of ``uses`` that the user registry maps to a list
    is resolved: the per-resource entry first, then the type's own (as the registry
    ranks them). For showing the choice (stack show, previews, events); never raises."""
    found = []
    for resource_name, type_name in uses:
        specific = registry.get("resources")
        specific = specific.get(resource_name) if isinstance(specific, Mapping) else None
        if isinstance(specific, Mapping) and isinstance(specific.get(type_name), list):
            found.append(resolve(type_name, specific[type_name], requires, files.get, resource_name))
        elif isinstance(registry.get(type_name), list):
            found.append(resolve(type_name, registry[type_name], requires, files.get, resource_name))
    return found


def registry_resolutions(registry: Mapping[str, Any], requires: Mapping[str, Any] | None, files: Mapping[str, str | bytes]) -> list[Resolution]:
    """How every list entry of a registry resolves by ``requires`` (the per-resource
    blocks' with their resource name); for introspection, never raises."""
    found = []
    for key, value in registry.items():
        if isinstance(value, list):
            found.append(resolve(str(key), value, requires, files.get))
        elif key == "resources" and isinstance(value, Mapping):
            for resource_name, block in value.items():
                if isinstance(block, Mapping):
                    for type_name, candidates in block.items():
                        if isinstance(candidates, list):
                            found.append(resolve(str(type_name), candidates, requires, files.get, str(resource_name)))
    return found


def changes(before: Sequence[Resolution], after: Sequence[Resolution]) -> list[dict[str, Any]]:
    """Resources whose implementation an update changes: ``{"resource_name", "resource_type",
    "from", "to"}`` for each resource resolved differently (None where unresolved)."""
    old = {(r.resource_name, r.type_name): r.chosen for r in before}
    new = {(r.resource_name, r.type_name): r.chosen for r in after}
    changed = []
    for key in dict.fromkeys([*old, *new]):
        if old.get(key) != new.get(key):
            changed.append({"resource_name": key[0], "resource_type": key[1], "from": old.get(key), "to": new.get(key)})
    return changed


# -- introspection -------------------------------------------------------------------


def is_template_name(name: str) -> bool:
    return name.endswith(TEMPLATE_SUFFIXES)


def find(
    files: Mapping[str, str | bytes],
    requirements: Mapping[str, Any] | Sequence[tuple[str, Any]],
    names: Iterable[str] | None = None,
) -> tuple[list[str], list[dict[str, str]]]:
    """The templates of ``files`` (or only ``names``) whose capabilities satisfy every
    requirement (a map, or (key, value) pairs: ``-c resource_type=A -c resource_type=B``
    wants a template for both), sorted by name; and the files skipped (unreadable, or a
    malformed capabilities section), each with why. A file that is no template (a script
    for get_file) is passed over."""
    pairs = list(requirements.items()) if isinstance(requirements, Mapping) else list(requirements)
    matched: list[str] = []
    skipped: list[dict[str, str]] = []
    for name in sorted(files if names is None else names):
        text = files.get(name)
        found = declared(text, name)
        if found.capabilities is None:
            if found.problem not in (None, "it is not a template"):
                skipped.append({"template": name, "reason": found.problem})
            continue
        if all(not found.capabilities.unmet({key: value}) for key, value in pairs):
            matched.append(name)
    return matched, skipped


def describe_templates(files: Mapping[str, str | bytes], templates: Sequence[str], environment: Any = None) -> dict[str, Any]:
    """The summary of ``templates`` and of the candidates ``environment`` (an
    ``Environment``, merged) lists, with its ``requires`` and how each of its lists
    resolves by them: what ``stoker template capabilities`` and
    ``POST /template_capabilities`` answer."""
    registry = environment.resource_registry if environment is not None else {}
    requires = environment.requires if environment is not None else {}
    result = summary(files, templates, [registry])
    result["requires"] = dict(requires)
    result["resolutions"] = [r.to_dict() for r in registry_resolutions(registry, requires, files)]
    return result


def summary(
    files: Mapping[str, str | bytes],
    templates: Sequence[str],
    registries: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """What ``templates`` (names in ``files``) offer, in both forms: ``capabilities``,
    each tag with the values offered in the order first seen; ``resource_types``, each
    type with the templates that may implement it (by their ``resource_type``, and by
    the list entries of the environments' ``registries``). Every template a registry
    names counts too. ``skipped``: what could not be read, with why (a template that
    declares no capabilities is no problem: it offers none)."""
    tags: dict[str, list[str]] = {}
    types: dict[str, list[str]] = {}
    skipped: list[dict[str, str]] = []
    names = dict.fromkeys(templates)  # ordered, and a membership test in O(1)
    listed: list[tuple[str, str]] = []  # (type, candidate) from the registries
    for registry in registries:
        for type_name, entries in _list_entries(registry):
            listed.extend((type_name, str(candidate)) for candidate in entries)
        # Every template the registry names counts, a single mapping's too.
        names.update((name, None) for name in registry_templates(registry) if is_template_name(name))
    for name in names:
        found = declared(files.get(name), name)
        if found.capabilities is None:
            if found.problem not in (None, "it is not a template"):
                skipped.append({"template": name, "reason": found.problem})
            continue
        for key, values in found.capabilities.values.items():
            if key == RESOURCE_TYPE:
                for type_name in values:
                    _add(types, type_name, name)
            else:
                for value in values:
                    _add(tags, key, value)
    for type_name, candidate in listed:
        found = declared(files.get(candidate), candidate)
        if found.capabilities is None or found.capabilities.implements(type_name):
            _add(types, type_name, candidate)
    body: dict[str, Any] = {"capabilities": tags, "resource_types": types}
    if skipped:
        body["skipped"] = skipped
    return body


def _add(into: dict[str, list[str]], key: str, value: str) -> None:
    values = into.setdefault(key, [])
    if value not in values:
        values.append(value)


def _list_entries(registry: Mapping[str, Any]) -> Iterable[tuple[str, list[Any]]]:
    """Every (type, candidates) list entry of a registry, the per-resource blocks' too."""
    for key, value in registry.items():
        if isinstance(value, list):
            yield str(key), value
        elif key == "resources" and isinstance(value, Mapping):
            for block in value.values():
                if isinstance(block, Mapping):
                    yield from ((str(k), v) for k, v in block.items() if isinstance(v, list))


def check_requires(section: Any, fail: Callable[[str, str, str | None], None]) -> None:
    """An environment's ``requires``: a map of capability names to a value or a list of
    values (any of which will do)."""
    if not isinstance(section, Mapping):
        return  # absent, or not a map: environment.parse reports the latter with the other sections
    for key, value in section.items():
        values = value if isinstance(value, list) else [value]
        if not values or any(isinstance(item, Mapping | list) or item is None for item in values):
            fail(f"The requirement {key} must be a value or a list of values", f"{REQUIRES}.{key}", "e.g. deployment: puppet, or deployment: [puppet, docker] for either")


def check_candidates(value: Any, where: str, fail: Callable[[str, str, str | None], None]) -> bool:
    """A registry entry that lists candidates: a non-empty list of template names. True
    when ``value`` is a list (checked), False when it is something else."""
    if not isinstance(value, list):
        return False
    if not value:
        fail("A resource_registry list must name at least one candidate template", where, None)
    for index, item in enumerate(value):
        if not isinstance(item, str) or not is_template_name(item):
            fail(
                "Each candidate of a resource_registry list must be a template file name",
                f"{where}[{index}]",
                "a list maps a type to candidate templates (.yaml, .yml, .template, .json); the environment's requires chooses one",
            )
    return True


def registry_templates(registry: Mapping[str, Any]) -> Iterable[str]:
    """Every template name a registry maps a type to: single ones and each candidate of a
    list, at the top level and in the per-resource blocks (what a client must send)."""
    for key, value in registry.items():
        if key in ("hooks", "restricted_actions"):
            continue
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, str))
        elif isinstance(value, Mapping):
            yield from registry_templates(value)
