"""String functions: str_replace and list_join."""

from __future__ import annotations

import json
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, ResolutionContext, contains_unresolved, resolve


class StrReplace(Function):
    """``{str_replace: {template: "...", params: {key: value}}}``.

    As in Heat, the longest key is replaced first (keys of equal length in alphabetical
    order): the template is split on it and the pieces are searched for the shorter keys
    only, so a key that is part of another key never breaks it and a replaced value is
    never scanned again. Values: None gives "", numbers and booleans their text; from
    2015-10-15 on a map or list is JSON-encoded (``json_values``, set by the version
    table), earlier versions refuse it.
    """

    __slots__ = ()
    description = "A function for performing string substitutions."
    json_values = True

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

    def _text(self, key: str, value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, (bool, int, float)):
            return str(value)  # Heat's text_type: True -> "True"
        if self.json_values and isinstance(value, (dict, list)):
            return json.dumps(value, sort_keys=True)
        allowed = "strings, numbers, lists or maps" if self.json_values else "strings or numbers"
        raise self.error(f'Params given to {self.fn_name} must be {allowed}; "{key}" is a {type(value).__name__}')

    def result(self, context: ResolutionContext) -> Any:
        template = resolve(self.args["template"], context)
        params = resolve(self.args["params"], context)
        if template is UNRESOLVED or params is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(template, str):
            raise self.error(f'"template" given to {self.fn_name} must be a string, got {type(template).__name__}')
        if not isinstance(params, dict):
            raise self.error(f'"params" given to {self.fn_name} must be a map')
        if contains_unresolved(params):
            return UNRESOLVED
        values = {str(key): self._text(str(key), value) for key, value in params.items() if str(key)}
        return replace(template, values)


def replace(template: str, values: dict[str, str]) -> str:
    """Heat's str_replace: split on the longest key, then the pieces on the next keys.

    Written with an explicit stack rather than recursion, so any number of keys is fine.
    """
    keys = sorted(sorted(values), key=len, reverse=True)
    pieces: list[str] = []
    # (text, index of the first key still to try) or a finished piece (str)
    todo: list[tuple[str, int] | str] = [(template, 0)]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            pieces.append(item)
            continue
        text, first = item
        for index in range(first, len(keys)):
            key = keys[index]
            if key in text:
                parts = text.split(key)
                value = values[key]
                # pushed in reverse: part 0, value, part 1, value, ... come off in order
                for position in range(len(parts) - 1, -1, -1):
                    todo.append((parts[position], index + 1))
                    if position:
                        todo.append(value)
                break
        else:
            pieces.append(text)
    return "".join(pieces)


class ListJoin(Function):
    """``{list_join: [delimiter, list, list...]}`` (from 2015-10-15).

    Items that are maps or lists are JSON-encoded, None is "", anything else (a number)
    is an error; a list that is None or empty adds nothing.
    """

    __slots__ = ()
    description = "A function for joining one or more lists of strings."
    json_items = True

    def check(self) -> None:
        args = self.args
        if not isinstance(args, list) or len(args) < 2:
            raise self.error(
                "Arguments to list_join must be a list [delimiter, list, ...]",
                hint='{list_join: [", ", [a, b]]}',
            )
        if not isinstance(args[0], (str, Function)):
            raise self.error("The delimiter given to list_join must be a string")

    def result(self, context: ResolutionContext) -> Any:
        resolved = resolve(self.args, context)
        if contains_unresolved(resolved):
            return UNRESOLVED
        delimiter, *lists = resolved
        if not isinstance(delimiter, str):
            raise self.error(f"The delimiter given to list_join must be a string, got {type(delimiter).__name__}")
        items: list[str] = []
        for index, entries in enumerate(lists, start=1):
            if not entries:  # None, [] (and, as in Heat, "" and {})
                continue
            if not isinstance(entries, list):
                raise self.error(f"Argument {index} of list_join must be a list, got a {type(entries).__name__}")
            for entry in entries:
                if entry is None:
                    items.append("")
                elif isinstance(entry, str):
                    items.append(entry)
                elif self.json_items and isinstance(entry, (dict, list)):
                    items.append(json.dumps(entry, sort_keys=True))
                elif self.json_items:
                    raise self.error(f"Items to join must be string, map or list, not {type(entry).__name__}")
                else:
                    raise self.error(
                        f"Items to join must be strings in this template version, not {type(entry).__name__}",
                        hint="heat_template_version 2015-10-15 or later joins maps and lists as JSON",
                    )
        return delimiter.join(items)


class ListJoinStrings(ListJoin):
    """list_join before 2015-10-15: ``[delimiter, list]``, one list of strings."""

    __slots__ = ()
    description = "A function for joining a list of strings."
    json_items = False

    def check(self) -> None:
        super().check()
        if len(self.args) != 2:
            raise self.error(
                "Arguments to list_join must be [delimiter, list] in this template version",
                hint="heat_template_version 2015-10-15 or later joins several lists",
            )


class StrReplaceStrings(StrReplace):
    """str_replace before 2015-10-15: values must be strings or numbers."""

    __slots__ = ()
    json_values = False
