"""Property schemas and resolved property values (seed 001, "定义资源属性").

``Schema`` declares one property; ``Properties`` is what a plugin reads through
``self.properties``: intrinsic functions resolved, defaults applied, values converted to
the declared type and checked against constraints. ``Properties.data`` is the raw user
data. This module knows nothing about templates: functions are resolved through the
``resolver`` callable the engine supplies.

Translation rules (``stoker.sdk.translation``) plug in through ``Properties.use_translation``:
the properties a rule touches are then read from the translated values. ``TranslationRule``
is also reachable here, as ``properties.TranslationRule`` (seed 000), without importing
the translation module at load time (it imports this one).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from stoker.sdk import constraints as constr
from stoker.sdk.exceptions import PropertyError, SchemaError, StokerError
from stoker.sdk.support import SupportStatus

if TYPE_CHECKING:
    from stoker.sdk.translation import Translation, TranslationRule

__all__ = [
    "UNRESOLVED",
    "Properties",
    "contains_unresolved",
    "Schema",
    "TranslationRule",
    "convert",
    "resolve_properties",
    "value_for",
]


def __getattr__(name: str) -> Any:
    # properties.TranslationRule, as the seed's plugins spell it; imported on first use
    # because stoker.sdk.translation imports this module.
    if name == "TranslationRule":
        from stoker.sdk.translation import TranslationRule

        return TranslationRule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Unresolved:
    """Stands for a value that cannot be known yet (a resource not created)."""

    _instance: _Unresolved | None = None

    def __new__(cls) -> _Unresolved:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unresolved>"


UNRESOLVED = _Unresolved()


def contains_unresolved(value: Any) -> bool:
    """Whether ``value`` is, or holds somewhere inside, a value not known yet."""
    if value is UNRESOLVED:
        return True
    if isinstance(value, dict):
        return any(contains_unresolved(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_unresolved(v) for v in value)
    return False


class Schema:
    """The declaration of one property."""

    TYPES = (INTEGER, STRING, NUMBER, BOOLEAN, MAP, LIST, ANY) = (
        constr.INTEGER,
        constr.STRING,
        constr.NUMBER,
        constr.BOOLEAN,
        constr.MAP,
        constr.LIST,
        constr.ANY,
    )

    def __init__(
        self,
        data_type: str,
        description: str | None = None,
        default: Any = None,
        schema: Schema | Mapping[str, Schema] | None = None,
        required: bool = False,
        constraints: list[constr.Constraint] | None = None,
        implemented: bool = True,
        update_allowed: bool = False,
        immutable: bool = False,
        support_status: SupportStatus | None = None,
        allow_conversion: bool = False,
    ):
        if data_type not in self.TYPES:
            raise SchemaError(f"Invalid type {data_type!r}; use one of properties.Schema.TYPES")
        self.type = data_type
        self.description = description
        self.default = default
        self.schema = schema
        self.required = required
        self.constraints = list(constraints or [])
        self.implemented = implemented
        self.update_allowed = update_allowed
        self.immutable = immutable
        self.support_status = support_status or SupportStatus()
        self.allow_conversion = allow_conversion

    # Heat spells the attribute data_type in some places.
    @property
    def data_type(self) -> str:
        return self.type

    def empty_value(self) -> Any:
        """The value of an unset property without a default (the guide's table)."""
        return {
            self.STRING: "",
            self.NUMBER: 0,
            self.INTEGER: 0,
            self.LIST: [],
            self.MAP: {},
            self.BOOLEAN: False,
        }.get(self.type)

    def has_default(self) -> bool:
        return self.default is not None

    def item_schema(self) -> Schema | None:
        """For a LIST: the schema of each item (a dict schema means structured MAP items)."""
        if self.schema is None:
            return None
        if isinstance(self.schema, Schema):
            return self.schema
        return Schema(self.MAP, schema=self.schema)

    def check(self, owner: str, path: str = "") -> list[str]:
        """Return the mistakes in this declaration (called when a plugin registers)."""
        problems = []
        where = f"{owner}: property {path}" if path else owner
        for constraint in self.constraints:
            if self.type not in constraint.valid_types and self.type != self.ANY:
                problems.append(
                    f"{where}: {type(constraint).__name__} constraint does not apply to type {self.type}"
                )
        if self.schema is not None and self.type not in (self.MAP, self.LIST):
            problems.append(f"{where}: a nested schema is only allowed on Map and List properties")
        if self.type == self.MAP and isinstance(self.schema, Schema):
            problems.append(f"{where}: the schema of a Map property must be a dict of schemas")
        if isinstance(self.schema, Mapping):
            for name, sub in self.schema.items():
                if not isinstance(sub, Schema):
                    problems.append(f"{where}.{name}: must be a properties.Schema")
                else:
                    problems.extend(sub.check(owner, f"{path}.{name}" if path else name))
        elif isinstance(self.schema, Schema):
            problems.extend(self.schema.check(owner, f"{path}[*]" if path else "[*]"))
        if self.default is not None and self.type not in (self.ANY, self.MAP):
            try:
                convert(self, self.default, path or "default")
            except PropertyError as error:
                problems.append(f"{where}: the default is invalid: {error.message}")
        elif self.default is not None and self.type == self.MAP and not isinstance(self.default, Mapping):
            # Only the shape: the plugin guide's own example has a Map default whose
            # keys its nested schema does not declare.
            problems.append(f"{where}: the default is invalid: '{self.default}' is not a map")
        return problems

    def lifecycle_notes(self, owner: str, path: str) -> list[str]:
        """Where this property's support status chain, and its sub-properties', depart from
        the lifecycle (seed 000): warnings at load, never a refusal."""
        notes = []
        note = self.support_status.lifecycle_note()
        if note:
            notes.append(f"{owner}: property {path}: {note}")
        if isinstance(self.schema, Mapping):
            for name, sub in self.schema.items():
                if isinstance(sub, Schema):
                    notes.extend(sub.lifecycle_notes(owner, f"{path}.{name}"))
        elif isinstance(self.schema, Schema):
            notes.extend(self.schema.lifecycle_notes(owner, f"{path}[*]"))
        return notes

    def to_dict(self) -> dict[str, Any]:
        """The schema in Heat's resource-type API shape."""
        body: dict[str, Any] = {
            "type": self.type.lower() if self.type != self.MAP else "map",
            "description": self.description,
            "required": self.required,
            "update_allowed": self.update_allowed,
            "immutable": self.immutable,
        }
        if self.default is not None:
            body["default"] = self.default
        if self.constraints:
            body["constraints"] = [c.to_dict() for c in self.constraints]
        if isinstance(self.schema, Mapping):
            body["schema"] = {k: v.to_dict() for k, v in self.schema.items()}
        elif isinstance(self.schema, Schema):
            body["schema"] = {"*": self.schema.to_dict()}
        if self.support_status.says_more_than_supported():
            body["support_status"] = self.support_status.to_dict()
        return body


def _type_error(path: str, message: str, hint: str | None = None) -> PropertyError:
    return PropertyError(message, path=path, hint=hint)


def convert(schema: Schema, value: Any, path: str, context: Any = None) -> Any:
    """Convert ``value`` to the schema's type and check constraints, as Heat does.

    ``UNRESOLVED`` passes through untouched: it is checked once its value is known.
    """
    if value is UNRESOLVED:
        return value
    kind = schema.type
    if kind == Schema.INTEGER:
        value = _to_integer(value, path)
    elif kind == Schema.NUMBER:
        value = _to_number(value, path)
    elif kind == Schema.STRING:
        value = _to_string(value, path)
    elif kind == Schema.BOOLEAN:
        value = _to_boolean(value, path)
    elif kind == Schema.MAP and schema.allow_conversion and not isinstance(value, Mapping):
        return _converted_to_map(value, path)
    elif kind == Schema.MAP:
        value = _to_map(schema, value, path, context)
    elif kind == Schema.LIST:
        value = _to_list(schema, value, path, context)
    if not contains_unresolved(value):
        for constraint in schema.constraints:
            message = constraint.validate(value, context)
            if message:
                raise _type_error(path, message)
    return value


def _to_integer(value: Any, path: str) -> int:
    """Heat's Property._get_integer: ``int(value)``, so a boolean is 0 or 1 and a finite
    number loses its fraction (2.5 is 2), as Heat runs them; text must be an integer."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _type_error(path, f"Value '{value}' is not an integer")


def _to_number(value: Any, path: str) -> int | float:
    """Heat's Schema.str_to_num: a number (a boolean among them) as it is, text as an
    integer or else a float. Not infinity or NaN, which no JSON store can keep."""
    if isinstance(value, (int, float)) and (not isinstance(value, float) or math.isfinite(value)):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                pass
            else:
                if math.isfinite(number):
                    return number
    raise _type_error(path, f"Value '{value}' is not a number")


def _to_string(value: Any, path: str) -> str:
    """Heat's Property._get_string: text as it is, a boolean or an integer as Python's
    ``str`` writes it ("True", "5"); anything else (a float, a list) is refused."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int)):
        return str(value)
    raise _type_error(path, f"Value must be a string; got {json.dumps(value, default=str)}")


def _to_boolean(value: Any, path: str) -> bool:
    """Heat's Property._get_bool: a boolean, or the text "true" or "false" in any case;
    not "yes", "on" or 1 (parameters are more lenient: ``stoker.template.parameters``)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    shown = value.lower() if isinstance(value, str) else value
    raise _type_error(path, f'"{shown}" is not a valid boolean', hint="use true or false")


def _converted_to_map(value: Any, path: str) -> Any:
    """Heat's Property._get_map with ``allow_conversion`` (a template resource's json
    parameter): a string passes as it is and a list as its JSON text, for the nested
    stack's json parameter to read. A list that holds a value not known yet (an attribute
    of a resource not created) is not known as text either."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        if contains_unresolved(list(value)):
            return UNRESOLVED
        return json.dumps(list(value))
    raise _type_error(path, f'"{value}" is not a map')


def _to_map(schema: Schema, value: Any, path: str, context: Any) -> dict:
    """Heat's Property._get_map: a map, nothing else (no JSON text)."""
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise _type_error(path, f'"{value}" is not a map', hint="give a map: {key: value}")
    if isinstance(schema.schema, Mapping):
        return resolve_properties(schema.schema, value, path, context)
    return dict(value)


def _to_list(schema: Schema, value: Any, path: str, context: Any) -> list:
    """Heat's Property._get_list: a list; a string is split on its commas only with
    ``allow_conversion`` (a template resource's comma_delimited_list parameter)."""
    if value is None:
        return []
    if schema.allow_conversion and isinstance(value, str):
        value = value.split(",") if value else []
    if isinstance(value, (str, Mapping)) or not isinstance(value, (list, tuple)):
        raise _type_error(path, f'"{value!r}" is not a list', hint="give a list: [a, b]")
    item = schema.item_schema()
    if item is None:
        return list(value)
    return [convert(item, entry, f"{path}[{index}]", context) for index, entry in enumerate(value)]


def resolve_properties(schemata: Mapping[str, Schema], data: Mapping[str, Any], path: str, context: Any) -> dict:
    """Convert a nested map against its dict of schemas. As in Heat, a nested key with
    no value and no default is None (only top-level properties get the empty value of
    their type), so plugins can tell "not given" from "given as 0"."""
    unknown = [key for key in data if key not in schemata]
    if unknown:
        raise _type_error(f"{path}.{unknown[0]}" if path else unknown[0], _unknown_message(unknown[0], schemata))
    result = {}
    for key, sub in schemata.items():
        sub_path = f"{path}.{key}" if path else key
        result[key] = value_for(sub, data.get(key), key in data, sub_path, context, empty=False)
    return result


def value_for(schema: Schema, value: Any, present: bool, path: str, context: Any, empty: bool = True) -> Any:
    """The effective value of one property: the given one, else its default, else the
    empty value of its type (``empty``) or None."""
    if not present or value is None:
        if schema.default is not None:
            return convert(schema, schema.default, path, context)
        if schema.required:
            raise _type_error(path, "Property is required but has no value (set it in the template)")
        return schema.empty_value() if empty else None
    return convert(schema, value, path, context)


def _unknown_message(key: str, schemata: Mapping[str, Any]) -> str:
    from difflib import get_close_matches

    message = f"Unknown Property {key}"
    close = get_close_matches(key, list(schemata), n=1)
    if close:
        message += f" (did you mean '{close[0]}'?)"
    return message


Resolver = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


class Properties(Mapping[str, Any]):
    """A resource's property values, resolved and checked against its schema.

    ``self.properties['name']`` resolves functions, applies the default (or the empty
    value of the type) and converts; ``self.properties.data`` is the raw user data.
    Resolved values are cached: the engine builds a new Properties for every action.
    With translation rules applied, the properties they touch are read translated.
    """

    def __init__(
        self,
        schema: Mapping[str, Schema],
        data: Mapping[str, Any] | None,
        resolver: Resolver = _identity,
        path: str = "properties",
        context: Any = None,
        accept_any: bool = False,
    ):
        self.schema = schema
        self.data = dict(data or {})
        self.resolver = resolver
        self.path = path
        self.context = context
        # OS::Heat::None style: every property accepted, none converted.
        self.accept_any = accept_any
        self._cache: dict[str, Any] = {}
        # Set through use_translation (stoker.sdk.translation.apply_rules).
        self.translation: Translation | None = None

    def _path(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def use_translation(self, translation: Translation | None) -> None:
        """Read the properties ``translation`` touches through it from now on."""
        self.translation = translation
        # Values read before (a plugin's translation_rules reads the old property) are stale.
        self._cache.clear()

    def _raw(self, key: str) -> tuple[bool, Any]:
        """(present, resolved value) of a top-level property, translated when a rule touches it."""
        if self.translation is not None and self.translation.affects(key):
            return self.translation.lookup(key)
        if key not in self.data:
            return False, None
        return True, self.resolver(self.data[key])

    def __getitem__(self, key: str) -> Any:
        if key in self._cache:
            return self._cache[key]
        if key not in self.schema:
            if self.accept_any:
                value = self._raw(key)[1]
                self._cache[key] = value
                return value
            raise KeyError(f"Invalid Property {key}")
        present, raw = self._raw(key)
        value = value_for(self.schema[key], raw, present, self._path(key), self.context)
        self._cache[key] = value
        return value

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        if self.accept_any:
            return iter(self.data)
        return iter(self.schema)

    def __len__(self) -> int:
        return len(self.data) if self.accept_any else len(self.schema)

    def __contains__(self, key: object) -> bool:
        return key in self.schema or (self.accept_any and key in self.data)

    def errors(self) -> list[StokerError]:
        """Every problem in these values (unknown keys, missing, wrong type, constraints,
        functions that cannot be evaluated, translation conflicts), each once."""
        problems: list[StokerError] = []
        if not self.accept_any:
            for key in self.data:
                if key not in self.schema:
                    problems.append(PropertyError(_unknown_message(key, self.schema), path=self._path(key)))
        for key in self.schema:
            try:
                self[key]
            except StokerError as error:
                # A failed translation raises the same error for every property it touches.
                if not any(error is seen for seen in problems):
                    problems.append(error)
        return problems

    def validate(self) -> None:
        """Raise the first problem found; ``errors()`` lists them all."""
        problems = self.errors()
        if problems:
            raise problems[0]

    def resolved(self) -> dict[str, Any]:
        """The values as a plain dict (what the store records), so that reading them back
        gives the same Properties: a property neither given nor defaulted is left out (its
        empty value, '' for a string, might break its own constraints if stored), and so
        is one a translation rule retires (deleted, or moved into another)."""
        translation = self.translation
        return {
            key: self[key]
            for key in self
            if (translation is None or not translation.retires(key)) and self._given_or_defaulted(key)
        }

    def _given_or_defaulted(self, key: str) -> bool:
        if key in self.data and self.data[key] is not None:
            return True
        schema = self.schema.get(key)
        if schema is None or schema.default is not None:
            return True
        if self.translation is not None and self.translation.affects(key):
            found, value = self.translation.lookup(key)
            return found and value is not None
        return False
