"""Map functions: map_merge and map_replace.

Each follows Heat's ``heat.engine.hot.functions`` for its version: what it accepts, what
it yields, and the wording of its errors.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, ListArgumentsFunction, ResolutionContext


class MapMerge(ListArgumentsFunction):
    """``{map_merge: [map, map, ...]}`` (from 2016-04-08): one map with the keys of all;
    a later map's value wins. The merge is shallow, and a None argument adds nothing."""

    __slots__ = ()
    description = "A function for merging maps."

    def _usage(self) -> str:
        return f'Incorrect arguments to "{self.fn_name}" should be: "{self.fn_name}" : [ {{ "key1": "val1" }}, {{ "key2": "val2" }} ]'

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_list(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        merged: dict[Any, Any] = {}
        for entry in args:
            if entry is None:
                continue
            if not isinstance(entry, dict):
                raise self.error(
                    f"Incorrect arguments: Items to merge must be maps. {repr(entry)[:200]} "
                    f"is type {type(entry).__name__} instead of a dict"
                )
            merged.update(entry)
        return merged


class MapReplace(Function):
    """``{map_replace: [map, {keys: {old: new}, values: {old: new}}]}`` (from 2016-10-14):
    the map with keys and values renamed. A key renamed onto another key of the map is an
    error; values that are lists or maps are never replaced. As in Heat, the arguments
    are judged only when the call is resolved: in an output, a mistake is that output's
    error, not the stack's."""

    __slots__ = ()
    description = "A function for performing substitutions on maps."

    def _example(self) -> str:
        return f'"{self.fn_name}" : [ {{ "key1": "val1" }}, {{"keys": {{"key1": "key2"}}, "values": {{"val1": "val2"}}}}]'

    def _usage(self) -> str:
        return f'Incorrect arguments to "{self.fn_name}" should be: {self._example()}'

    def _map(self, value: Any) -> dict[Any, Any]:
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        raise self.error(
            f'Incorrect arguments: to "{self.fn_name}", arguments must be a list of maps. Example:  {self._example()}'
        )

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(args, list) or len(args) != 2:
            raise self.error(self._usage())
        source = self._map(args[0])
        replacements = self._map(args[1])
        if set(replacements) - {"keys", "values"}:
            raise self.error(self._usage())
        new_keys = self._map(replacements.get("keys", {}))
        new_values = self._map(replacements.get("values", {}))
        result: dict[Any, Any] = {}
        for key, value in source.items():
            new_key = new_keys.get(key)
            if new_key is None:
                new_key = key
            elif new_key in source and new_key != key:
                raise self.error(f"key replacement {new_key} collides with a key in the input map")
            elif new_key in result:
                raise self.error(f"key replacement {new_key} collides with a key in the output map")
            try:
                result[new_key] = new_values.get(value, value)
            except TypeError:  # a list or map value cannot be looked up: kept as it is
                result[new_key] = value
        return result
