"""The CloudFormation-style functions HOT 2013-05-23 still offers.

heat_template_version 2013-05-23 has Ref, Fn::GetAZs, Fn::Select, Fn::Join, Fn::Split,
Fn::Replace, Fn::Base64, Fn::MemberListToMap and Fn::ResourceFacade beside the native
functions; 2014-10-16 removed all of them but Fn::Select, which 2015-10-15 removed too
(the version tables say what replaces each).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, ResolutionContext, resolve
from stoker.template.functions.facade import ResourceFacade
from stoker.template.functions.strings import ListJoinStrings, StrReplaceStrings


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
        return context.parameter(self.args)

    def dependencies(self) -> Iterator[str]:
        # A parameter name is no resource; the graph builder ignores names it lacks.
        yield self.args


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


class CfnResourceFacade(ResourceFacade):
    """``{Fn::ResourceFacade: Metadata | DeletionPolicy | UpdatePolicy}``."""

    __slots__ = ()
    attributes = ("Metadata", "DeletionPolicy", "UpdatePolicy")
