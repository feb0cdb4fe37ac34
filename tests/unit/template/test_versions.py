"""stoker.template.versions: every version's function tables, the messages for
functions a version lacks, and the introspection data."""

from __future__ import annotations

import pytest

from stoker.template import versions

# The first version with each function and, where it went, the version that removed it
# (Heat's heat/engine/hot/template.py).
FIRST = {
    "get_param": "2013-05-23",
    "get_resource": "2013-05-23",
    "get_attr": "2013-05-23",
    "str_replace": "2013-05-23",
    "list_join": "2013-05-23",
    "get_file": "2013-05-23",
    "resource_facade": "2013-05-23",
    "digest": "2015-04-30",
    "repeat": "2015-04-30",
    "str_split": "2015-10-15",
    "map_merge": "2016-04-08",
    "yaql": "2016-10-14",
    "map_replace": "2016-10-14",
    "if": "2016-10-14",
    "filter": "2017-02-24",
    "str_replace_strict": "2017-02-24",
    "make_url": "2017-09-01",
    "list_concat": "2017-09-01",
    "list_concat_unique": "2017-09-01",
    "str_replace_vstrict": "2017-09-01",
    "contains": "2017-09-01",
}
CFN = {
    "Ref": "2014-10-16",
    "Fn::GetAZs": "2014-10-16",
    "Fn::Join": "2014-10-16",
    "Fn::Split": "2014-10-16",
    "Fn::Replace": "2014-10-16",
    "Fn::Base64": "2014-10-16",
    "Fn::MemberListToMap": "2014-10-16",
    "Fn::ResourceFacade": "2014-10-16",
    "Fn::Select": "2015-10-15",
}
CONDITIONS_FIRST = {
    "get_param": "2016-10-14",
    "equals": "2016-10-14",
    "not": "2016-10-14",
    "and": "2016-10-14",
    "or": "2016-10-14",
    "yaql": "2017-09-01",
    "contains": "2017-09-01",
}


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_version_function_table_matches_heat(version):
    expected = {name for name, first in FIRST.items() if first <= version}
    expected |= {name for name, removed in CFN.items() if removed > version}

    assert set(versions.get(version).functions) == expected


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_version_condition_table_matches_heat(version):
    table = versions.get(version).condition_functions
    expected = {name for name, first in CONDITIONS_FIRST.items() if first <= version}

    assert (set(table) if table is not None else set()) == expected
    assert versions.get(version).has_conditions is (version >= "2016-10-14")


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_every_later_function_says_where_it_appears(version):
    unknown = versions.get(version).unknown_functions

    for name, first in FIRST.items():
        if first > version:
            assert unknown[name] == (
                f"'{name}' is not a function in heat_template_version {version} (it appears in "
                f"heat_template_version {first}), so this is read as a plain map, as Heat reads it"
            )


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_every_removed_function_says_when_and_what_replaces_it(version):
    # Heat's hot_funcs.Removed: an error, unlike a function of a later version.
    unknown = versions.get(version).removed_functions

    for name, removed in CFN.items():
        if removed <= version:
            assert unknown[name].startswith(
                f"The function {name} is not supported in heat_template_version {version}: it was removed in {removed}; "
            )
        else:
            assert name not in unknown


@pytest.mark.parametrize(("alias", "date"), list(versions.ALIASES.items()))
def test_aliases_share_the_table(alias, date):
    assert versions.get(alias) is versions.get(date)
    assert alias in versions.get(date).aliases


def test_tables_are_read_only():
    version = versions.get("2021-04-16")

    with pytest.raises(TypeError):
        version.functions["evil"] = object  # type: ignore[index]
    with pytest.raises(TypeError):
        version.condition_functions["evil"] = object  # type: ignore[index]


def test_if_is_nullable_only_in_2021_04_16():
    from stoker.template.functions.conditions import If, IfNullable

    assert versions.get("2018-08-31").functions["if"] is If
    assert versions.get("2021-04-16").functions["if"] is IfNullable


# -- introspection -----------------------------------------------------------------


def test_template_versions_lists_each_hot_version_with_its_aliases():
    listed = [entry for entry in versions.template_versions() if entry["type"] == "hot"]

    assert [entry["version"] for entry in listed] == [f"heat_template_version.{date}" for date in versions.HOT_VERSIONS]
    newton = next(entry for entry in listed if entry["version"] == "heat_template_version.2016-10-14")
    assert newton["aliases"] == ["heat_template_version.newton"]
    assert listed[0]["aliases"] == []


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_template_functions_describe_the_table_without_removed_ones(version):
    listed = versions.template_functions(version)

    assert [entry["functions"] for entry in listed] == sorted(versions.get(version).functions)
    assert all(entry["description"] for entry in listed)
    assert not any(entry["functions"] in versions.get(version).unknown_functions for entry in listed)


def test_template_functions_descriptions_are_heats():
    listed = {entry["functions"]: entry["description"] for entry in versions.template_functions("2021-04-16")}

    assert listed["get_param"] == "A function for resolving parameter references."
    assert listed["map_merge"] == "A function for merging maps."
    assert listed["if"] == "A function to return corresponding value based on condition evaluation."


def test_template_functions_with_condition_functions_adds_them_without_changing_the_table():
    table_before = dict(versions.get("2017-09-01").functions)

    listed = versions.template_functions("heat_template_version.pike", with_condition_functions=True)

    names = [entry["functions"] for entry in listed]
    assert names[-4:] == ["and", "equals", "not", "or"]
    assert names.count("get_param") == 1 and names.count("yaql") == 1
    assert dict(versions.get("2017-09-01").functions) == table_before
    assert "equals" not in versions.get("2017-09-01").functions


def test_condition_functions_are_listed_separately():
    assert [entry["functions"] for entry in versions.condition_functions("2016-10-14")] == [
        "and",
        "equals",
        "get_param",
        "not",
        "or",
    ]
    assert versions.condition_functions("2016-04-08") == []


def test_template_functions_of_an_unknown_version():
    with pytest.raises(KeyError, match="Template with version 2099-01-01 not found"):
        versions.template_functions("2099-01-01")
