"""stoker.template.capabilities: the capabilities section of HOT (from 2015-10-15), read
and checked with its places, and requirements matched against it."""

from __future__ import annotations

import pytest

from stoker.template import capabilities, versions
from stoker.template.capabilities import Capabilities
from stoker.template.errors import TemplateErrors
from stoker.template.hot import Template


def load(text: str) -> Template:
    return Template.load(text, "t.yaml")


def test_capabilities_section_accepted_from_2015_10_15():
    for date in ("2015-10-15", "2016-10-14", "2021-04-16", "wallaby"):
        template = load(f"heat_template_version: {date}\ncapabilities:\n  deployment: puppet\n  resource_type: [OS::A, OS::B]\n")
        assert template.data["capabilities"]["deployment"] == "puppet"


def test_capabilities_section_refused_before_2015_10_15_with_the_version_it_needs():
    with pytest.raises(TemplateErrors) as caught:
        load("heat_template_version: 2015-04-30\ncapabilities:\n  deployment: puppet\n")
    [error] = caught.value.errors
    assert error.path == "capabilities"
    assert "needs heat_template_version 2015-10-15 or later" in error.hint
    assert error.location is not None and error.location.file == "t.yaml"


def test_capabilities_section_refused_in_cfn_templates():
    with pytest.raises(TemplateErrors) as caught:
        load("AWSTemplateFormatVersion: 2010-09-09\ncapabilities: {deployment: puppet}\nResources: {}\n")
    assert "HOT" in caught.value.errors[0].hint


def test_capabilities_section_versions_agree_with_since():
    for date in versions.HOT_VERSIONS:
        assert ("capabilities" in versions.get(date).sections) == (date >= capabilities.SINCE), date


@pytest.mark.parametrize(
    ("section", "path", "words"),
    [
        ("[puppet]", "capabilities", "must be a map"),
        ("puppet", "capabilities", "must be a map"),
        ("{resource_type: 3}", "capabilities.resource_type", "type name or a list"),
        ("{resource_type: {a: b}}", "capabilities.resource_type", "not a map"),
        ("{resource_type: [OS::A, [x]]}", "capabilities.resource_type[1]", "not a list"),
        ("{resource_type: []}", "capabilities.resource_type", "at least one"),
        ("{resource_type: ''}", "capabilities.resource_type", "empty text"),
    ],
)
def test_capabilities_malformed_section_is_an_error_with_its_place(section, path, words):
    with pytest.raises(TemplateErrors) as caught:
        load(f"heat_template_version: 2016-04-08\ncapabilities: {section}\n")
    [error] = caught.value.errors
    assert error.path == path
    assert words in error.message
    assert error.location is not None and error.location.line == 2


def test_capabilities_tags_are_not_validated_so_templates_stay_portable():
    template = load("heat_template_version: 2015-10-15\ncapabilities:\n  deployment: puppet\n  anything: {nested: [1, 2]}\n  flag: true\n  count: 2\n")
    assert template.data["capabilities"]["flag"] is True


def test_capabilities_empty_section_is_accepted():
    load("heat_template_version: 2015-10-15\ncapabilities:\n")


def test_capabilities_match_scalars_lists_and_any_of():
    declared = Capabilities.from_section({"deployment": ["puppet", "ansible"], "flag": True, "count": 2, "resource_type": "OS::A"})
    assert declared.unmet({"deployment": "puppet"}) == []
    assert declared.unmet({"deployment": ["docker", "ansible"]}) == []
    assert declared.unmet({"flag": "true", "count": "2"}) == []
    assert declared.unmet({"deployment": "docker"}) == ["deployment is puppet and ansible, not docker"]
    assert declared.unmet({"network": "bond"}) == ["declares no network"]
    assert declared.resource_types == ("OS::A",)
    assert declared.implements("OS::A") and not declared.implements("OS::B")
    assert Capabilities.from_section({"deployment": "x"}).implements("OS::Anything")


def test_capabilities_read_from_data_reports_problems_and_versions():
    found, problems = capabilities.read({"heat_template_version": "2015-10-15", "capabilities": {"deployment": "puppet"}})
    assert found.values == {"deployment": ("puppet",)} and problems == []
    assert capabilities.read({"heat_template_version": "2015-10-15"}) == (None, [])
    _, problems = capabilities.read({"heat_template_version": "2014-10-16", "capabilities": {}})
    assert "2014-10-16" in problems[0].message
    _, problems = capabilities.read({"heat_template_version": "2015-10-15", "capabilities": {"resource_type": 1}})
    assert problems[0].path == "capabilities.resource_type"
