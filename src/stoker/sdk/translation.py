"""Property translation rules: old (deprecated, hidden) properties mapped onto new ones (seed 000).

A plugin returns ``TranslationRule`` objects from ``Resource.translation_rules(properties)``;
``apply_rules`` attaches them to a ``Properties``. From then on ``properties[key]`` yields
the translated value of every property a rule touches, so validation and the handlers only
ever see the new properties, while ``properties.data`` stays the raw user data.

The four rules, as in Heat:

- ADD      append to a List property: ``value`` (a list), the value of the sibling
           ``value_name`` or the value at ``value_path``. Only List properties.
- REPLACE  set a property to ``value``, or move the value of ``value_path`` / of the
           sibling ``value_name`` into it (the old one is removed). Through a List of
           maps, it applies to every item. Giving both the old and the new property is
           an error that names both.
- DELETE   remove a property (in every item, through a List of maps).
- RESOLVE  replace a name by an id with the ``finder`` method of a client plugin,
           ``finder(entity, value)`` when the rule has an ``entity``, else ``finder(value)``.

Translation works on resolved values: the top-level properties the rules touch are resolved
through the ``Properties.resolver`` once, on first read, copied and rewritten. A value that
is not known yet (``UNRESOLVED``) is carried where the rule says, never looked into and
never sent to a finder. Rules run in Heat's order: every ADD, then REPLACE, RESOLVE, DELETE
(stable within one kind), so a value is replaced before it is resolved and read before the
rule that retires it runs.

This module knows nothing of templates, the engine or concrete clients. Errors in a rule
itself are ``SchemaError`` (a plugin bug); errors in the user's values are ``PropertyError``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from stoker.sdk.exceptions import PropertyError, SchemaError, StokerError, UnknownClientPluginError
from stoker.sdk.properties import UNRESOLVED, Schema

__all__ = ["TranslationRule", "apply_rules", "check_rules"]

if TYPE_CHECKING:
    from stoker.sdk.properties import Properties

ClientResolver = Callable[[str], Any]


class TranslationRule:
    """One rule translating a property; see the module docstring for the four rules.

    ``translation_path`` and ``value_path`` are lists of property names from the top of the
    schema (a List of maps is crossed by naming the item's property: ``[networks, uuid]``).
    ``value_name`` names a sibling of the translated property (same map or list item).
    ``custom_value_path`` continues ``value_path``/``value_name`` inside a Map property that
    has no schema. ``client_plugin`` is the client plugin object, or its name when
    ``apply_rules`` is given a ``client_resolver``.
    """

    RULE_KEYS = (ADD, REPLACE, DELETE, RESOLVE) = ("Add", "Replace", "Delete", "Resolve")

    def __init__(
        self,
        properties: Properties | None,
        rule: str,
        translation_path: list[str],
        value: Any = None,
        value_name: str | None = None,
        value_path: list[str] | None = None,
        client_plugin: Any = None,
        finder: str | None = None,
        entity: str | None = None,
        custom_value_path: list[str] | None = None,
    ):
        self.properties = properties
        self.rule = rule
        self.translation_path = translation_path
        # As Heat: an empty value is no value (a plugin passing ``props.get(old)`` for an
        # unset property must not blank the new one); 0 and false are values.
        self.value = value if _given(value) else None
        self.value_name = value_name
        self.value_path = value_path
        self.client_plugin = client_plugin
        self.finder = finder
        self.entity = entity
        self.custom_value_path = custom_value_path
        problems = self.declaration_errors()
        if problems:
            raise SchemaError(f"Invalid translation rule {self.describe()}: {'; '.join(problems)}")

    def describe(self) -> str:
        if _is_path(self.translation_path):
            return f"{self.rule} {'.'.join(self.translation_path)}"
        return f"{self.rule} {self.translation_path!r}"

    def __repr__(self) -> str:
        return f"<TranslationRule {self.describe()}>"

    def declaration_errors(self) -> list[str]:
        """The mistakes that need no schema to be seen (the constructor raises on them)."""
        problems = []
        if self.rule not in self.RULE_KEYS:
            problems.append(
                f"There is no rule {self.rule}. List of allowed rules is: {', '.join(self.RULE_KEYS)}."
            )
        if not _is_path(self.translation_path):
            problems.append('"translation_path" should be non-empty list with path to translate.')
        if self.value_path is not None and not _is_path(self.value_path):
            problems.append('"value_path" should be non-empty list with path to the value.')
        sources = [self.value is not None, self.value_name is not None, self.value_path is not None]
        if sources.count(True) > 1:
            problems.append(
                '"value_path", "value" and "value_name" are mutually exclusive and cannot be '
                "specified at the same time."
            )
        if self.rule == self.ADD and self.value is not None and not isinstance(self.value, list):
            problems.append('"value" must be list type when rule is Add.')
        if self.custom_value_path is not None:
            if not _is_path(self.custom_value_path):
                problems.append('"custom_value_path" should be non-empty list with path.')
            if self.value_name is None and self.value_path is None:
                problems.append('"custom_value_path" needs "value_name" or "value_path".')
        if self.rule == self.RESOLVE:
            if self.client_plugin is None or not self.finder:
                problems.append(
                    f'"client_plugin" and "finder" should be specified for {self.RESOLVE} rule'
                )
            elif not isinstance(self.client_plugin, str) and not callable(
                getattr(self.client_plugin, self.finder, None)
            ):
                problems.append(
                    f"client plugin {type(self.client_plugin).__name__} has no finder method {self.finder!r}"
                )
        return problems

    def source_path(self) -> list[str] | None:
        """Where the moved or added value comes from, from the top of the schema."""
        if self.value_name is not None and _is_path(self.translation_path):
            return [*self.translation_path[:-1], self.value_name]
        return self.value_path


_ORDER = {
    TranslationRule.ADD: 0,
    TranslationRule.REPLACE: 1,
    TranslationRule.RESOLVE: 2,
    TranslationRule.DELETE: 3,
}


def _is_path(path: Any) -> bool:
    return isinstance(path, list) and len(path) > 0 and all(isinstance(key, str) for key in path)


# -- checks against a schema ----------------------------------------------------


def _schema_at(
    schemata: Mapping[str, Schema], path: list[str]
) -> tuple[Schema | None, str | None, bool]:
    """The schema of the property at ``path``, a problem, and whether the path crosses a List.

    The schema is None without a problem when the path goes into a Map or List that
    declares no schema: nothing below can be checked.
    """
    current: Mapping[str, Schema] | None = schemata
    crosses_list = False
    for index, key in enumerate(path):
        if current is None:
            return None, None, crosses_list
        schema = current.get(key)
        dotted = ".".join(path[: index + 1])
        if schema is None:
            return None, f"property {dotted} is not in the schema", crosses_list
        if index == len(path) - 1:
            return schema, None, crosses_list
        if schema.type == Schema.LIST:
            crosses_list = True
            item = schema.item_schema()
            if item is not None and item.type not in (Schema.MAP, Schema.ANY):
                return (
                    None,
                    f"property {dotted} is a List of {item.type}: it has no property {path[index + 1]}",
                    True,
                )
            schema = item
        if schema is None or schema.type == Schema.ANY:
            current = None
        elif schema.type == Schema.MAP:
            current = schema.schema if isinstance(schema.schema, Mapping) else None
        else:
            return (
                None,
                f"property {dotted} is a {schema.type}: it has no property {path[index + 1]}",
                crosses_list,
            )
    return None, None, crosses_list


def _schema_errors(rule: TranslationRule, schemata: Mapping[str, Schema]) -> list[str]:
    problems = []
    target, problem, _ = _schema_at(schemata, rule.translation_path)
    if problem:
        problems.append(f"translation_path: {problem}")
    dotted = ".".join(rule.translation_path)
    if (
        rule.rule == TranslationRule.ADD
        and target is not None
        and target.type not in (Schema.LIST, Schema.ANY)
    ):
        problems.append(
            f"Add rule must be used only for List properties; {dotted} is a {target.type} property"
        )
    source_path = rule.source_path()
    if source_path is not None:
        field = "value_name" if rule.value_name is not None else "value_path"
        source, problem, crosses_list = _schema_at(schemata, source_path)
        if problem:
            problems.append(f"{field}: {problem}")
        if field == "value_path" and crosses_list and rule.rule == TranslationRule.REPLACE:
            problems.append("Cannot use value_path for properties inside list-type properties")
        if (
            rule.custom_value_path is not None
            and source is not None
            and not (
                source.type == Schema.ANY
                or (source.type == Schema.MAP and not isinstance(source.schema, Mapping))
            )
        ):
            problems.append(
                f"custom_value_path needs a Map without schema at {'.'.join(source_path)}; it is a {source.type} property"
            )
    return problems


def check_rules(schema: Mapping[str, Schema], rules: Iterable[Any] | None) -> list[str]:
    """Every mistake in ``rules`` for a resource with properties ``schema`` (one string each).

    Usable at plugin registration: nothing is resolved and no client is called.
    """
    problems = []
    for rule in rules or []:
        if not isinstance(rule, TranslationRule):
            problems.append(
                f"translation rules must be TranslationRule objects, not {type(rule).__name__}"
            )
            continue
        found = rule.declaration_errors()
        if not found:
            found = _schema_errors(rule, schema)
        problems.extend(f"translation rule {rule.describe()}: {problem}" for problem in found)
    return problems


# -- execution ----------------------------------------------------------------------


def _copy_tree(value: Any) -> Any:
    """A copy of the lists and maps of a resolved value: rules rewrite it in place, and
    neither the resolver's results nor a rule's ``value`` may change."""
    if isinstance(value, Mapping):
        return {key: _copy_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_tree(item) for item in value]
    return value


def _given(value: Any) -> bool:
    """Whether a property counts as set: an unknown value does; None and an empty string,
    list or map do not (as Heat, which tests truth; 0 and false count as set here)."""
    if value is UNRESOLVED:
        return True
    if value is None:
        return False
    return not (isinstance(value, (str, list, dict)) and len(value) == 0)


def _parent(where: str, key: str) -> str:
    """The printable path of the map holding ``key``, given the printable path of the key."""
    return where[: len(where) - len(key)]


def _conflict(first: list[str], second: list[str], path: str) -> PropertyError:
    names = ", ".join([".".join(first), ".".join(second)])
    return PropertyError(
        f"Cannot define the following properties at the same time: {names}.", path=path
    )


class Translation:
    """The rules applied to one ``Properties``: the translated, resolved values of the
    top-level properties the rules touch, computed once on first read."""

    def __init__(
        self,
        properties: Properties,
        rules: list[TranslationRule],
        client_resolver: ClientResolver | None = None,
        ignore_resolve_error: bool = False,
    ):
        self.properties = properties
        self.rules = sorted(rules, key=lambda rule: _ORDER[rule.rule])
        self.client_resolver = client_resolver
        self.ignore_resolve_error = ignore_resolve_error
        touched = {rule.translation_path[0] for rule in rules}
        touched.update(rule.value_path[0] for rule in rules if rule.value_path)
        # A value_name beside a top-level property is a top-level property too (Heat's
        # OS::Designate::Zone moves ``primaries`` into ``masters`` so).
        sibling_names = {
            rule.value_name for rule in rules if rule.value_name and len(rule.translation_path) == 1
        }
        touched.update(sibling_names)
        self.keys = frozenset(touched)
        # Top-level properties a rule takes away: they are not recorded with the values.
        retired = {
            rule.translation_path[0]
            for rule in rules
            if rule.rule == TranslationRule.DELETE and len(rule.translation_path) == 1
        }
        retired.update(
            rule.value_path[0]
            for rule in rules
            if rule.rule == TranslationRule.REPLACE
            and rule.value_path
            and len(rule.value_path) == 1
            and not rule.custom_value_path
        )
        retired.update(
            rule.value_name
            for rule in rules
            if rule.rule == TranslationRule.REPLACE
            and rule.value_name in sibling_names
            and not rule.custom_value_path
        )
        self.retired = frozenset(retired)
        self._values: dict[str, Any] | None = None
        self._error: StokerError | None = None

    def affects(self, key: str) -> bool:
        return key in self.keys

    def retires(self, key: str) -> bool:
        return key in self.retired

    def lookup(self, key: str) -> tuple[bool, Any]:
        """(present, value) of a top-level property after translation, resolved but not yet
        converted to its type."""
        values = self.values()
        return key in values, values.get(key)

    def values(self) -> dict[str, Any]:
        if self._error is not None:
            raise self._error
        if self._values is None:
            try:
                self._values = self._translate()
            except StokerError as error:
                # The same error object for every property read: errors() reports it once.
                self._error = error
                raise
        return self._values

    def _where(self, suffix: str) -> str:
        base = self.properties.path
        return f"{base}.{suffix}" if base and suffix else base or suffix

    def _translate(self) -> dict[str, Any]:
        data = self.properties.data
        resolver = self.properties.resolver
        work = {key: _copy_tree(resolver(data[key])) for key in sorted(self.keys) if key in data}
        for rule in self.rules:
            if rule.rule == TranslationRule.ADD:
                self._add(rule, work)
            elif rule.rule == TranslationRule.REPLACE:
                self._replace(rule, work)
            elif rule.rule == TranslationRule.RESOLVE:
                self._resolve(rule, work)
            else:
                for container, key, _ in self._locations(work, rule.translation_path, create=False):
                    container.pop(key, None)
        return work

    def _locations(
        self, work: dict[str, Any], path: list[str], create: bool
    ) -> Iterator[tuple[dict, str, str]]:
        """Every (map, key, printable path) the rule path names: through a List of maps,
        one per item. ``create`` makes missing Map properties on the way (a value will be
        written); an unknown value or a scalar on the way ends the walk there."""
        schemata: Mapping[str, Schema] | None = (
            None if self.properties.accept_any else self.properties.schema
        )

        def walk(
            container: dict, index: int, schemata: Mapping[str, Schema] | None, where: str
        ) -> Iterator[tuple[dict, str, str]]:
            key = path[index]
            if index == len(path) - 1:
                yield container, key, f"{where}{key}"
                return
            schema = schemata.get(key) if schemata is not None else None
            child = container.get(key)
            if child is None and create and schema is not None and schema.type == Schema.MAP:
                child = container[key] = {}
            if schema is not None and schema.type == Schema.LIST:
                schema = schema.item_schema()
            below = (
                schema.schema if schema is not None and isinstance(schema.schema, Mapping) else None
            )
            if isinstance(child, dict):
                yield from walk(child, index + 1, below, f"{where}{key}.")
            elif isinstance(child, list):
                for position, item in enumerate(child):
                    if isinstance(item, dict):
                        yield from walk(item, index + 1, below, f"{where}{key}[{position}].")

        return walk(work, 0, schemata, "")

    def _dig(
        self, container: dict, keys: list[str], custom_from: int, prefix: str = ""
    ) -> tuple[dict | None, str, Any]:
        """(map, key, value) at ``keys`` below ``container`` through maps only; the map is
        None when the value is missing or unknown on the way. ``keys[custom_from:]`` is
        the rule's custom_value_path (named in the error when a step is not a map);
        ``prefix`` is the printable path of ``container``."""
        for index, key in enumerate(keys):
            value = container.get(key)
            if index == len(keys) - 1:
                return container, key, value
            if value is None or value is UNRESOLVED:
                return None, key, value
            if isinstance(value, dict):
                container = value
                continue
            where = self._where(prefix + ".".join(keys[: index + 1]))
            if index + 1 >= custom_from:
                raise PropertyError(
                    "Incorrectly specified custom_value_path - cannot pull out required value "
                    f"from data of {type(value).__name__} type.",
                    path=where,
                )
            if isinstance(value, list):
                raise SchemaError(
                    "Cannot use value_path for properties inside list-type properties", path=where
                )
            # A scalar where a map belongs: nothing to move; converting the value reports it.
            return None, key, None
        raise AssertionError("unreachable: keys is never empty")

    def _add(self, rule: TranslationRule, work: dict[str, Any]) -> None:
        custom = rule.custom_value_path or []
        shared: list[Any] | None = None
        if rule.value is not None:
            shared = list(rule.value)
        elif rule.value_path is not None:
            shared = []
            for container, key, where in self._locations(work, rule.value_path, create=False):
                _, _, found = self._dig(container, [key, *custom], 1, _parent(where, key))
                if _given(found):
                    shared.extend(found if isinstance(found, list) else [found])
        if shared is not None and not shared:
            return
        for container, key, where in self._locations(
            work, rule.translation_path, create=shared is not None
        ):
            if shared is not None:
                extra = shared
            elif rule.value_name is not None:
                _, _, found = self._dig(
                    container, [rule.value_name, *custom], 1, _parent(where, key)
                )
                if not _given(found):
                    continue
                extra = found if isinstance(found, list) else [found]
            else:
                continue
            current = container.get(key)
            if current is UNRESOLVED:
                continue  # an unknown list stays unknown: it is checked once known
            if current is None:
                current = []
            if not isinstance(current, list):
                raise PropertyError(
                    f"Add rule must be used only for lists: {where} is not a list",
                    path=self._where(where),
                )
            container[key] = current + _copy_tree(extra)

    def _replace(self, rule: TranslationRule, work: dict[str, Any]) -> None:
        custom = rule.custom_value_path or []
        if rule.value is not None:
            for container, key, _ in self._locations(work, rule.translation_path, create=True):
                container[key] = _copy_tree(rule.value)
            return
        if rule.value_path is not None:
            holder, held, value = self._dig(work, [*rule.value_path, *custom], len(rule.value_path))
            if not _given(value):
                return
            targets = list(self._locations(work, rule.translation_path, create=True))
            for container, key, where in targets:
                if _given(container.get(key)):
                    raise _conflict(rule.translation_path, rule.value_path, self._where(where))
            for container, key, _ in targets:
                container[key] = _copy_tree(value)
            if targets and holder is not None:
                holder.pop(held, None)
            return
        if rule.value_name is not None:
            for container, key, where in self._locations(work, rule.translation_path, create=False):
                holder, held, value = self._dig(
                    container, [rule.value_name, *custom], 1, _parent(where, key)
                )
                if not _given(value):
                    continue
                if _given(container.get(key)):
                    raise _conflict(
                        rule.translation_path,
                        [*rule.translation_path[:-1], rule.value_name],
                        self._where(where),
                    )
                container[key] = value
                if holder is not None:
                    holder.pop(held, None)

    def _resolve(self, rule: TranslationRule, work: dict[str, Any]) -> None:
        for container, key, where in self._locations(work, rule.translation_path, create=False):
            if key in container:
                container[key] = self._find(rule, container[key], where)

    def _find(self, rule: TranslationRule, value: Any, where: str) -> Any:
        if isinstance(value, list):
            return [self._find(rule, item, f"{where}[{index}]") for index, item in enumerate(value)]
        if not _given(value) or value is UNRESOLVED:
            return value
        plugin = rule.client_plugin
        if isinstance(plugin, str):
            if self.client_resolver is None:
                raise SchemaError(
                    f"Translation rule {rule.describe()} names client plugin {plugin!r}, "
                    "but apply_rules was given no client_resolver",
                    path=self._where(where),
                )
            try:
                plugin = self.client_resolver(plugin)
            except StokerError as error:
                # An unknown name (a plugin's mistake) is told at the property the rule
                # resolves, in the rule's words, so the message names the resource.
                if isinstance(error, UnknownClientPluginError):
                    error.message = f"Translation rule {rule.describe()} names client plugin {plugin!r}, which is not registered"
                    error.args = (error.message,)
                if error.path is None:
                    error.path = self._where(where)
                raise
        assert rule.finder is not None  # a RESOLVE rule has one (its constructor checks)
        finder = getattr(plugin, rule.finder)
        try:
            return finder(rule.entity, value) if rule.entity else finder(value)
        except Exception as error:  # noqa: BLE001 - a client raises its own types
            if self.ignore_resolve_error:
                return value
            if isinstance(error, StokerError):
                if error.path is None:
                    error.path = self._where(where)
                raise
            raise PropertyError(
                f"Cannot resolve {value!r} with {type(plugin).__name__}.{rule.finder}: {error}",
                path=self._where(where),
            ) from error


def resource_rules(resource: Any, properties: Properties) -> list[Any]:
    """A plugin's translation rules, whichever way it declares ``translation_rules``:
    ``(self, props)`` as Heat calls it, or ``(self)`` as seed 000's example writes it (its
    rules then read ``self.properties``). Every caller asks through here."""
    method = resource.translation_rules
    function = getattr(method, "__func__", None)
    takes = _TAKES_PROPERTIES.get(function) if function is not None else None
    if takes is None:
        takes = _takes_properties(method)
        if function is not None:
            _TAKES_PROPERTIES[function] = takes
    return method(properties) if takes else method()


# translation_rules function -> whether it takes the properties: read once per plugin
# class, not for every resource made (inspect.signature was a tenth of a big tree's create).
_TAKES_PROPERTIES: dict[Any, bool] = {}


def _takes_properties(method: Any) -> bool:
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): Heat's way
        return True
    positional = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
    )
    return any(parameter.kind in positional for parameter in parameters)


def _names_unknown_client(rule: TranslationRule, known_clients: Collection[str] | None) -> bool:
    return known_clients is not None and isinstance(rule.client_plugin, str) and rule.client_plugin not in known_clients


def apply_rules(
    properties: Properties,
    rules: Iterable[TranslationRule] | None,
    client_resolver: ClientResolver | None = None,
    *,
    client_resolve: bool = True,
    ignore_resolve_error: bool = False,
    known_clients: Collection[str] | None = None,
) -> Translation | None:
    """Translate ``properties`` by ``rules`` (what ``Resource.__init__`` does with
    ``self.translation_rules(self.properties)``). Rules replace any applied before; no
    rules (None or empty) change nothing, as in Heat: a plugin asked again for its rules
    sees translated values (``sequence`` already gone) and may return none.

    ``client_resolver(name)`` returns the client plugin of a rule that names its plugin
    by a string. ``client_resolve=False`` leaves RESOLVE rules out (no client is called),
    except one naming a client plugin that is not among ``known_clients`` (when given):
    its first read fails at its property, as create would, without calling any client.
    ``ignore_resolve_error`` keeps the name when a finder fails. Nothing is resolved here:
    the values are translated on the first read. Raises ``SchemaError`` when a rule does
    not fit the schema. Returns the Translation in use (None when there is none).
    """
    rules = list(rules or [])
    if not rules:
        return properties.translation
    for rule in rules:
        if not isinstance(rule, TranslationRule):
            raise SchemaError(
                f"translation rules must be TranslationRule objects, not {type(rule).__name__}"
            )
    if not properties.accept_any:
        problems = check_rules(properties.schema, rules)
        if problems:
            raise SchemaError("; ".join(problems), path=properties.path)
    if not client_resolve:
        rules = [rule for rule in rules if rule.rule != TranslationRule.RESOLVE or _names_unknown_client(rule, known_clients)]
    translation = (
        Translation(properties, rules, client_resolver, ignore_resolve_error) if rules else None
    )  # None: every rule was a RESOLVE left out
    properties.use_translation(translation)
    return translation
