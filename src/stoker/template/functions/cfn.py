"""The CloudFormation-style functions: those of the CFN formats and of HOT 2013-05-23.

AWSTemplateFormatVersion 2010-09-09 and HeatTemplateFormatVersion 2012-12-12 have
Fn::FindInMap, Fn::GetAZs, Ref, Fn::GetAtt, Fn::Select, Fn::Join, Fn::Split,
Fn::Replace, Fn::Base64, Fn::MemberListToMap and Fn::ResourceFacade; 2010-09-09 adds
Fn::If, and conditions with Fn::Equals, Fn::Not, Fn::And, Fn::Or, Fn::FindInMap and a
Ref that reads parameters only (Heat's heat/engine/cfn/functions.py). A CFN template's
Ref also reads the pseudo parameters AWS::StackName, AWS::StackId and AWS::Region,
computed from the stack's own (OS::stack_name, ...) as Heat's CfnParameters does.

heat_template_version 2013-05-23 has Ref, Fn::GetAZs, Fn::Select, Fn::Join, Fn::Split,
Fn::Replace, Fn::Base64, Fn::MemberListToMap and Fn::ResourceFacade beside the native
functions; 2014-10-16 removed all of them but Fn::Select, which 2015-10-15 removed too
(the version tables say what replaces each).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping
from difflib import get_close_matches
from typing import Any
from urllib.parse import quote

from stoker.sdk.properties import UNRESOLVED
from stoker.template import parameters
from stoker.template.functions.access import GetAttrThenSelect, GetParam
from stoker.template.functions.base import Function, Parser, ResolutionContext, resolve
from stoker.template.functions.conditions import If, Not
from stoker.template.functions.facade import ResourceFacade
from stoker.template.functions.strings import ListJoinStrings, StrReplaceStrings

AWS_PSEUDO = (STACK_ID, STACK_NAME, REGION) = ("AWS::StackId", "AWS::StackName", "AWS::Region")
# Heat's fixed value (heat/engine/cfn/parameters.py); it knows no other region.
REGION_NAME = "ap-southeast-1"


def cfn_parameter(name: str, context: ResolutionContext) -> Any:
    """A parameter's value as a CFN template reads it: a pseudo parameter, or a declared one."""
    if name == STACK_NAME:
        return context.parameter(parameters.STACK_NAME)
    if name == REGION:
        return REGION_NAME
    if name == STACK_ID:
        # Heat's stack ARN: arn:openstack:heat::<project>:stacks/<name>/<id>
        parts = [
            context.parameter(key)
            for key in (parameters.PROJECT_ID, parameters.STACK_NAME, parameters.STACK_ID)
        ]
        if UNRESOLVED in parts:
            return UNRESOLVED
        project, stack_name, stack_id = (quote(str(part), safe="") for part in parts)
        return f"arn:openstack:heat::{project}:stacks/{stack_name}/{stack_id}"
    return context.parameter(name)


class Ref(Function):
    """``{Ref: name}``: a resource's reference id, or a parameter's value."""

    __slots__ = ()
    description = "A function for resolving parameters or resource references."

    def check(self) -> None:
        if not isinstance(self.args, str):
            raise self.error(f'Argument to "{self.fn_name}" must be a resource or parameter name (a string)')

    def result(self, context: ResolutionContext) -> Any:
        if context.has_resource(self.args):
            return context.resource_reference(self.args)
        return self.parameter_value(context)

    def parameter_value(self, context: ResolutionContext) -> Any:
        return context.parameter(self.args)

    def dependencies(self) -> Iterator[str]:
        # A parameter name is no resource; the graph builder ignores names it lacks.
        yield self.args


class CfnRef(Ref):
    """``{Ref: name}`` of the CFN formats: a resource's reference id, a parameter's value,
    or a pseudo parameter (AWS::StackName, AWS::StackId, AWS::Region)."""

    __slots__ = ()

    def parameter_value(self, context: ResolutionContext) -> Any:
        return cfn_parameter(self.args, context)


class ParamRef(GetParam):
    """``{Ref: name}`` in a condition of AWSTemplateFormatVersion 2010-09-09: a
    parameter's value (pseudo parameters too); a condition cannot read resources."""

    __slots__ = ()
    description = "A function for resolving parameter references."

    def check(self) -> None:
        if not isinstance(self.args, str):
            raise self.error(f'Argument to "{self.fn_name}" must be a parameter name (a string)')

    def result(self, context: ResolutionContext) -> Any:
        return cfn_parameter(self.args, context)


class GetAtt(GetAttrThenSelect):
    """``{Fn::GetAtt: [resource_name, attribute]}``: the attribute's value, or None while
    the resource has none."""

    __slots__ = ()

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form [resource_name, attribute]'
            )
        super().check()


_SCALARS = (str, int, float, bool)


class FindInMap(Function):
    """``{Fn::FindInMap: [map_name, top_level_key, second_level_key]}``: a value of the
    template's Mappings section.

    The Mappings come from the parser (a template's Mappings, None when that section
    could not be read). A lookup of literal names is checked as the template is read,
    so a misspelt name is found before anything runs; computed names are looked up when
    the function resolves.
    """

    __slots__ = ("mappings",)
    description = "A function for resolving keys in the template mappings."

    def __init__(
        self, fn_name: str, args: Any, path: tuple, mappings: Mapping[str, Any] | None = None
    ):
        self.mappings = mappings
        super().__init__(fn_name, args, path)

    @classmethod
    def from_template(cls, fn_name: str, raw_args: Any, path: tuple, parser: Parser) -> Function:
        return cls(fn_name, parser.parse(raw_args, path + (fn_name,)), path, parser.mappings)

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 3:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form [map_name, top_level_key, second_level_key]'
            )
        if self.mappings is not None and all(isinstance(arg, _SCALARS) for arg in self.args):
            self._lookup(self.args)

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        return self._lookup(args)

    def _lookup(self, args: list[Any]) -> Any:
        level: Any = self.mappings or {}
        names = ("mapping", "top-level key", "second-level key")
        where = "the Mappings section"
        for kind, step in zip(names, args, strict=False):
            if not isinstance(step, _SCALARS):
                raise self.error(
                    f'The {kind} given to "{self.fn_name}" must be a string, got {type(step).__name__}'
                )
            if not isinstance(level, Mapping) or step not in level:
                choices = [str(key) for key in level] if isinstance(level, Mapping) else []
                close = get_close_matches(str(step), choices, n=1)
                raise self.error(
                    f'"{step}" (in {self.fn_name}) is not a {kind} of {where}',
                    hint=f"did you mean '{close[0]}'?"
                    if close
                    else ("it has: " + ", ".join(choices) if choices else f"{where} is empty"),
                )
            level = level[step]
            where = f'mapping "{args[0]}"' if kind == "mapping" else f'"{args[0]}.{args[1]}"'
        return level


class GetAZs(Function):
    """``{Fn::GetAZs: region}``: the availability zones (the context's, else ["nova"])."""

    __slots__ = ()
    description = "A function for retrieving the availability zones."

    def result(self, context: ResolutionContext) -> Any:
        zones = getattr(context, "availability_zones", None)
        return list(zones()) if zones is not None else ["nova"]


class Select(Function):
    """``{Fn::Select: [index, list_or_map]}``: the item, or "" when there is none. A
    string argument is read as JSON, as Heat does."""

    __slots__ = ()
    description = "A function for selecting an item from a list or map."

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(f'Arguments to "{self.fn_name}" must be of the form [index, collection]')

    def result(self, context: ResolutionContext) -> Any:
        index = resolve(self.args[0], context)
        collection = resolve(self.args[1], context)
        if index is UNRESOLVED or collection is UNRESOLVED:
            return UNRESOLVED
        if collection == "" or collection is None:
            return ""
        if isinstance(collection, str):
            try:
                collection = json.loads(collection)
            except ValueError as error:
                raise self.error(f'"{self.fn_name}": {error}')
        if isinstance(collection, dict):
            if not isinstance(index, str):
                raise self.error(f'Index to "{self.fn_name}" must be a string')
            return collection.get(index, "")
        try:
            index = int(index)
        except (ValueError, TypeError):
            pass
        if isinstance(collection, list):
            if not isinstance(index, int):
                raise self.error(f'Index to "{self.fn_name}" must be an integer')
            try:
                return collection[index]
            except IndexError:
                return ""
        raise self.error(f"Arguments to {self.fn_name} not fully resolved")


class Join(ListJoinStrings):
    """``{Fn::Join: [delimiter, [string, ...]]}``."""

    __slots__ = ()
    description = "A function for joining strings."
    hints_later_versions = False


class Split(Function):
    """``{Fn::Split: [delimiter, string]}``: the list of pieces."""

    __slots__ = ()
    description = "A function for splitting strings."

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(f'Incorrect arguments to "{self.fn_name}" should be: "{self.fn_name}" : [ ",", "str1,str2"]]')
        if not isinstance(self.args[0], str) or not self.args[0]:
            raise self.error(f"Delimiter for {self.fn_name} must be string")

    def result(self, context: ResolutionContext) -> Any:
        text = resolve(self.args[1], context)
        if text is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(text, str):
            raise self.error(f"String to split must be string; got {type(text).__name__}")
        return text.split(self.args[0])


class Replace(StrReplaceStrings):
    """``{Fn::Replace: [{key: value, ...}, template]}``."""

    __slots__ = ()
    description = "A function for performing string substitutions."

    def check(self) -> None:
        example = f'{{"{self.fn_name}": [ {{"$var1": "foo", "%var2%": "bar"}}, "$var1 is %var2%"]}}'
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(f'Incorrect arguments to "{self.fn_name}" should be: {example}')
        if not isinstance(self.args[0], (dict, Function)):
            raise self.error(f'"{self.fn_name}" parameters must be a mapping')

    def result(self, context: ResolutionContext) -> Any:
        return self._substitute(self.args[1], self.args[0], context)


class Base64(Function):
    """``{Fn::Base64: string}``: the string unchanged (Heat takes user data as text)."""

    __slots__ = ()
    description = "A placeholder function for converting to base64."

    def result(self, context: ResolutionContext) -> Any:
        value = resolve(self.args, context)
        if value is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(value, str):
            raise self.error(f'"{self.fn_name}" argument must be a string')
        return value


_MEMBER = re.compile(r"\.member\.([0-9]+)\.(.*)")


class MemberListToMap(Function):
    """``{Fn::MemberListToMap: [key_name, value_name, ['.member.0.Name=k', '.member.0.Value=v', ...]]}``."""

    __slots__ = ()
    description = "A function to convert lists with enumerated keys and values to mapping."

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 3:
            raise self.error(
                "Wrong Arguments try: \"{'Fn::MemberListToMap': ['Name', 'Value', ['.member.0.Name=key', '.member.0.Value=door']]}\""
            )
        if not isinstance(self.args[0], str):
            raise self.error(f"{self.fn_name} Key Name must be a string")
        if not isinstance(self.args[1], str):
            raise self.error(f"{self.fn_name} Value Name must be a string")

    def result(self, context: ResolutionContext) -> Any:
        members = resolve(self.args[2], context)
        if members is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(members, list):
            raise self.error("Member list must be a list")
        fields: list[tuple[int, tuple[str, str]]] = []
        for item in members:
            if not isinstance(item, str):
                raise self.error("Member list items must be strings")
            name, _, value = item.partition("=")
            match = _MEMBER.match(name)
            if match:
                fields.append((int(match.group(1)), (match.group(2), value)))
        fields.sort(key=lambda entry: entry[0])
        key_name, value_name = self.args[0], self.args[1]
        result = {}
        for _, group in itertools.groupby(fields, key=lambda entry: entry[0]):
            member = dict(pair for _, pair in group)
            if key_name in member and value_name in member:
                result[member[key_name]] = member[value_name]
        return result


class CfnNot(Not):
    """``{Fn::Not: [condition]}``: true when the condition is false."""

    __slots__ = ()

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 1:
            raise self.error(f'Arguments to "{self.fn_name}" must be of the form: [condition]')

    @property
    def operand(self) -> Any:
        return self.args[0]


class CfnIf(If):
    """``{Fn::If: [condition, value_if_true, value_if_false]}``."""

    __slots__ = ()
    nullable_in = None


class CfnResourceFacade(ResourceFacade):
    """``{Fn::ResourceFacade: Metadata | DeletionPolicy | UpdatePolicy}``."""

    __slots__ = ()
    attributes = ("Metadata", "DeletionPolicy", "UpdatePolicy")
