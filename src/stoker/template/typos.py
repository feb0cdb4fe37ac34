"""Function names written one edit away from a function of the template's version
(``get_parm``, ``get_atr``, ``str_replce``): Heat reads such a one-key map as plain
data and stores it, so the mistake shows only much later, if ever. ``function_typos``
says "did you mean get_param?" at its place, as a warning.

The rule, chosen to stay quiet on data:
- only a map with exactly one key, as a function call is written;
- only near a function whose name cannot be a plain word (it has ``_`` or ``::``):
  ``if``, ``not``, ``and``, ``Ref``, ``yaql``, ``repeat`` ... are one edit away from
  ``id``, ``note``, ``any``, ``ref``, ``yaml``, ``repeats``, keys data often has;
- never for a key that is a function of any version (that is the version's business:
  ``Parser`` warns about those) nor for a key the resource type's schema declares at that
  place (a property, or a key of a map property's schema);
- only where functions are evaluated: resources (properties, metadata, update_policy,
  ...), outputs and conditions; not parameter defaults.

Must not: refuse anything (Heat accepts these templates), nor know where schemas come
from (the caller's ``schema_of``: Heat's resource-type schema document, as
``GET /resource_types/{type}`` and ``stoker resource type show`` give it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any

from stoker.template import versions
from stoker.template.errors import TemplateWarning, format_path
from stoker.template.hot import Template

# A resource type's schema document (its ``properties``), or None when it is not known.
SchemaOf = Callable[[str], Mapping[str, Any] | None]


def one_edit_apart(first: str, second: str) -> bool:
    """Whether the Damerau-Levenshtein distance of the two is exactly 1: one character
    inserted, deleted, replaced, or two neighbours swapped."""
    if first == second or abs(len(first) - len(second)) > 1:
        return False
    start = 0
    while start < min(len(first), len(second)) and first[start] == second[start]:
        start += 1
    a, b = first[start:], second[start:]
    if len(a) == len(b):
        return a[1:] == b[1:] or (len(a) >= 2 and a[0] == b[1] and a[1] == b[0] and a[2:] == b[2:])
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    return shorter == longer[1:]


@cache
def _every_function() -> frozenset[str]:
    """Every name that is a function (or a removed one) in some version or format."""
    names: set[str] = set()
    for version in (*versions.VERSIONS.values(), *versions.CFN_VERSIONS.values()):
        names.update(version.functions, version.unknown_functions, version.removed_functions, version.condition_functions or ())
    return frozenset(names)


def _candidates(table: Mapping[str, Any]) -> list[str]:
    return sorted(name for name in table if "_" in name or "::" in name)


def _near(key: Any, candidates: list[str]) -> str | None:
    if not isinstance(key, str) or key in _every_function():
        return None
    return next((name for name in candidates if one_edit_apart(key, name)), None)


def _declared(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The keys a map's schema declares (a list's ``*`` is its items')."""
    inner = schema.get("schema") if isinstance(schema, Mapping) else None
    return inner if isinstance(inner, Mapping) else {}


def _walk(data: Any, path: tuple, candidates: list[str], declared: Mapping[str, Any] | None) -> Iterator[tuple[tuple, str, str]]:
    """(path of the key, key, the function meant) for each suspect one-key map under
    ``data``. ``declared``: the keys the schema declares for ``data`` when it is a map
    (for a list, ``*`` the items' schema); None where there is no schema."""
    if isinstance(data, dict):
        if len(data) == 1:
            ((key, _),) = data.items()
            meant = None if declared is not None and key in declared else _near(key, candidates)
            if meant is not None:
                yield path + (key,), key, meant
        for key, value in data.items():
            child = declared.get(key) if declared is not None else None
            yield from _walk(value, path + (key,), candidates, _declared(child) if child is not None else None)
    elif isinstance(data, list):
        items = declared.get("*") if declared is not None else None
        for index, item in enumerate(data):
            yield from _walk(item, path + (index,), candidates, _declared(items) if items is not None else None)


def function_typos(template: Template, schema_of: SchemaOf) -> list[TemplateWarning]:
    """A placed warning for each one-key map whose key is one edit away from a function
    of ``template``'s version (see the module's rule)."""
    version, words = template.version, template.version.keywords
    candidates = _candidates(version.functions)
    found: list[tuple[tuple, str, str]] = []
    resources = template.data.get(words.resources)
    for name, body in (resources if isinstance(resources, dict) else {}).items():
        if not isinstance(body, dict):
            continue
        kind = body.get(words.type)
        schema = schema_of(kind) if isinstance(kind, str) else None
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        for key, value in body.items():
            declared = properties if key == words.properties and isinstance(properties, Mapping) else None
            if key == words.properties and declared is None:
                declared = {}  # the type is not known here: its properties are checked with it
            found.extend(_walk(value, (words.resources, name, key), candidates, declared))
    outputs = template.data.get(words.outputs)
    for name, body in (outputs if isinstance(outputs, dict) else {}).items():
        found.extend(_walk(body, (words.outputs, name), candidates, None))
    if version.condition_functions is not None:
        conditions = template.data.get(words.conditions)
        condition_candidates = _candidates(version.condition_functions)
        for name, body in (conditions if isinstance(conditions, dict) else {}).items():
            found.extend(_walk(body, (words.conditions, name), condition_candidates, None))
    warnings = []
    for path, key, meant in found:
        where = format_path(path)
        warnings.append(
            TemplateWarning(
                f"{key!r} is not a function of {version.version_key} {version.key}: this map is kept as data",
                path=where,
                location=template.document.locate(where),
                hint=f"did you mean {meant}?",
            )
        )
    return warnings


def file_templates(files: Mapping[str, str] | None) -> Iterator[Template]:
    """The templates among a request's files (nested stacks, provider templates), each
    parsed as its stack would be, with its own warnings collected; a file that is not a
    template (a ``get_file``'s data) or does not parse (the engine reports why, placed) is
    passed over."""
    from stoker.template import loader
    from stoker.template.errors import TemplateError

    for name, text in sorted((files or {}).items()):
        if "heat_template_version" not in text:
            continue  # a get_file's data, not a template
        try:
            document = loader.parse(text, name, loader.DEFAULT_LIMITS)
            if isinstance(document.data, dict) and "heat_template_version" in document.data:
                yield Template.parse(document, files, collect=True)
        except TemplateError:
            continue
