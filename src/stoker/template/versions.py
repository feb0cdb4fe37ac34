"""Template versions and their function tables.

Each HOT version has one immutable table of the functions it offers (Heat's
``HOTemplateYYYYMMDD.functions``) and, from 2016-10-14, one of the functions allowed in
condition expressions (``condition_functions``). A name a version lacks maps to a message:
a function that a later version adds says in which version it appears; a function that
was removed says when, and what replaces it. ``template_versions`` and
``template_functions`` describe the tables (Heat's template-version-list and
template-function-list) without touching them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from stoker.template.functions import cfn
from stoker.template.functions.access import GetAttr, GetAttrNamed, GetParam, GetResource
from stoker.template.functions.base import Function
from stoker.template.functions.conditions import And, Equals, If, IfNullable, Not, Or
from stoker.template.functions.facade import ResourceFacade
from stoker.template.functions.files import GetFile
from stoker.template.functions.lists import (
    Contains,
    Filter,
    ListConcat,
    ListConcatUnique,
    Repeat,
    RepeatWithMaps,
    RepeatWithPermutations,
)
from stoker.template.functions.maps import MapMerge, MapReplace
from stoker.template.functions.strings import (
    Digest,
    ListJoin,
    ListJoinStrings,
    StrReplace,
    StrReplaceStrict,
    StrReplaceStrings,
    StrReplaceVeryStrict,
    StrSplit,
)
from stoker.template.functions.urls import MakeURL
from stoker.template.functions.yaql_function import Yaql

HOT_VERSIONS = (
    "2013-05-23",
    "2014-10-16",
    "2015-04-30",
    "2015-10-15",
    "2016-04-08",
    "2016-10-14",
    "2017-02-24",
    "2017-09-01",
    "2018-03-02",
    "2018-08-31",
    "2021-04-16",
)
ALIASES = {
    "newton": "2016-10-14",
    "ocata": "2017-02-24",
    "pike": "2017-09-01",
    "queens": "2018-03-02",
    "rocky": "2018-08-31",
    "wallaby": "2021-04-16",
}

Table = dict[str, type[Function]]

# What each version changes in the table before it (Heat's hot/template.py): a class
# added or replaced, or None for a function removed.
_CHANGES: dict[str, dict[str, type[Function] | None]] = {
    "2013-05-23": {
        "get_param": GetParam,
        "get_resource": GetResource,
        "get_attr": GetAttrNamed,
        "str_replace": StrReplaceStrings,
        "list_join": ListJoinStrings,
        "get_file": GetFile,
        "resource_facade": ResourceFacade,
        "Ref": cfn.Ref,
        "Fn::GetAZs": cfn.GetAZs,
        "Fn::Select": cfn.Select,
        "Fn::Join": cfn.Join,
        "Fn::Split": cfn.Split,
        "Fn::Replace": cfn.Replace,
        "Fn::Base64": cfn.Base64,
        "Fn::MemberListToMap": cfn.MemberListToMap,
        "Fn::ResourceFacade": cfn.CfnResourceFacade,
    },
    "2014-10-16": {
        name: None
        for name in (
            "Ref",
            "Fn::GetAZs",
            "Fn::Join",
            "Fn::Split",
            "Fn::Replace",
            "Fn::Base64",
            "Fn::MemberListToMap",
            "Fn::ResourceFacade",
        )
    },
    "2015-04-30": {"digest": Digest, "repeat": Repeat},
    "2015-10-15": {
        "get_attr": GetAttr,
        "list_join": ListJoin,
        "str_replace": StrReplace,
        "str_split": StrSplit,
        "Fn::Select": None,
    },
    "2016-04-08": {"map_merge": MapMerge},
    "2016-10-14": {"yaql": Yaql, "map_replace": MapReplace, "if": If, "repeat": RepeatWithMaps},
    "2017-02-24": {"filter": Filter, "str_replace_strict": StrReplaceStrict},
    "2017-09-01": {
        "make_url": MakeURL,
        "list_concat": ListConcat,
        "list_concat_unique": ListConcatUnique,
        "str_replace_vstrict": StrReplaceVeryStrict,
        "contains": Contains,
        "repeat": RepeatWithPermutations,
    },
    "2018-03-02": {},
    "2018-08-31": {},
    "2021-04-16": {"if": IfNullable},
}
_CONDITION_CHANGES: dict[str, Table] = {
    "2016-10-14": {"get_param": GetParam, "equals": Equals, "not": Not, "and": And, "or": Or},
    "2017-09-01": {"yaql": Yaql, "contains": Contains},
}
# What to use instead of a removed function.
_REPLACEMENTS = {
    "Ref": "use get_resource or get_param instead",
    "Fn::GetAZs": "pass the availability zones as a parameter instead",
    "Fn::Join": "use list_join instead",
    "Fn::Split": "use str_split instead",
    "Fn::Replace": "use str_replace instead",
    "Fn::Base64": "give the text as it is (Heat never encoded it)",
    "Fn::MemberListToMap": "give a map instead",
    "Fn::ResourceFacade": "use resource_facade instead",
    "Fn::Select": "use get_param or get_attr with a path, or str_split with an index, instead",
}

_RESOURCE_KEYS = ("type", "properties", "metadata", "depends_on", "update_policy", "deletion_policy", "description")
_OUTPUT_KEYS = ("value", "description")
_DELETION_POLICIES = {"Delete": "Delete", "Retain": "Retain", "Snapshot": "Snapshot"}
_SECTIONS = ("heat_template_version", "description", "parameter_groups", "parameters", "resources", "outputs")


@dataclass(frozen=True)
class TemplateVersion:
    key: str
    date: str
    functions: Mapping[str, type[Function]]
    # name -> message, for functions this version does not have but a reader may try.
    unknown_functions: Mapping[str, str] = field(default_factory=dict)
    sections: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    resource_keys: tuple[str, ...] = _RESOURCE_KEYS
    output_keys: tuple[str, ...] = _OUTPUT_KEYS
    # spelling accepted in a template -> the policy
    deletion_policies: Mapping[str, str] = field(default_factory=lambda: MappingProxyType(_DELETION_POLICIES))
    # the functions of condition expressions; None before 2016-10-14 (no conditions)
    condition_functions: Mapping[str, type[Function]] | None = None

    def at_least(self, date: str) -> bool:
        return self.date >= date

    @property
    def has_conditions(self) -> bool:
        return self.condition_functions is not None


def _build() -> dict[str, TemplateVersion]:
    versions: dict[str, TemplateVersion] = {}
    table: Table = {}
    conditions: Table | None = None
    added: dict[str, str] = {}  # name -> first version with it
    removed: dict[str, str] = {}  # name -> version that removed it
    for date in HOT_VERSIONS:
        for name, cls in _CHANGES[date].items():
            if cls is None:
                del table[name]
                removed[name] = date
            else:
                table[name] = cls
                added.setdefault(name, date)
        if date in _CONDITION_CHANGES:
            conditions = {**(conditions or {}), **_CONDITION_CHANGES[date]}
        versions[date] = _version(date, dict(table), None if conditions is None else dict(conditions), removed)
    # Functions of later versions: say where they appear.
    for date, version in versions.items():
        unknown = dict(version.unknown_functions)
        for name, first in added.items():
            if name not in version.functions and name not in unknown and first > date:
                unknown[name] = (
                    f"The function {name} is not supported in heat_template_version {date}; "
                    f"it appears in heat_template_version {first}"
                )
        versions[date] = _replace_unknown(version, unknown)
    for alias, date in ALIASES.items():
        versions[alias] = versions[date]
    return versions


def _version(date: str, table: Table, conditions: Table | None, removed: Mapping[str, str]) -> TemplateVersion:
    unknown = {
        name: f"The function {name} is not supported in heat_template_version {date}: "
        f"it was removed in {when}; {_REPLACEMENTS[name]}"
        for name, when in removed.items()
    }
    has_conditions = conditions is not None
    policies = dict(_DELETION_POLICIES)
    if has_conditions:  # lower-case aliases arrived with 2016-10-14 too
        policies.update({name.lower(): policy for name, policy in _DELETION_POLICIES.items()})
    return TemplateVersion(
        key=date,
        date=date,
        functions=MappingProxyType(table),
        unknown_functions=MappingProxyType(unknown),
        sections=_SECTIONS + (("conditions",) if has_conditions else ()),
        aliases=tuple(alias for alias, target in ALIASES.items() if target == date),
        resource_keys=_RESOURCE_KEYS + (("external_id", "condition") if has_conditions else ()),
        output_keys=_OUTPUT_KEYS + (("condition",) if has_conditions else ()),
        deletion_policies=MappingProxyType(policies),
        condition_functions=None if conditions is None else MappingProxyType(conditions),
    )


def _replace_unknown(version: TemplateVersion, unknown: dict[str, str]) -> TemplateVersion:
    return replace(version, unknown_functions=MappingProxyType(unknown))


VERSIONS: Mapping[str, TemplateVersion] = MappingProxyType(_build())


def get(key: object) -> TemplateVersion | None:
    return VERSIONS.get(str(key)) if key is not None else None


# -- introspection (Heat's template-version-list and template-function-list) ----------


def template_versions() -> list[dict[str, Any]]:
    """Every template version: ``{"version": "heat_template_version.2016-10-14",
    "type": "hot", "aliases": ["heat_template_version.newton"]}``, oldest first.
    (CFN formats are not supported, so none is listed.)"""
    return [
        {
            "version": f"heat_template_version.{date}",
            "type": "hot",
            "aliases": [f"heat_template_version.{alias}" for alias in VERSIONS[date].aliases],
        }
        for date in HOT_VERSIONS
    ]


def _describe(table: Mapping[str, type[Function]]) -> list[dict[str, str]]:
    return [
        {"functions": name, "description": _first_line(cls.description or cls.__doc__ or "")}
        for name, cls in sorted(table.items())
    ]


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def template_functions(version: str, with_condition_functions: bool = False) -> list[dict[str, str]]:
    """The functions of ``version`` (a date, an alias, or ``heat_template_version.DATE``)
    as ``{"functions": name, "description": text}``, removed ones left out, by name;
    with ``with_condition_functions``, the condition functions the list lacks follow
    (Heat's ``with_condition_func``). Raises KeyError for an unknown version."""
    found = get(version.removeprefix("heat_template_version."))
    if found is None:
        raise KeyError(f"Template with version {version} not found")
    entries = _describe(found.functions)
    if with_condition_functions and found.condition_functions is not None:
        listed = {entry["functions"] for entry in entries}
        entries += [entry for entry in _describe(found.condition_functions) if entry["functions"] not in listed]
    return entries


def condition_functions(version: str) -> list[dict[str, str]]:
    """The functions allowed in condition expressions of ``version`` (none before
    2016-10-14), as ``template_functions`` describes them."""
    found = get(version.removeprefix("heat_template_version."))
    if found is None:
        raise KeyError(f"Template with version {version} not found")
    return _describe(found.condition_functions or {})
