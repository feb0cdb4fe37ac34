"""Template versions and their function tables.

Each HOT version names the functions it offers; a function added later is unknown in an
earlier version, and a removed one maps to a message that says what replaces it.
Issue 4 completes the tables; the shape (one immutable table per version) is fixed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from stoker.template.functions.access import GetAttr, GetAttrNamed, GetParam, GetResource
from stoker.template.functions.base import Function
from stoker.template.functions.strings import (
    ListJoin,
    ListJoinStrings,
    StrReplace,
    StrReplaceStrings,
)

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


# CloudFormation functions HOT dropped, with what replaces each (Heat's ``Removed``).
_REMOVED_2014_10_16 = {
    "Fn::GetAZs": None,
    "Fn::Join": "list_join",
    "Fn::Split": None,
    "Fn::Replace": "str_replace",
    "Fn::Base64": None,
    "Fn::MemberListToMap": None,
    "Fn::ResourceFacade": None,
    "Ref": "get_resource or get_param",
}
_REMOVED_2015_10_15 = {"Fn::Select": "get_param or get_attr with a path"}

_RESOURCE_KEYS = ("type", "properties", "metadata", "depends_on", "update_policy", "deletion_policy", "description")
_OUTPUT_KEYS = ("value", "description")
_DELETION_POLICIES = {"Delete": "Delete", "Retain": "Retain", "Snapshot": "Snapshot"}


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

    def at_least(self, date: str) -> bool:
        return self.date >= date


_SECTIONS = ("heat_template_version", "description", "parameter_groups", "parameters", "resources", "outputs")


def _build() -> dict[str, TemplateVersion]:
    versions: dict[str, TemplateVersion] = {}
    all_names = {"get_param", "get_resource", "get_attr", "str_replace", "list_join"}
    for date in HOT_VERSIONS:
        # Heat: maps and lists as str_replace values and list_join items, several lists
        # to list_join and get_attr without an attribute name all arrive in 2015-10-15.
        modern = date >= "2015-10-15"
        table: dict[str, type[Function]] = {
            "get_param": GetParam,
            "get_resource": GetResource,
            "get_attr": GetAttr if modern else GetAttrNamed,
            "str_replace": StrReplace if modern else StrReplaceStrings,
            "list_join": ListJoin if modern else ListJoinStrings,
        }
        unknown = {
            name: f"The function {name} is not supported in heat_template_version {date}"
            for name in all_names - set(table)
        }
        removed = {}
        if date >= "2014-10-16":
            removed.update(_REMOVED_2014_10_16)
        if date >= "2015-10-15":
            removed.update(_REMOVED_2015_10_15)
        for name, replacement in removed.items():
            message = f"The function {name} is not supported in heat_template_version {date}"
            unknown[name] = f"{message}; use {replacement} instead" if replacement else message
        conditions = date >= "2016-10-14"
        sections = _SECTIONS + (("conditions",) if conditions else ())
        policies = dict(_DELETION_POLICIES)
        if conditions:  # lower-case aliases arrived with 2016-10-14 too
            policies.update({name.lower(): policy for name, policy in _DELETION_POLICIES.items()})
        aliases = tuple(alias for alias, target in ALIASES.items() if target == date)
        version = TemplateVersion(
            key=date,
            date=date,
            functions=MappingProxyType(table),
            unknown_functions=MappingProxyType(unknown),
            sections=sections,
            aliases=aliases,
            resource_keys=_RESOURCE_KEYS + (("external_id", "condition") if conditions else ()),
            output_keys=_OUTPUT_KEYS + (("condition",) if conditions else ()),
            deletion_policies=MappingProxyType(policies),
        )
        versions[date] = version
        for alias in aliases:
            versions[alias] = version
    return versions


VERSIONS: Mapping[str, TemplateVersion] = MappingProxyType(_build())


def get(key: object) -> TemplateVersion | None:
    return VERSIONS.get(str(key)) if key is not None else None
