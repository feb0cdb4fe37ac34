"""String functions: str_replace (and its strict forms), list_join, str_split, digest.

Each follows Heat's ``heat.engine.hot.functions`` for its version: what it accepts, what
it yields, and the wording of its errors.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template import budget
from stoker.template.errors import format_path
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
    strict = False  # every param must occur in the template (str_replace_strict)
    allow_empty = True  # None and empty values are accepted (not for str_replace_vstrict)

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
            self._check_not_empty(key, "")
            return ""
        if isinstance(value, str):
            text = value
        elif isinstance(value, (bool, int, float)):
            text = str(value)  # Heat's text_type: True -> "True"
        elif self.json_values and isinstance(value, (dict, list)):
            self._check_not_empty(key, value)
            return json.dumps(value, sort_keys=True)
        else:
            allowed = "strings, numbers, lists or maps" if self.json_values else "strings or numbers"
            raise self.error(f'Params given to {self.fn_name} must be {allowed}; "{key}" is a {type(value).__name__}')
        self._check_not_empty(key, text)
        return text

    def _check_not_empty(self, key: str, value: Any) -> None:
        if not self.allow_empty and not value:
            raise self.error(
                f"{self.fn_name} has an undefined or empty value for param {key}, must be a defined non-empty value"
            )

    def result(self, context: ResolutionContext) -> Any:
        return self._substitute(self.args["template"], self.args["params"], context)

    def _substitute(self, template: Any, params: Any, context: ResolutionContext) -> Any:
        template = resolve(template, context)
        params = resolve(params, context)
        if template is UNRESOLVED or params is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(template, str):
            raise self.error(f'"template" given to {self.fn_name} must be a string, got {type(template).__name__}')
        if not isinstance(params, dict):
            raise self.error(f'"params" given to {self.fn_name} must be a map')
        if contains_unresolved(params):
            return UNRESOLVED
        # Values are checked longest key first, as Heat substitutes them.
        keys = sorted(sorted(str(key) for key in params), key=len, reverse=True)
        texts = {str(key): value for key, value in params.items()}
        values = {key: self._text(key, texts[key]) for key in keys if key}
        found: set[str] = set()
        try:
            text = replace(template, values, found, budget.max_value_bytes())
        except budget.OverBudgetError as error:
            raise budget.too_large(f'"{self.fn_name}"', format_path(self.path), error.size)
        if self.strict:
            missing = [key for key in keys if key not in found]
            if missing:
                raise self.error(
                    "The following params were not found in the template: " + ",".join(missing),
                    hint=f"{self.fn_name} refuses params that the template does not use; use str_replace to allow them",
                )
        return text


def replace(template: str, values: dict[str, str], found: set[str] | None = None, limit: int | None = None) -> str:
    """Heat's str_replace: split on the longest key, then the pieces on the next keys.

    Written with an explicit stack rather than recursion, so any number of keys is fine.
    ``found`` collects the keys that split some piece (str_replace_strict's "used").
    With ``limit`` (characters), raises ``OverBudgetError`` once the pieces add up to
    more, before they are joined: the pieces are slices of the template and references to
    the values, so the text itself is never made.
    """
    keys = sorted(sorted(values), key=len, reverse=True)
    pieces: list[str] = []
    # (text, index of the first key still to try) or a finished piece (str)
    todo: list[tuple[str, int] | str] = [(template, 0)]
    length = 0
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            pieces.append(item)
            length += len(item)
            if limit is not None and length > limit:
                raise budget.OverBudgetError(_final_length(length, todo))
            continue
        text, first = item
        for index in range(first, len(keys)):
            key = keys[index]
            if key in text:
                if found is not None:
                    found.add(key)
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
            length += len(text)
            if limit is not None and length > limit:
                raise budget.OverBudgetError(_final_length(length, todo))
    return "".join(pieces)


def _final_length(length: int, todo: list[tuple[str, int] | str]) -> int:
    """At least the length of the text ``replace`` was building (the pieces still to
    come counted as they are, before their own replacements)."""
    return length + sum(len(item if isinstance(item, str) else item[0]) for item in todo)


class ListJoin(Function):
    """``{list_join: [delimiter, list, list...]}`` (from 2015-10-15).

    Items that are maps or lists are JSON-encoded, None is "", anything else (a number)
    is an error; a list that is None or empty adds nothing.
    """

    __slots__ = ()
    description = "A function for joining one or more lists of strings."
    json_items = True
    # whether errors may point to what later heat_template_versions accept (list_join;
    # CFN's Fn::Join has no later form)
    hints_later_versions = True

    def check(self) -> None:
        args = self.args
        if not isinstance(args, list) or len(args) < 2:
            raise self.error(
                f"Arguments to {self.fn_name} must be a list [delimiter, list, ...]",
                hint=f'{{{self.fn_name}: [", ", [a, b]]}}',
            )
        if not isinstance(args[0], (str, Function)):
            raise self.error(f"The delimiter given to {self.fn_name} must be a string")

    def result(self, context: ResolutionContext) -> Any:
        resolved = resolve(self.args, context)
        if contains_unresolved(resolved):
            return UNRESOLVED
        delimiter, *lists = resolved
        if not isinstance(delimiter, str):
            raise self.error(f"The delimiter given to {self.fn_name} must be a string, got {type(delimiter).__name__}")
        items: list[str] = []
        # The joined length, added up item by item: the items may be many references to
        # one long string (YAML aliases), so it is checked before anything is joined.
        limit = budget.max_value_bytes()
        length = 0
        for index, entries in enumerate(lists, start=1):
            if not entries:  # None, [] (and, as in Heat, "" and {})
                continue
            if not isinstance(entries, list):
                raise self.error(f"Argument {index} of {self.fn_name} must be a list, got a {type(entries).__name__}")
            for entry in entries:
                if items:
                    length += len(delimiter)
                if entry is None:
                    items.append("")
                elif isinstance(entry, str):
                    items.append(entry)
                    length += len(entry)
                elif self.json_items and isinstance(entry, (dict, list)):
                    if budget.size_of(entry, limit - length) > limit - length:
                        raise budget.too_large(f'"{self.fn_name}"', format_path(self.path))
                    items.append(json.dumps(entry, sort_keys=True))
                    length += len(items[-1])
                elif self.json_items:
                    raise self.error(f"Items to join must be string, map or list, not {type(entry).__name__}")
                else:
                    raise self.error(
                        f"Items to join must be strings in this template version, not {type(entry).__name__}",
                        hint="heat_template_version 2015-10-15 or later joins maps and lists as JSON" if self.hints_later_versions else None,
                    )
                if length > limit:
                    raise budget.too_large(f'"{self.fn_name}"', format_path(self.path))
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
                f"Arguments to {self.fn_name} must be [delimiter, list] in this template version",
                hint="heat_template_version 2015-10-15 or later joins several lists" if self.hints_later_versions else None,
            )


class StrReplaceStrings(StrReplace):
    """str_replace before 2015-10-15: values must be strings or numbers."""

    __slots__ = ()
    json_values = False


class StrReplaceStrict(StrReplace):
    """str_replace_strict (from 2017-02-24): str_replace, but every param must occur in
    the template."""

    __slots__ = ()
    description = "A function for performing string substitutions, refusing params the template lacks."
    strict = True


class StrReplaceVeryStrict(StrReplaceStrict):
    """str_replace_vstrict (from 2017-09-01): str_replace_strict, and no param value may
    be None or empty."""

    __slots__ = ()
    description = "A function for performing string substitutions, refusing missing or empty params."
    allow_empty = False


class StrSplit(Function):
    """``{str_split: [delimiter, string]}`` or ``{str_split: [delimiter, string, index]}``
    (from 2015-10-15): the list of pieces, or the piece at ``index``.

    As in Heat, a string that is None gives None, the index may be a numeric string and
    may be negative (from the end).
    """

    __slots__ = ()
    description = "A function for splitting delimited strings into a list."

    def _usage(self) -> str:
        return f'Incorrect arguments to "{self.fn_name}" should be: "{self.fn_name}" : [ ",", "apples,pears", <index>]'

    def check(self) -> None:
        args = self.args
        if isinstance(args, Function):
            return
        if not isinstance(args, list) or len(args) < 2:
            raise self.error(self._usage(), hint='{str_split: [",", "a,b,c"]} or {str_split: [",", "a,b,c", 0]}')

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(args, list) or len(args) < 2:
            raise self.error(self._usage())
        delimiter, text, *rest = args
        if text is None:
            return None
        if not isinstance(delimiter, str) or not delimiter:
            raise self.error(f"The delimiter given to {self.fn_name} must be a non-empty string, got {delimiter!r}")
        if not isinstance(text, str):
            raise self.error(f"The value given to {self.fn_name} must be a string, got a {type(text).__name__}")
        pieces = text.split(delimiter)
        if not rest:
            return pieces
        try:
            index = int(rest[0])
        except (TypeError, ValueError):
            raise self.error(
                f'Incorrect index to "{self.fn_name}" should be: "{self.fn_name}" : [ ",", "apples,pears", <index>]'
            )
        try:
            return pieces[index]
        except IndexError:
            raise self.error(f'Incorrect index to "{self.fn_name}" should be between 0 and {len(pieces) - 1}')


def digest_algorithms() -> tuple[str, ...]:
    """The algorithms digest accepts: every one hashlib names here, as Heat allows (the
    SHAKE family among them, whose digest then fails as Heat's does: see ``Digest``)."""
    return tuple(sorted(hashlib.algorithms_available))


# hashlib's extendable-output functions (SHAKE): hexdigest() needs a length.
_EXTENDABLE = tuple({type(hashlib.new(name)) for name in hashlib.algorithms_available if name.startswith("shake")})


class Digest(Function):
    """``{digest: [algorithm, value]}`` (from 2015-04-30): the hex digest of ``value``
    (encoded as Latin-1, as Heat does) with ``algorithm`` (md5, sha1, sha224, sha256,
    sha384, sha512 and whatever else hashlib offers). As in Heat, the arguments are
    judged only when the call is resolved: in an output, a mistake (an unknown
    algorithm, a value outside Latin-1) is that output's error, not the stack's."""

    __slots__ = ()
    description = "A function for performing digest operations."

    def _algorithm(self, name: str) -> str:
        algorithms = digest_algorithms()
        if name.lower() not in algorithms:
            raise self.error(f"Algorithm must be one of {', '.join(algorithms)}", hint="e.g. sha256")
        return name.lower()

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise self.error(f'Argument to function "{self.fn_name}" must be a list of strings')
        if len(args) != 2:
            raise self.error(f'Function "{self.fn_name}" usage: ["<algorithm>", "<value>"]')
        algorithm, value = args
        digest = hashlib.new(self._algorithm(algorithm))
        try:
            digest.update(value.encode("latin-1"))
        except UnicodeEncodeError as error:
            raise self.error(f"The value given to {self.fn_name} must be Latin-1 text: {error.reason} at {error.start}")
        if isinstance(digest, _EXTENDABLE):
            # Heat's hexdigest() without a length fails for these: the call's error.
            raise self.error(
                f"{self.fn_name} with {algorithm} gives no digest: an extendable-output function needs a length, which {self.fn_name} does not take",
                hint="use sha256, sha3_256 or blake2b",
            )
        return digest.hexdigest()
