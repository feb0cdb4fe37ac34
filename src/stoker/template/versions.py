"""Template versions and their function tables.

Each HOT version names the functions it offers; a function added later is unknown in an
earlier version, and a removed one maps to a message that says what replaces it.
Issue 4 completes the tables; the shape (one immutable table per version) is fixed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from stoker.template.functions.access import GetAttr, GetParam, GetResource
from stoker.template.functions.base import Function
from stoker.template.functions.strings import ListJoin, ListJoinStrings, StrReplace

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


@dataclass(frozen=True)
class TemplateVersion:
    key: str
    date: str
    functions: Mapping[str, type[Function]]
    # name -> message, for functions this version does not have but a reader may try.
    unknown_functions: Mapping[str, str] = field(default_factory=dict)
    sections: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    def at_least(self, date: str) -> bool:
        return self.date >= date


_SECTIONS = ("heat_template_version", "description", "parameter_groups", "parameters", "resources", "outputs")


def _build() -> dict[str, TemplateVersion]:
    versions: dict[str, TemplateVersion] = {}
    all_names = {"get_param", "get_resource", "get_attr", "str_replace", "list_join"}
    for date in HOT_VERSIONS:
        table: dict[str, type[Function]] = {
            "get_param": GetParam,
            "get_resource": GetResource,
            "get_attr": GetAttr,
            "str_replace": StrReplace,
        }
        if date >= "2014-10-16":
            table["list_join"] = ListJoin if date >= "2015-10-15" else ListJoinStrings
        unknown = {
            name: f"The function {name} is not supported in heat_template_version {date}"
            for name in all_names - set(table)
        }
        sections = _SECTIONS + (("conditions",) if date >= "2016-10-14" else ())
        aliases = tuple(alias for alias, target in ALIASES.items() if target == date)
        version = TemplateVersion(
            key=date,
            date=date,
            functions=MappingProxyType(table),
            unknown_functions=MappingProxyType(unknown),
            sections=sections,
            aliases=aliases,
        )
        versions[date] = version
        for alias in aliases:
            versions[alias] = version
    return versions


VERSIONS: Mapping[str, TemplateVersion] = MappingProxyType(_build())


def get(key: object) -> TemplateVersion | None:
    return VERSIONS.get(str(key)) if key is not None else None
