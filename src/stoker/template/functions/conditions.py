"""Condition functions (equals, not, and, or) and ``if``.

From 2016-10-14 a template may declare ``conditions``; their definitions, a resource's or
an output's ``condition`` and the first argument of ``if`` are condition expressions,
parsed with the version's condition table: get_param, equals, not, and, or, and from
2017-09-01 yaql and contains. A condition argument is a boolean, the name of a condition,
or a condition function; None counts as true, as in Heat.

Named conditions are looked up through the context's optional ``condition(name)``
(``stoker.template.conditions.Conditions`` implements it, with cycle detection).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template.errors import TemplateError, format_path
from stoker.template.functions.base import (
    OMITTED,
    Function,
    Parser,
    ResolutionContext,
    contains_unresolved,
    resolve,
    resolve_nullable,
)


def condition_value(value: Any, context: ResolutionContext, function: Function) -> Any:
    """True or False for a resolved condition argument (UNRESOLVED if not known yet)."""
    if value is UNRESOLVED or value is None or isinstance(value, bool):
        return True if value is None else value
    if isinstance(value, str):
        lookup = getattr(context, "condition", None)
        if lookup is None:
            raise function.error(
                f'The condition "{value}" cannot be evaluated here',
                hint="conditions are evaluated with the stack's parameters (Template.with_conditions)",
            )
        try:
            return lookup(value)
        except TemplateError as error:
            if error.path is None:  # the context does not know where the name was used
                error.path = format_path(function.path)
            raise
    raise function.error(f'Invalid condition "{value}"', hint="give a condition name, true or false, or a condition function")


def literal_names(function: Function) -> Iterator[str]:
    """The condition names ``function`` gives literally (for checks at parse time)."""
    if isinstance(function, If):
        if isinstance(function.args[0], str):
            yield function.args[0]
    elif isinstance(function, Not):
        if isinstance(function.operand, str):
            yield function.operand
    elif isinstance(function, (And, Or)):
        yield from (arg for arg in function.args if isinstance(arg, str))


class Equals(Function):
    """``{equals: [value_1, value_2]}``: whether the two values are equal."""

    __slots__ = ()
    description = "A function for comparing whether two values are equal."

    def check(self) -> None:
        if not self.args or not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(f'Arguments to "{self.fn_name}" must be of the form: [value_1, value_2]')

    def result(self, context: ResolutionContext) -> Any:
        first, second = (resolve(arg, context) for arg in self.args)
        if contains_unresolved([first, second]):
            return UNRESOLVED
        return first == second


class Not(Function):
    """``{not: condition}``: true when the condition is false."""

    __slots__ = ()
    description = "A function that acts as a NOT operator on a condition."

    def check(self) -> None:
        if self.args is None:
            raise self.error(f'Argument to "{self.fn_name}" must be a condition')

    @property
    def operand(self) -> Any:
        """The condition this call negates (CFN's Fn::Not gives it in a list)."""
        return self.args

    def result(self, context: ResolutionContext) -> Any:
        value = condition_value(resolve(self.operand, context), context, self)
        return UNRESOLVED if value is UNRESOLVED else not value


class _Connective(Function):
    __slots__ = ()
    # the value that decides at once (False for and, True for or)
    decisive: bool = False

    def check(self) -> None:
        if not isinstance(self.args, list):
            raise self.error(f'Arguments to "{self.fn_name}" must be a list of conditions')
        if len(self.args) < 2:
            raise self.error(f'The minimum number of condition arguments to "{self.fn_name}" is 2.')

    def result(self, context: ResolutionContext) -> Any:
        unresolved = False
        # As Heat: arguments resolved first, named conditions looked up lazily.
        for argument in resolve(self.args, context):
            value = condition_value(argument, context, self)
            if value is UNRESOLVED:
                unresolved = True
            elif value is self.decisive:
                return self.decisive
        return UNRESOLVED if unresolved else not self.decisive


class And(_Connective):
    """``{and: [condition, condition, ...]}``: true when every condition is true (at
    least two)."""

    __slots__ = ()
    description = "A function that acts as an AND operator on conditions."
    decisive = False


class Or(_Connective):
    """``{or: [condition, condition, ...]}``: true when any condition is true (at least
    two)."""

    __slots__ = ()
    description = "A function that acts as an OR operator on conditions."
    decisive = True


class If(Function):
    """``{if: [condition, value_if_true, value_if_false]}`` (from 2016-10-14): one of the
    values, by the condition (a condition name, a boolean or a condition function).

    Only the chosen value is resolved. ``Template.with_conditions`` replaces each ``if``
    by its chosen value before anything is resolved, as Heat does at parse time, so a
    resource named only in the other branch is no dependency.
    """

    __slots__ = ()
    description = "A function to return corresponding value based on condition evaluation."
    nullable = False
    # where the two-argument form is found, for the hint of a version without it
    nullable_in: str | None = "heat_template_version 2021-04-16"

    @classmethod
    def from_template(cls, fn_name: str, raw_args: Any, path: tuple, parser: Parser) -> Function:
        sizes = (2, 3) if cls.nullable else (3,)
        if not isinstance(raw_args, list) or len(raw_args) not in sizes:
            hint = None
            if (
                not cls.nullable
                and cls.nullable_in
                and isinstance(raw_args, list)
                and len(raw_args) == 2
            ):
                hint = f"the form [condition, value_if_true], dropping the value when false, needs {cls.nullable_in}"
            raise TemplateError(
                f'Arguments to "{fn_name}" must be of the form: [condition_name, value_if_true, value_if_false]',
                path=format_path(path),
                hint=hint,
            )
        base = path + (fn_name,)
        condition = parser.for_conditions().parse(raw_args[0], base + (0,))
        values = [parser.parse(value, base + (index,)) for index, value in enumerate(raw_args[1:], start=1)]
        if len(values) == 1:
            values.append(OMITTED)
        return cls(fn_name, [condition, *values], path)

    def result(self, context: ResolutionContext) -> Any:
        value = self.decide(context)
        if value is UNRESOLVED:
            return UNRESOLVED
        return resolve_nullable(self.args[1] if value else self.args[2], context)

    def decide(self, context: ResolutionContext) -> Any:
        """True or False (UNRESOLVED if not known yet): which value this call gives."""
        return condition_value(resolve(self.args[0], context), context, self)


class IfNullable(If):
    """``if`` from 2021-04-16: ``[condition, value_if_true]`` without a false value drops
    the enclosing map key or list item (or property) when the condition is false."""

    __slots__ = ()
    nullable = True
