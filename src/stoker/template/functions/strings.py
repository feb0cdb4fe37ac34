"""String functions: str_replace and list_join."""

from __future__ import annotations

import json
import re
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, ResolutionContext, resolve


def _as_text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, sort_keys=True)


class StrReplace(Function):
    """``{str_replace: {template: "...", params: {key: value}}}``.

    Keys are replaced in one pass, longest first, so a key that is part of another key
    never breaks it; a replaced value is never scanned again.
    """

    __slots__ = ()
    description = "A function for performing string substitutions."

    def check(self) -> None:
        args = self.args
        if not isinstance(args, dict) or set(args) != {"template", "params"}:
            raise self.error(
                f"Arguments to {self.fn_name} must be a map with the keys template and params",
                hint='{str_replace: {template: "Hello NAME", params: {NAME: world}}}',
            )
        if not isinstance(args["params"], (dict, Function)):
            raise self.error(f'"params" given to {self.fn_name} must be a map')
        if not isinstance(args["template"], (str, Function)):
            raise self.error(f'"template" given to {self.fn_name} must be a string')

    def result(self, context: ResolutionContext) -> Any:
        template = resolve(self.args["template"], context)
        params = resolve(self.args["params"], context)
        if template is UNRESOLVED or params is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(template, str):
            raise self.error(f'"template" given to {self.fn_name} must be a string, got {type(template).__name__}')
        if not isinstance(params, dict):
            raise self.error(f'"params" given to {self.fn_name} must be a map')
        if any(v is UNRESOLVED for v in params.values()):
            return UNRESOLVED
        values = {str(key): _as_text(value, self.fn_name) for key, value in params.items() if str(key)}
        if not values:
            return template
        pattern = re.compile("|".join(re.escape(key) for key in sorted(values, key=len, reverse=True)))
        return pattern.sub(lambda match: values[match.group(0)], template)


class ListJoin(Function):
    """``{list_join: [delimiter, list, list...]}``.

    From 2015-10-15 on, items that are not strings are JSON-encoded; earlier versions
    accept strings only (``json_items`` is set by the version table).
    """

    __slots__ = ()
    description = "A function for joining one or more lists of strings."
    json_items = True

    def check(self) -> None:
        args = self.args
        if not isinstance(args, list) or len(args) < 2:
            raise self.error("Arguments to list_join must be a list [delimiter, list, ...]")
        if not isinstance(args[0], (str, Function)):
            raise self.error("The delimiter given to list_join must be a string")

    def result(self, context: ResolutionContext) -> Any:
        delimiter, *lists = resolve(self.args, context)
        if delimiter is UNRESOLVED or any(item is UNRESOLVED for item in lists):
            return UNRESOLVED
        items: list[str] = []
        for index, entries in enumerate(lists, start=1):
            if entries is None:
                continue
            if isinstance(entries, str):
                raise self.error(f"Argument {index} of list_join must be a list, got a string")
            if not isinstance(entries, list):
                raise self.error(f"Argument {index} of list_join must be a list")
            for entry in entries:
                if entry is UNRESOLVED:
                    return UNRESOLVED
                if entry is None:
                    items.append("")
                elif isinstance(entry, str):
                    items.append(entry)
                elif self.json_items and isinstance(entry, (dict, list)):
                    items.append(json.dumps(entry))
                elif self.json_items:
                    raise self.error(f"Items to join must be string, map or list, not {type(entry).__name__}")
                else:
                    raise self.error("Items to join must be strings in this template version")
        return delimiter.join(items)


class ListJoinStrings(ListJoin):
    """list_join before 2015-10-15: string items only."""

    __slots__ = ()
    json_items = False
