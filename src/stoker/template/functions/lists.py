"""List functions: list_concat, list_concat_unique, filter, contains and repeat.

Each follows Heat's ``heat.engine.hot.functions`` for its version: what it accepts, what
it yields, and the wording of its errors. A result that depends on a value not known yet
is UNRESOLVED as a whole.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template import budget
from stoker.template.errors import format_path
from stoker.template.functions.base import (
    Function,
    ListArgumentsFunction,
    ResolutionContext,
    resolve,
)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


class ListConcat(ListArgumentsFunction):
    """``{list_concat: [list, list, ...]}`` (from 2017-09-01): the lists one after the
    other; an argument that is None adds nothing."""

    __slots__ = ()
    description = "A function for extending lists."
    unique = False

    def _usage(self) -> str:
        return (
            f'Incorrect arguments to "{self.fn_name}" should be: '
            f'"{self.fn_name}" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
        )

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_list(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        items: list[Any] = []
        for entry in args:
            if entry is None:
                continue
            if not isinstance(entry, list):
                raise self.error(
                    f"Incorrect arguments: Items to concat must be lists. {_json(args)} "
                    f"contains an item that is not a list: {_json(entry)}"
                )
            items.extend(entry)
        if not self.unique:
            return items
        # Equality, not hashing: items may be maps and lists. First occurrence wins.
        unique: list[Any] = []
        for item in items:
            if item not in unique:
                unique.append(item)
        return unique


class ListConcatUnique(ListConcat):
    """``{list_concat_unique: [list, list, ...]}`` (from 2017-09-01): list_concat
    keeping only the first of equal items."""

    __slots__ = ()
    description = "A function for extending lists with unique items."
    unique = True


class Filter(Function):
    """``{filter: [values, list]}`` (from 2017-02-24): ``list`` without the items that
    are in ``values``. An empty or None list is returned as it is, and so is the list
    when ``values`` is empty or None."""

    __slots__ = ()
    description = "A function for filtering out values from lists."

    def check(self) -> None:
        if isinstance(self.args, Function):
            return
        if not isinstance(self.args, list):
            raise self.error(f'Argument to "{self.fn_name}" must be a list')
        if len(self.args) != 2:
            raise self.error(
                f'"{self.fn_name}" expected 2 arguments of the form [values, sequence] '
                f"but got {len(self.args)} arguments instead"
            )

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(args, list) or len(args) != 2:
            raise self.error(f'"{self.fn_name}" expected 2 arguments of the form [values, sequence]')
        values, sequence = args
        if not sequence:
            return sequence
        if not isinstance(sequence, list):
            raise self.error(f'"{self.fn_name}" only works with lists')
        if not values:
            return sequence
        if not isinstance(values, list):
            raise self.error(f'"{self.fn_name}" filters a list of values')
        return [item for item in sequence if item not in values]


class Contains(Function):
    """``{contains: [value, sequence]}`` (from 2017-09-01, also a condition function):
    whether ``value`` is an item of the list (or, as in Heat, a substring of the string)."""

    __slots__ = ()
    description = "A function for checking whether specific value is in sequence."

    def check(self) -> None:
        if not self.args or not isinstance(self.args, list):
            raise self.error(
                f'Incorrect arguments to "{self.fn_name}" should be: "{self.fn_name}" : [ "value1", [ "value1", "value2"]]'
            )
        if len(self.args) != 2:
            raise self.error(f'Arguments to "{self.fn_name}" must be of the form: [value1, [value1, value2]]')

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        value, sequence = args
        if not isinstance(sequence, (list, str)):
            raise self.error(f'Second argument to "{self.fn_name}" should be a sequence.')
        return value in sequence


class Repeat(Function):
    """``{repeat: {template: T, for_each: {VAR: list, ...}}}`` (from 2015-04-30): a copy
    of T for each value (for each combination, with several variables), with every
    occurrence of each VAR in T's strings (keys too) replaced by the value.

    As in Heat, T is resolved once before the copies are made, and the variables are
    replaced one after the other. A ``for_each`` value that is None counts as empty. Every
    placeholder and value must be a string once T holds any string (Heat's
    ``str.replace``); a template with no string takes any values. As in Heat, the values
    of ``for_each`` are judged only when the call is resolved (in an output, a mistake
    is that output's error).
    """

    __slots__ = ()
    description = "A function for iterating over a list of items."
    maps_allowed = False  # for_each values may be maps (their keys) from 2016-10-14
    permutations_allowed = False  # the "permutations" flag arrives in 2017-09-01

    def check(self) -> None:
        args = self.args
        if not isinstance(args, dict):
            raise self.error(f'Arguments to "{self.fn_name}" must be a map')
        if "for_each" not in args or "template" not in args:
            raise self.error(
                f'"{self.fn_name}" syntax should be {{for_each: {{"%var%": ["a", "b", "c"]}}, template: "This is %var%"}}',
                hint='repeat: {template: "This is %var%", for_each: {"%var%": [a, b, c]}}',
            )
        for_each = args["for_each"]
        if not isinstance(for_each, (dict, Function)):
            raise self.error(f'The "for_each" argument to "{self.fn_name}" must contain a map')
        if self.permutations_allowed and not isinstance(args.get("permutations", True), bool):
            raise self.error(f'"permutations" should be boolean type for {self.fn_name} function.')

    @property
    def permutations(self) -> bool:
        if not self.permutations_allowed:
            return True
        flag = self.args.get("permutations", True)
        return flag if isinstance(flag, bool) else True

    def _check_values(self, value: Any, nested: bool) -> None:
        if value is None or isinstance(value, (list, Function)):
            return
        if self.maps_allowed and nested and isinstance(value, dict):
            return
        kinds = "lists or maps" if self.maps_allowed and nested else "lists"
        raise self.error(f'The values of the "for_each" argument to "{self.fn_name}" must be {kinds}')

    def result(self, context: ResolutionContext) -> Any:
        for_each = resolve(self.args["for_each"], context)
        if for_each is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(for_each, dict):
            raise self.error(f'The "for_each" argument to "{self.fn_name}" must contain a map')
        if not for_each:
            raise self.error(f'The "for_each" argument to "{self.fn_name}" must name at least one variable')
        nested = self.permutations
        keys = list(for_each)
        values: list[list[Any]] = []
        lengths = set()
        for value in for_each.values():
            if value is UNRESOLVED:
                return UNRESOLVED
            if value is None:
                values.append([])
                continue
            self._check_values(value, nested)
            values.append(list(value))  # a map gives its keys
            lengths.add(len(value))
        if not nested and len(lengths) > 1:
            raise self.error(f"For {self.fn_name}, the length of for_each values should be equal if no nested loop.")
        # The copies are counted before any is made (each takes at least a byte of the
        # result: 5 lists of 100 make 10**10), and the result's size is added up as they
        # are made, each replacement checked before it is done.
        copies = math.prod(len(value) for value in values) if nested else min((len(value) for value in values), default=0)
        limit = budget.max_value_bytes()
        if copies > limit:
            raise self._over_budget(copies)
        template = resolve(self.args["template"], context)
        combinations = itertools.product(*values) if nested else zip(*values, strict=False)
        spent = [2]  # the result's size so far, in bytes
        result = []
        for combination in combinations:
            result.append(self._replace(template, keys, combination, spent, limit))
            spent[0] += 1
        return result

    def _over_budget(self, size: int | None = None) -> Exception:
        return budget.too_large(f'"{self.fn_name}"', format_path(self.path), size)

    def _replace(self, template: Any, keys: list[str], values: tuple[Any, ...], spent: list[int], limit: int) -> Any:
        if isinstance(template, str):
            for key, value in zip(keys, values, strict=True):
                # Heat calls template.replace(key, value) for every variable, so a
                # placeholder or a value that is not a string fails on any string of the
                # template, whether it appears there or not (Python's TypeError).
                if not isinstance(key, str):
                    raise self.error(
                        f'The placeholder {_json(key)} in the "for_each" argument to "{self.fn_name}" must be a string: '
                        f"replace() argument 1 must be str, not {type(key).__name__}",
                        hint=f'quote it: "{key}"',
                    )
                if not isinstance(value, str):
                    raise self.error(
                        f'The values of the "for_each" argument to "{self.fn_name}" must be strings '
                        f"to replace {key!r} in a string; got {_json(value)}: "
                        f"replace() argument 2 must be str, not {type(value).__name__}",
                        hint="quote the values, or build the list with str_split or yaql",
                    )
                if key not in template:
                    continue
                grown = len(template) + template.count(key) * (len(value) - len(key))
                if spent[0] + grown > limit:
                    raise self._over_budget(spent[0] + grown)
                template = template.replace(key, value)
            spent[0] += len(template) + 2
            if spent[0] > limit:
                raise self._over_budget(spent[0])
            return template
        if isinstance(template, list):
            spent[0] += 2 + len(template)
            return [self._replace(item, keys, values, spent, limit) for item in template]
        if isinstance(template, Mapping):
            spent[0] += 2 + 2 * len(template)
            return {
                self._replace(key, keys, values, spent, limit): self._replace(value, keys, values, spent, limit)
                for key, value in template.items()
            }
        spent[0] += budget.size_of(template, limit)
        if spent[0] > limit:
            raise self._over_budget(spent[0])
        return template


class RepeatWithMaps(Repeat):
    """repeat from 2016-10-14: a ``for_each`` value may also be a map (its keys)."""

    __slots__ = ()
    description = "A function for iterating over a list of items or a dict of keys."
    maps_allowed = True


class RepeatWithPermutations(RepeatWithMaps):
    """repeat from 2017-09-01: ``permutations: false`` pairs the lists item by item (they
    must then be lists of one length) instead of taking every combination."""

    __slots__ = ()
    description = "A function for iterating over a list of items or a dict of keys."
    permutations_allowed = True
