"""Template versions, their function tables and how each format spells its keys.

Each HOT version has one immutable table of the functions it offers (Heat's
``HOTemplateYYYYMMDD.functions``) and, from 2016-10-14, one of the functions allowed in
condition expressions (``condition_functions``). A function that was removed is an error
(Heat's ``hot_funcs.Removed``) whose message says when, and what replaces it
(``removed_functions``). Any other name a version lacks is no function there: Heat reads
``{filter: ...}`` in 2016-10-14 as an ordinary map, and so does stoker, with a warning
(``unknown_functions``) saying in which version the function appears, if any.

The CloudFormation-compatible formats are two more versions (Heat's heat/engine/cfn/
template.py): ``AWSTemplateFormatVersion: 2010-09-09`` (``CfnTemplate``: conditions,
``Fn::If``) and ``HeatTemplateFormatVersion: 2012-12-12`` (``HeatTemplate``: neither).
They spell sections and keys their own way (``Keywords``). ``template_versions`` and
``template_functions`` describe the tables (Heat's template-version-list and
template-function-list) without touching them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from stoker.template.functions import cfn
from stoker.template.functions.access import (
    GetAttr,
    GetAttrNamed,
    GetAttrThenSelect,
    GetParam,
    GetResource,
)
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
from stoker.template.parameters import PSEUDO

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

# The CloudFormation-style functions HOT 2013-05-23 shares with the CFN formats.
_CFN_STYLE: Table = {
    "Fn::GetAZs": cfn.GetAZs,
    "Fn::Select": cfn.Select,
    "Fn::Join": cfn.Join,
    "Fn::Split": cfn.Split,
    "Fn::Replace": cfn.Replace,
    "Fn::Base64": cfn.Base64,
    "Fn::MemberListToMap": cfn.MemberListToMap,
    "Fn::ResourceFacade": cfn.CfnResourceFacade,
}

# What each version changes in the table before it (Heat's hot/template.py): a class
# added or replaced, or None for a function removed.
_CHANGES: dict[str, dict[str, type[Function] | None]] = {
    "2013-05-23": {
        "get_param": GetParam,
        "get_resource": GetResource,
        "get_attr": GetAttrThenSelect,
        "str_replace": StrReplaceStrings,
        "list_join": ListJoinStrings,
        "get_file": GetFile,
        "resource_facade": ResourceFacade,
        "Ref": cfn.Ref,
        **_CFN_STYLE,
    },
    "2014-10-16": {
        # get_attr hands its path to the stack from here on (Heat's GetAtt)
        "get_attr": GetAttrNamed,
        **{
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
class Keywords:
    """How a template format spells its sections and the keys of resources and outputs
    (HOT's lower-case names by default). ``external_id`` is "" where the format has none."""

    description: str = "description"
    parameters: str = "parameters"
    resources: str = "resources"
    outputs: str = "outputs"
    conditions: str = "conditions"
    type: str = "type"
    properties: str = "properties"
    metadata: str = "metadata"
    depends_on: str = "depends_on"
    deletion_policy: str = "deletion_policy"
    update_policy: str = "update_policy"
    resource_description: str = "description"
    condition: str = "condition"
    external_id: str = "external_id"
    value: str = "value"
    output_description: str = "description"


HOT_KEYWORDS = Keywords()
CFN_KEYWORDS = Keywords(
    description="Description",
    parameters="Parameters",
    resources="Resources",
    outputs="Outputs",
    conditions="Conditions",
    type="Type",
    properties="Properties",
    metadata="Metadata",
    depends_on="DependsOn",
    deletion_policy="DeletionPolicy",
    update_policy="UpdatePolicy",
    resource_description="Description",
    condition="Condition",
    external_id="",
    value="Value",
    output_description="Description",
)


@dataclass(frozen=True)
class TemplateVersion:
    key: str
    date: str
    functions: Mapping[str, type[Function]]
    # name -> warning, for functions of other versions or formats that this version reads
    # as plain map keys (Heat has no entry for them).
    unknown_functions: Mapping[str, str] = field(default_factory=dict)
    # name -> error, for the functions this version removed (Heat's hot_funcs.Removed).
    removed_functions: Mapping[str, str] = field(default_factory=dict)
    sections: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    resource_keys: tuple[str, ...] = _RESOURCE_KEYS
    output_keys: tuple[str, ...] = _OUTPUT_KEYS
    # spelling accepted in a template -> the policy
    deletion_policies: Mapping[str, str] = field(default_factory=lambda: MappingProxyType(_DELETION_POLICIES))
    # the functions of condition expressions; None where the version has no conditions
    condition_functions: Mapping[str, type[Function]] | None = None
    # "hot" or "cfn" (Heat's template-version-list type)
    kind: str = "hot"
    # the top-level key that names the version
    version_key: str = "heat_template_version"
    keywords: Keywords = HOT_KEYWORDS
    # the parameters every stack has without declaring them
    pseudo_parameters: tuple[str, ...] = PSEUDO
    # a resource or output key this version refuses but another has -> what to say
    key_hints: Mapping[str, str] = field(default_factory=dict)

    def at_least(self, date: str) -> bool:
        return self.date >= date

    @property
    def has_conditions(self) -> bool:
        return self.condition_functions is not None

    @property
    def name(self) -> str:
        """As Heat names it: ``heat_template_version.2016-10-14``,
        ``AWSTemplateFormatVersion.2010-09-09``."""
        return f"{self.version_key}.{self.date}"


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
    # Functions of later versions: plain map keys here; say where they appear.
    for date, version in versions.items():
        unknown = {
            name: _not_a_function(name, date, first)
            for name, first in added.items()
            if name not in version.functions and name not in version.removed_functions and first > date
        }
        versions[date] = _replace_unknown(version, unknown)
    for alias, date in ALIASES.items():
        versions[alias] = versions[date]
    return versions


def _not_a_function(name: str, date: str, first: str) -> str:
    return (
        f"'{name}' is not a function in heat_template_version {date} (it appears in heat_template_version "
        f"{first}), so this is read as a plain map, as Heat reads it"
    )


def _version(date: str, table: Table, conditions: Table | None, removed: Mapping[str, str]) -> TemplateVersion:
    removed_messages = {
        name: f"The function {name} is not supported in heat_template_version {date}: "
        f"it was removed in {when}; {_REPLACEMENTS[name]}"
        for name, when in removed.items()
    }
    has_conditions = conditions is not None
    policies = dict(_DELETION_POLICIES)
    if has_conditions:  # lower-case aliases arrived with 2016-10-14 too
        policies.update({name.lower(): policy for name, policy in _DELETION_POLICIES.items()})
    later = {key: f"'{key}' needs heat_template_version 2016-10-14 or later" for key in ("external_id", "condition")}
    return TemplateVersion(
        key=date,
        date=date,
        functions=MappingProxyType(table),
        removed_functions=MappingProxyType(removed_messages),
        # capabilities: template_capabilities.SINCE (seed 003)
        sections=_SECTIONS + (("capabilities",) if date >= "2015-10-15" else ()) + (("conditions",) if has_conditions else ()),
        aliases=tuple(alias for alias, target in ALIASES.items() if target == date),
        resource_keys=_RESOURCE_KEYS + (("external_id", "condition") if has_conditions else ()),
        output_keys=_OUTPUT_KEYS + (("condition",) if has_conditions else ()),
        deletion_policies=MappingProxyType(policies),
        condition_functions=None if conditions is None else MappingProxyType(conditions),
        key_hints=MappingProxyType({} if has_conditions else later),
    )


def _replace_unknown(version: TemplateVersion, unknown: dict[str, str]) -> TemplateVersion:
    return replace(version, unknown_functions=MappingProxyType(unknown))


VERSIONS: Mapping[str, TemplateVersion] = MappingProxyType(_build())


def get(key: object) -> TemplateVersion | None:
    """A HOT version by its date or alias."""
    return VERSIONS.get(str(key)) if key is not None else None


# -- the CloudFormation-compatible formats (Heat's cfn/template.py) -----------------

CFN_VERSION_KEYS = (AWS_VERSION_KEY, HEAT_VERSION_KEY) = ("AWSTemplateFormatVersion", "HeatTemplateFormatVersion")
# Heat's HeatTemplate (HeatTemplateFormatVersion 2012-12-12): no conditions.
_CFN_FUNCTIONS: Table = {"Fn::FindInMap": cfn.FindInMap, "Ref": cfn.CfnRef, "Fn::GetAtt": cfn.GetAtt, **_CFN_STYLE}
# Heat's CfnTemplate (AWSTemplateFormatVersion 2010-09-09) adds Fn::If and conditions.
_CFN_CONDITION_FUNCTIONS: Table = {
    "Fn::Equals": Equals,
    "Ref": cfn.ParamRef,
    "Fn::FindInMap": cfn.FindInMap,
    "Fn::Not": cfn.CfnNot,
    "Fn::And": And,
    "Fn::Or": Or,
}
# HOT functions a CFN template may try, and what it has instead.
_HOT_EQUIVALENTS = {
    "get_param": "Ref",
    "get_resource": "Ref",
    "get_attr": "Fn::GetAtt",
    "list_join": "Fn::Join",
    "str_replace": "Fn::Replace",
    "str_split": "Fn::Split",
    "resource_facade": "Fn::ResourceFacade",
    "if": "Fn::If",
}
# AWS CloudFormation functions that Heat never implemented.
_AWS_ONLY = ("Fn::Sub", "Fn::ImportValue", "Fn::Cidr", "Fn::Transform", "Fn::Length", "Fn::ToJsonString")
_CFN_SECTIONS = (AWS_VERSION_KEY, HEAT_VERSION_KEY, "Description", "Mappings", "Parameters", "Resources", "Outputs")
_CFN_RESOURCE_KEYS = ("Type", "Properties", "Metadata", "DependsOn", "DeletionPolicy", "UpdatePolicy", "Description")
_CFN_OUTPUT_KEYS = ("Description", "Value")
CFN_PSEUDO = cfn.AWS_PSEUDO


def _cfn_version(version_key: str, date: str, with_conditions: bool) -> TemplateVersion:
    name = f"{version_key} {date}"
    table = {**_CFN_FUNCTIONS, **({"Fn::If": cfn.CfnIf} if with_conditions else {})}
    # Heat's CFN tables have no entry for these: each is read as a plain map key.
    plain = "so this is read as a plain map, as Heat reads it"
    unknown = {
        hot: f"'{hot}' is not a function in {name}, {plain}" + (f"; the function is {instead}" if instead in table else "")
        for hot, instead in _HOT_EQUIVALENTS.items()
    }
    unknown.update({aws: f"'{aws}' is not a function in {name} (Heat does not implement it), {plain}" for aws in _AWS_ONLY})
    if not with_conditions:
        unknown["Fn::If"] = f"'Fn::If' is not a function in {name} (it appears in AWSTemplateFormatVersion 2010-09-09), {plain}"
    later = f"needs AWSTemplateFormatVersion 2010-09-09 (HeatTemplateFormatVersion {date} has no conditions)"
    return TemplateVersion(
        key=date,
        date=date,
        functions=MappingProxyType(table),
        unknown_functions=MappingProxyType(unknown),
        sections=_CFN_SECTIONS + (("Conditions",) if with_conditions else ()),
        resource_keys=_CFN_RESOURCE_KEYS + (("Condition",) if with_conditions else ()),
        output_keys=_CFN_OUTPUT_KEYS + (("Condition",) if with_conditions else ()),
        condition_functions=MappingProxyType(dict(_CFN_CONDITION_FUNCTIONS)) if with_conditions else None,
        kind="cfn",
        version_key=version_key,
        keywords=CFN_KEYWORDS,
        pseudo_parameters=CFN_PSEUDO,
        key_hints=MappingProxyType({} if with_conditions else {"Condition": f"'Condition' {later}"}),
    )


CFN_VERSIONS: Mapping[str, TemplateVersion] = MappingProxyType(
    {
        version.name: version
        for version in (_cfn_version(AWS_VERSION_KEY, "2010-09-09", True), _cfn_version(HEAT_VERSION_KEY, "2012-12-12", False))
    }
)


def get_cfn(version_key: str, value: object) -> TemplateVersion | None:
    """The CFN version named by ``version_key: value``, or None."""
    return CFN_VERSIONS.get(f"{version_key}.{value}")


def cfn_dates(version_key: str) -> list[str]:
    """The dates ``version_key`` accepts (Heat: '"X" should be: 2010-09-09')."""
    return [version.date for version in CFN_VERSIONS.values() if version.version_key == version_key]


def find(name: str) -> TemplateVersion | None:
    """A version by Heat's name (``heat_template_version.2016-10-14``,
    ``AWSTemplateFormatVersion.2010-09-09``), or a HOT date or alias."""
    return CFN_VERSIONS.get(name) or get(name.removeprefix("heat_template_version."))


# -- introspection (Heat's template-version-list and template-function-list) ----------


def template_versions() -> list[dict[str, Any]]:
    """Every template version in Heat's order (by name, so the CFN formats come
    first): ``{"version": "heat_template_version.2016-10-14", "type": "hot", "aliases":
    ["heat_template_version.newton"]}``, ``{"version":
    "AWSTemplateFormatVersion.2010-09-09", "type": "cfn", "aliases": []}``."""
    listed = sorted([*CFN_VERSIONS.values(), *(VERSIONS[date] for date in HOT_VERSIONS)], key=lambda version: version.name)
    return [
        {
            "version": version.name,
            "type": version.kind,
            "aliases": [f"{version.version_key}.{alias}" for alias in version.aliases],
        }
        for version in listed
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


def _found(version: str) -> TemplateVersion:
    found = find(version)
    if found is None:
        raise KeyError(f"Template with version {version} not found")
    return found


def template_functions(version: str, with_condition_functions: bool = False) -> list[dict[str, str]]:
    """The functions of ``version`` (Heat's name, a HOT date or an alias) as
    ``{"functions": name, "description": text}``, removed ones left out, by name; with
    ``with_condition_functions``, the condition functions the list lacks follow and a
    name in both tables is described by its condition function (Heat's
    ``with_condition_func`` updates one table with the other: CFN's Ref becomes "A
    function for resolving parameter references."). Raises KeyError for an unknown
    version."""
    found = _found(version)
    conditions = found.condition_functions if with_condition_functions and found.condition_functions is not None else {}
    entries = _describe({**found.functions, **{name: cls for name, cls in conditions.items() if name in found.functions}})
    return entries + _describe({name: cls for name, cls in conditions.items() if name not in found.functions})


def condition_functions(version: str) -> list[dict[str, str]]:
    """The functions allowed in condition expressions of ``version`` (none where the
    version has no conditions), as ``template_functions`` describes them."""
    return _describe(_found(version).condition_functions or {})
