"""Properties groups (seed 002): relations between a resource's properties, declared as data.

A plugin lists groups in ``properties_groups_schema``. Each group is a one-key dict:

    {AND: [...]}   every entry must be given
    {OR: [...]}    at least one entry must be given
    {XOR: [...]}   exactly one entry must be given
    {API_VERSIONS: {CLIENT_PLUGIN: 'keystone', VERSIONS: ['1.2', '2.0'],
                    PROPERTIES: [['PropertyA'], ['PropertyB']]}}
                   the properties may only be given when the version negotiated by the
                   client plugin is one of VERSIONS

``properties_groups_schema`` may be a property, as seed 002 writes it (``CLIENT_PLUGIN:
self.client_plugin('keystone')``): a resource reads it with its client plugins; the checks
at load and the type's documentation read it on a stand-in whose client plugins are their
names (``Resource.declared_properties_groups``). ``describe`` names a client plugin given
as an object or a class by its name.

An entry is a property path, a list of names (``['PropertyA', 'PropertySubA']`` reaches into
a Map property), or a nested group. ``check_schema`` checks the declarations when a plugin
registers; ``validate`` checks a resource's values.

Rules this module settles that seed 002 leaves open:
  * A property counts as given when the user set it (it is in ``Properties.data`` along the
    path, and not null). A default does not count: the groups describe what the user wrote.
  * A path through a List of Maps is checked item by item: ``{XOR: [['networks', 'network'],
    ['networks', 'port']]}`` means every item of ``networks`` has exactly one of the two.
    When the list is empty or absent and every entry of the group lies inside it, there is
    nothing to check; otherwise its entries count as not given.
  * A value not known yet (a function of a resource not created) leaves a group undecided,
    and an undecided group is not reported; it is checked again once values are known.
  * An API_VERSIONS group nested as an operand counts as given when any of its properties is
    given, so ``{XOR: [['network'], {API_VERSIONS: {..., PROPERTIES: [['port']]}}]}`` means
    "exactly one of network or port, and port needs one of these versions". Its PROPERTIES
    hold property paths only.

This module does no I/O: for API_VERSIONS it asks the client plugin for its negotiated
version, and the plugin may ask its service (once).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

from stoker.sdk.clients import ClientPlugin, Version
from stoker.sdk.exceptions import PropertyError, SchemaError, StokerError
from stoker.sdk.properties import UNRESOLVED, Properties, Schema

__all__ = ["AND", "API_VERSIONS", "CLIENT_PLUGIN", "OPERATORS", "OR", "PROPERTIES", "VERSIONS", "XOR", "check_schema", "describe", "validate"]

OPERATORS = (AND, OR, XOR) = ("and", "or", "xor")
API_VERSIONS = "api_versions"
API_VERSIONS_KEYS = (CLIENT_PLUGIN, VERSIONS, PROPERTIES) = ("client_plugin", "versions", "properties")
GROUP_KEYS = (*OPERATORS, API_VERSIONS)

# What validate() asks for a client plugin by name (Resource.client_plugin).
ClientPluginLookup = Callable[[str], ClientPlugin]


# -- the parsed form ----------------------------------------------------------------------


@dataclass(frozen=True)
class PropertyPath:
    names: tuple[str, ...]
    # The prefixes of ``names`` whose value is a List of Maps: checked item by item.
    list_prefixes: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Group:
    operator: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class ApiVersionsGroup:
    client_plugin: str | ClientPlugin | type[ClientPlugin]
    versions: tuple[str, ...]
    properties: tuple[PropertyPath, ...]

    @property
    def client_name(self) -> str:
        if isinstance(self.client_plugin, str):
            return self.client_plugin
        return self.client_plugin.name


Entry = PropertyPath | Group | ApiVersionsGroup


def _paths(entry: Entry) -> Iterator[PropertyPath]:
    if isinstance(entry, PropertyPath):
        yield entry
    elif isinstance(entry, Group):
        for child in entry.entries:
            yield from _paths(child)
    else:
        yield from entry.properties


# -- checking the declarations ------------------------------------------------------------


class _Parser:
    """Turns raw groups into the parsed form, collecting every mistake with where it is."""

    def __init__(
        self,
        properties_schema: Mapping[str, Schema],
        check_paths: bool = True,
        client_names: Collection[str] | None = None,
    ):
        self.schema = properties_schema
        self.check_paths = check_paths
        self.client_names = client_names
        self.problems: list[str] = []

    def problem(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")

    def groups(self, raw: Any) -> list[Entry]:
        if not isinstance(raw, (list, tuple)):
            self.problems.append(
                f"properties_groups_schema must be a list of groups, not {type(raw).__name__}"
            )
            return []
        parsed: list[PropertyPath | Group | ApiVersionsGroup] = []
        for index, group in enumerate(raw):
            node = self.group(group, f"properties_groups_schema[{index}]")
            if node is not None:
                parsed.append(node)
        return parsed

    def group(self, raw: Any, where: str) -> Group | ApiVersionsGroup | None:
        if not isinstance(raw, Mapping):
            self.problem(where, f"a group is a one-key dict like {{'xor': [['a'], ['b']]}}; got {raw!r}")
            return None
        if len(raw) != 1:
            self.problem(
                where,
                f"a group must have exactly one key (one of {', '.join(GROUP_KEYS)}); "
                f"got {sorted(map(str, raw))}",
            )
            return None
        key, value = next(iter(raw.items()))
        if key not in GROUP_KEYS:
            close = get_close_matches(str(key).lower(), GROUP_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.problem(where, f"unknown operator {key!r}; use one of {', '.join(GROUP_KEYS)}{hint}")
            return None
        if key == API_VERSIONS:
            return self.api_versions(value, f"{where}.{key}")
        if not isinstance(value, (list, tuple)):
            self.problem(
                f"{where}.{key}",
                f"must be a list of property paths and groups; got {type(value).__name__}",
            )
            return None
        if not value:
            self.problem(f"{where}.{key}", "lists nothing")
            return None
        entries = []
        seen: set[tuple[str, ...]] = set()
        for index, item in enumerate(value):
            entry_where = f"{where}.{key}[{index}]"
            node: PropertyPath | Group | ApiVersionsGroup | None
            if isinstance(item, Mapping):
                node = self.group(item, entry_where)
            else:
                node = self.path(item, entry_where)
                if node is not None:
                    if node.names in seen:
                        self.problem(entry_where, f"{list(node.names)!r} is listed twice in this group")
                    seen.add(node.names)
            if node is not None:
                entries.append(node)
        if len(entries) != len(value):
            return None
        return Group(key, tuple(entries))

    def api_versions(self, raw: Any, where: str) -> ApiVersionsGroup | None:
        if not isinstance(raw, Mapping):
            self.problem(where, f"must be a dict with the keys {', '.join(API_VERSIONS_KEYS)}; got {raw!r}")
            return None
        unknown = sorted(str(key) for key in raw if key not in API_VERSIONS_KEYS)
        missing = [key for key in API_VERSIONS_KEYS if key not in raw]
        if unknown:
            self.problem(where, f"unknown keys {unknown}; the keys are {', '.join(API_VERSIONS_KEYS)}")
        if missing:
            self.problem(where, f"missing {', '.join(missing)}")
        if unknown or missing:
            return None
        before = len(self.problems)
        plugin = raw[CLIENT_PLUGIN]
        plugin_where = f"{where}.{CLIENT_PLUGIN}"
        if isinstance(plugin, str):
            if not plugin:
                self.problem(plugin_where, "names no client plugin")
            elif self.client_names is not None and plugin not in self.client_names:
                close = get_close_matches(plugin, list(self.client_names), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.problem(plugin_where, f"no client plugin named {plugin!r} is registered{hint}")
        elif isinstance(plugin, ClientPlugin) or (
            isinstance(plugin, type) and issubclass(plugin, ClientPlugin)
        ):
            if not plugin.name:
                self.problem(plugin_where, f"{plugin!r} has no name")
        else:
            self.problem(plugin_where, f"must be a client plugin name or a ClientPlugin; got {plugin!r}")
        versions = raw[VERSIONS]
        versions_where = f"{where}.{VERSIONS}"
        if not isinstance(versions, (list, tuple)) or not versions:
            self.problem(versions_where, f"must be a non-empty list of versions like ['1.2', '2.0']; got {versions!r}")
            versions = ()
        for index, version in enumerate(versions):
            try:
                Version.parse(version)
            except ValueError as error:
                self.problem(f"{versions_where}[{index}]", str(error))
        properties = raw[PROPERTIES]
        properties_where = f"{where}.{PROPERTIES}"
        paths = []
        if not isinstance(properties, (list, tuple)) or not properties:
            self.problem(properties_where, f"must be a non-empty list of property paths; got {properties!r}")
            properties = ()
        for index, item in enumerate(properties):
            item_where = f"{properties_where}[{index}]"
            if isinstance(item, Mapping):
                self.problem(item_where, "lists property paths only, not groups")
                continue
            node = self.path(item, item_where)
            if node is not None:
                paths.append(node)
        if len(self.problems) != before:
            return None
        return ApiVersionsGroup(plugin, tuple(str(v) for v in versions), tuple(paths))

    def path(self, raw: Any, where: str) -> PropertyPath | None:
        if isinstance(raw, str):
            self.problem(where, f"{raw!r}: a property path is a list of names, like [{raw!r}]")
            return None
        if not isinstance(raw, (list, tuple)):
            self.problem(
                where,
                f"{raw!r} is neither a property path (a list of names) nor a group (a one-key dict)",
            )
            return None
        if not raw:
            self.problem(where, "an empty property path")
            return None
        if not all(isinstance(name, str) for name in raw):
            self.problem(where, f"{list(raw)!r}: property names must be strings")
            return None
        names = tuple(raw)
        if not self.check_paths:
            return PropertyPath(names)
        list_prefixes = []
        schemata: Mapping[str, Schema] = self.schema
        for depth, name in enumerate(names):
            if name not in schemata:
                close = get_close_matches(name, list(schemata), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                if depth == 0:
                    self.problem(where, f"{list(names)!r}: unknown property {name!r}{hint}")
                else:
                    parent = ".".join(names[:depth])
                    self.problem(where, f"{list(names)!r}: {parent!r} has no sub-property {name!r}{hint}")
                return None
            schema = schemata[name]
            if depth == len(names) - 1:
                break
            shown = ".".join(names[: depth + 1])
            if schema.type == Schema.MAP and isinstance(schema.schema, Mapping):
                schemata = schema.schema
                continue
            if schema.type == Schema.LIST:
                item = schema.item_schema()
                if item is not None and item.type == Schema.MAP and isinstance(item.schema, Mapping):
                    list_prefixes.append(names[: depth + 1])
                    schemata = item.schema
                    continue
                self.problem(
                    where,
                    f"{list(names)!r}: {shown!r} is a List whose items are not Maps with a "
                    "declared schema, so it has no sub-properties",
                )
                return None
            if schema.type == Schema.MAP:
                self.problem(
                    where,
                    f"{list(names)!r}: {shown!r} is a Map without a declared schema, so its "
                    "sub-properties cannot be named",
                )
                return None
            self.problem(where, f"{list(names)!r}: {shown!r} is a {schema.type}; it has no sub-properties")
            return None
        return PropertyPath(names, tuple(list_prefixes))


def check_schema(
    groups: Any,
    properties_schema: Mapping[str, Schema],
    *,
    client_names: Collection[str] | None = None,
) -> list[str]:
    """Every mistake in a ``properties_groups_schema``, each naming the bad entry (called
    when a plugin registers). ``client_names``, when given, are the registered client
    plugin names an API_VERSIONS group may use."""
    parser = _Parser(properties_schema, client_names=client_names)
    parser.groups(groups)
    return parser.problems


def describe(groups: Any) -> Any:
    """The groups as JSON data (the resource-type API's ``properties_groups``): a client
    plugin, given as an object or a class, by its name."""
    if isinstance(groups, ClientPlugin) or (isinstance(groups, type) and issubclass(groups, ClientPlugin)):
        return groups.name
    if isinstance(groups, Mapping):
        return {str(key): describe(value) for key, value in groups.items()}
    if isinstance(groups, (list, tuple)):
        return [describe(item) for item in groups]
    if groups is None or isinstance(groups, (str, int, float, bool)):
        return groups
    return str(groups)


def parse(groups: Any, properties_schema: Mapping[str, Schema], check_paths: bool = True) -> list[Entry]:
    """The parsed groups; raises SchemaError listing every mistake."""
    parser = _Parser(properties_schema, check_paths=check_paths)
    parsed = parser.groups(groups)
    if parser.problems:
        raise SchemaError("; ".join(parser.problems))
    return parsed


# -- checking a resource's values ---------------------------------------------------------


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


_ABSENT = _Marker("<absent>")
_UNKNOWN = _Marker("<unknown>")

# The state of an entry: True given, False not given, None not known yet.
State = bool | None
# A list prefix -> the index of the item being checked (None: the list has no items).
Bindings = Mapping[tuple[str, ...], int | None]


def _combine(operator: str, states: Sequence[State]) -> State:
    given = sum(1 for state in states if state is True)
    unknown = sum(1 for state in states if state is None)
    if operator == AND:
        if given + unknown < len(states):
            return False
        return None if unknown else True
    if operator == OR:
        if given:
            return True
        return None if unknown else False
    # XOR
    if given >= 2:
        return False
    if unknown:
        return None
    return given == 1


def _join(words: Sequence[str], last: str) -> str:
    if len(words) == 1:
        return words[0]
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


class _Evaluation:
    def __init__(self, properties: Properties, lookup: ClientPluginLookup | None, prefix: str):
        self.data = properties.data
        self.resolver = properties.resolver
        self.lookup = lookup
        self.prefix = prefix
        self._resolved: dict[str, Any] = {}
        self._versions: dict[str, str | None | StokerError] = {}

    # values

    def _top_value(self, name: str) -> Any:
        if name not in self.data:
            return _ABSENT
        if name not in self._resolved:
            try:
                self._resolved[name] = self.resolver(self.data[name])
            except StokerError:
                # Reported by Properties.errors(); here the value is simply not known.
                self._resolved[name] = _UNKNOWN
        return self._resolved[name]

    @staticmethod
    def _child(value: Any, name: str) -> Any:
        if value is _ABSENT or value is None:
            return _ABSENT
        if value is _UNKNOWN or value is UNRESOLVED:
            return _UNKNOWN
        if isinstance(value, str):
            # A Map property may be given as JSON text (properties._to_map accepts it).
            try:
                value = json.loads(value)
            except ValueError:
                return _UNKNOWN
        if not isinstance(value, Mapping):
            return _UNKNOWN  # a type error, which the schema check reports
        return value.get(name, _ABSENT)

    def value(self, names: tuple[str, ...], bindings: Bindings) -> Any:
        value = self._top_value(names[0])
        for depth in range(1, len(names) + 1):
            prefix = names[:depth]
            if prefix in bindings:
                if value is _ABSENT or value is None:
                    return _ABSENT
                if value is _UNKNOWN or value is UNRESOLVED:
                    return _UNKNOWN
                index = bindings[prefix]
                if index is None:
                    return _ABSENT
                if not isinstance(value, list) or index >= len(value):
                    return _UNKNOWN
                value = value[index]
            if depth == len(names):
                return value
            value = self._child(value, names[depth])
        return value

    def state(self, path: PropertyPath, bindings: Bindings) -> State:
        value = self.value(path.names, bindings)
        if value is _ABSENT or value is None:
            return False
        if value is _UNKNOWN or value is UNRESOLVED:
            return None
        return True

    # naming

    @staticmethod
    def shown(names: tuple[str, ...], bindings: Bindings, start: int = 0) -> str:
        text = ""
        for depth in range(start, len(names)):
            text = f"{text}.{names[depth]}" if text else names[depth]
            index = bindings.get(names[: depth + 1])
            if index is not None:
                text = f"{text}[{index}]"
        return text

    def describe(self, entry: Entry, bindings: Bindings, start: int, operand: bool = False) -> str:
        if isinstance(entry, PropertyPath):
            return f"'{self.shown(entry.names, bindings, start)}'"
        if isinstance(entry, Group):
            operator, entries = entry.operator, entry.entries
        else:
            operator, entries = OR, entry.properties
        words = [self.describe(child, bindings, start, operand=True) for child in entries]
        if len(words) == 1:
            return words[0]
        text = {
            AND: f"all of {_join(words, 'and')}",
            OR: f"at least one of {_join(words, 'or')}",
            XOR: f"exactly one of {_join(words, 'or')}",
        }[operator]
        return f"({text})" if operand else text

    # evaluation

    def evaluate(self, entry: Entry, bindings: Bindings, errors: list[PropertyError]) -> State:
        if isinstance(entry, PropertyPath):
            return self.state(entry, bindings)
        if isinstance(entry, Group):
            return _combine(entry.operator, [self.evaluate(child, bindings, errors) for child in entry.entries])
        states = [self.state(path, bindings) for path in entry.properties]
        given = [path for path, state in zip(entry.properties, states, strict=True) if state is True]
        if given:
            errors.extend(self.version_errors(entry, given, bindings))
        return _combine(OR, states)

    def negotiated(self, group: ApiVersionsGroup) -> str | None | StokerError:
        name = group.client_name
        if name not in self._versions:
            try:
                if isinstance(group.client_plugin, ClientPlugin):
                    plugin = group.client_plugin
                elif self.lookup is None:
                    raise StokerError("no client plugins are available to check API versions")
                else:
                    plugin = self.lookup(name)
                self._versions[name] = plugin.negotiated_version()
            except StokerError as error:
                self._versions[name] = error
        return self._versions[name]

    def version_errors(
        self, group: ApiVersionsGroup, given: list[PropertyPath], bindings: Bindings
    ) -> list[PropertyError]:
        negotiated = self.negotiated(group)
        name = group.client_name
        if isinstance(negotiated, StokerError):
            shown = _join([f"'{self.shown(p.names, bindings)}'" for p in given], "and")
            return [
                PropertyError(
                    f"cannot check {shown} against the API versions of client '{name}': {negotiated}",
                    path=self.prefix,
                )
            ]
        allowed = [Version.parse(version) for version in group.versions]
        if negotiated is not None and Version.parse(negotiated) in allowed:
            return []
        versions = _join(list(group.versions), "or")
        current = (
            f"the negotiated version is {negotiated}"
            if negotiated is not None
            else f"client '{name}' negotiates no version"
        )
        errors = []
        for path in given:
            shown = self.shown(path.names, bindings)
            errors.append(
                PropertyError(
                    f"property '{shown}' requires API version {versions} of client '{name}'; {current}",
                    path=f"{self.prefix}.{shown}" if self.prefix else shown,
                )
            )
        return errors

    def bindings(
        self, prefixes: list[tuple[str, ...]], paths: list[PropertyPath], bindings: dict
    ) -> Iterator[dict]:
        """Every assignment of an item index to each list the group's paths go through."""
        if not prefixes:
            yield bindings
            return
        prefix, rest = prefixes[0], prefixes[1:]
        value = self.value(prefix, bindings)
        if value is _UNKNOWN or value is UNRESOLVED or (
            value is not _ABSENT and value is not None and not isinstance(value, list)
        ):
            return  # how many items there are is not known yet: undecided
        items = value if isinstance(value, list) else []
        if not items:
            if all(path.names[: len(prefix)] == prefix for path in paths):
                return  # every entry is inside the empty list: nothing to check
            inner = [other for other in rest if other[: len(prefix)] != prefix]
            yield from self.bindings(inner, paths, {**bindings, prefix: None})
            return
        for index in range(len(items)):
            yield from self.bindings(rest, paths, {**bindings, prefix: index})

    def check(self, group: Entry) -> list[PropertyError]:
        paths = list(_paths(group))
        prefixes = sorted({p for path in paths for p in path.list_prefixes}, key=len)
        errors: list[PropertyError] = []
        for bindings in self.bindings(prefixes, paths, {}):
            state = self.evaluate(group, bindings, errors)
            if state is False and isinstance(group, Group):
                errors.append(self.group_error(group, paths, bindings))
        return errors

    def group_error(self, group: Group, paths: list[PropertyPath], bindings: Bindings) -> PropertyError:
        # Name entries relative to the list item they all lie in, and point the error there.
        base: tuple[str, ...] = ()
        for prefix, index in bindings.items():
            if index is not None and len(prefix) > len(base) and all(
                path.names[: len(prefix)] == prefix for path in paths
            ):
                base = prefix
        start = len(base)
        message = f"{self.describe(group, bindings, start)} must be given"
        states = [self.evaluate(entry, bindings, []) for entry in group.entries]
        operands = [self.describe(entry, bindings, start, operand=True) for entry in group.entries]
        if group.operator == XOR:
            given = [word for word, state in zip(operands, states, strict=True) if state is True]
            if len(given) == 2:
                message += f", but {given[0]} and {given[1]} were both given"
            elif len(given) > 2:
                message += f", but {_join(given, 'and')} were given"
        elif group.operator == AND and len(operands) > 1:
            missing = [word for word, state in zip(operands, states, strict=True) if state is False]
            verb = "was" if len(missing) == 1 else "were"
            message += f", but {_join(missing, 'and')} {verb} not"
        where = self.prefix
        if base:
            shown = self.shown(base, bindings)
            where = f"{where}.{shown}" if where else shown
        return PropertyError(message, path=where)


def validate(
    groups: Any,
    properties: Properties,
    client_plugin_lookup: ClientPluginLookup | None = None,
    path: str | None = None,
) -> list[PropertyError]:
    """Every properties-group rule ``properties`` break, as PropertyErrors whose ``path``
    starts with ``path`` (default: ``properties.path``, e.g. ``resources.server.properties``);
    ``str(error)`` reads "<path>: <message>". An empty list means the values pass.

    ``client_plugin_lookup`` gives the client plugin for a name (``Resource.client_plugin``);
    it is only called when an API_VERSIONS group has a property given. Raises SchemaError
    if the groups themselves are malformed (``check_schema`` finds that at registration).
    """
    parsed = parse(groups, properties.schema, check_paths=not properties.accept_any)
    evaluation = _Evaluation(properties, client_plugin_lookup, properties.path if path is None else path)
    errors: list[PropertyError] = []
    seen: set[str] = set()
    for group in parsed:
        for error in evaluation.check(group):
            # Lists crossed by the same group can repeat an error; report it once.
            if str(error) not in seen:
                seen.add(str(error))
                errors.append(error)
    return errors
