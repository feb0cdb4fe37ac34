"""stoker.environment.capabilities: choosing among a registry list's candidate templates
by the environment's requires, with the full explanation when not exactly one fits; and
the introspection over a set of templates (find, summary)."""

from __future__ import annotations

import pytest

from stoker.engine.nested import child_environment
from stoker.environment import capabilities, environment
from stoker.environment.capabilities import CapabilityResolutionError
from stoker.environment.environment import Environment
from stoker.environment.merge import merge_environments
from stoker.environment.registry import ResourceRegistry
from stoker.resources import builtin_mapping
from stoker.template.errors import TemplateErrors


def node(tool: str | None, types: str | None = None, version: str = "2015-10-15") -> str:
    lines = [f"heat_template_version: {version}"]
    if tool or types:
        lines.append("capabilities:")
        if tool:
            lines.append(f"  deployment: {tool}")
        if types:
            lines.append(f"  resource_type: {types}")
    lines += ["resources:", "  config: {type: OS::Heat::None}"]
    return "\n".join(lines) + "\n"


FILES = {
    "puppet/controller.yaml": node("puppet", "OS::TripleO::Controller"),
    "docker/controller.yaml": node("docker", "OS::TripleO::Controller"),
    "puppet/compute.yaml": node("puppet", "[OS::TripleO::Compute]"),
    "any/post.yaml": node(None, "[OS::TripleO::ControllerPost, OS::TripleO::ComputePost]"),
    "script.sh": "#!/bin/sh\necho not a template\n",
}
CONTROLLERS = ["puppet/controller.yaml", "docker/controller.yaml"]


# -- resolution --------------------------------------------------------------------


def test_capabilities_resolve_chooses_the_one_candidate_that_satisfies_requires():
    resolution = capabilities.choose("OS::TripleO::Controller", CONTROLLERS, {"deployment": "docker"}, FILES.get)
    assert resolution.chosen == "docker/controller.yaml"
    assert [v.matched for v in resolution.verdicts] == [False, True]
    assert resolution.verdicts[0].reasons == ("deployment is puppet, not docker",)


def test_capabilities_resolve_with_no_match_names_type_requirements_and_every_candidate():
    with pytest.raises(CapabilityResolutionError) as caught:
        capabilities.choose("OS::TripleO::Controller", [*CONTROLLERS, "missing.yaml", "script.sh"], {"deployment": "ansible"}, FILES.get)
    message = caught.value.message
    assert "No candidate template for OS::TripleO::Controller satisfies requires deployment=ansible" in message
    assert "puppet/controller.yaml: does not match (deployment is puppet, not ansible)" in message
    assert "docker/controller.yaml: does not match (deployment is docker, not ansible)" in message
    assert "missing.yaml: does not match (it is not in the files map)" in message
    assert "script.sh: does not match (it is not a template)" in message
    assert caught.value.hint


def test_capabilities_resolve_with_several_matches_is_an_error_that_says_what_each_declares():
    with pytest.raises(CapabilityResolutionError) as caught:
        capabilities.choose("OS::TripleO::Controller", CONTROLLERS, {}, FILES.get)
    message = caught.value.message
    assert "2 candidate templates for OS::TripleO::Controller satisfy requires (none); exactly one must" in message
    assert "puppet/controller.yaml: matches (declares deployment=puppet)" in message
    assert "docker/controller.yaml: matches (declares deployment=docker)" in message


def test_capabilities_resolve_needs_the_resource_type_annotation_to_include_the_type():
    files = {**FILES, "puppet/other.yaml": node("puppet", "OS::TripleO::Compute"), "puppet/plain.yaml": node("puppet")}
    resolution = capabilities.resolve("OS::TripleO::Controller", ["puppet/other.yaml", "puppet/plain.yaml"], {"deployment": "puppet"}, files.get)
    assert resolution.chosen == "puppet/plain.yaml"  # no annotation: any type
    assert resolution.verdicts[0].reasons == ("its resource_type is OS::TripleO::Compute, not OS::TripleO::Controller",)


def test_capabilities_resolve_sets_aside_requirements_no_candidate_declares():
    resolution = capabilities.resolve("OS::TripleO::Controller", CONTROLLERS, {"deployment": "puppet", "nic": "bond"}, FILES.get)
    assert resolution.chosen == "puppet/controller.yaml"
    assert resolution.ignored == ("nic",)
    assert "not considered for this type (no candidate declares it): nic" in resolution.explain()


def test_capabilities_resolve_any_of_requirement_and_malformed_candidate():
    files = {**FILES, "bad.yaml": "heat_template_version: 2015-10-15\ncapabilities: [x]\n", "old.yaml": node("puppet", version="2015-04-30")}
    resolution = capabilities.resolve("OS::TripleO::Controller", [*CONTROLLERS, "bad.yaml", "old.yaml"], {"deployment": ["docker", "chef"]}, files.get)
    assert resolution.chosen == "docker/controller.yaml"
    reasons = {v.template: v.reasons for v in resolution.verdicts}
    assert "must be a map" in reasons["bad.yaml"][0]
    assert "heat_template_version 2015-04-30 has none" in reasons["old.yaml"][0]


# -- environments ------------------------------------------------------------------


def test_capabilities_environment_accepts_requires_and_registry_lists():
    parsed = environment.parse(
        "requires: {deployment: puppet}\n"
        "resource_registry:\n"
        "  OS::TripleO::Controller: [puppet/controller.yaml, docker/controller.yaml]\n"
        "  resources:\n"
        "    web:\n"
        "      OS::TripleO::Compute: [puppet/compute.yaml]\n",
        "env.yaml",
    )
    assert parsed.requires == {"deployment": "puppet"}
    assert parsed.resource_registry["OS::TripleO::Controller"] == CONTROLLERS
    assert Environment.from_dict(parsed.to_dict()) == parsed


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        ("resource_registry:\n  OS::A: []\n", "resource_registry.OS::A", "at least one"),
        ("resource_registry:\n  OS::A: [a.yaml, OS::Heat::None]\n", "resource_registry.OS::A[1]", "template file name"),
        ("resource_registry:\n  resources:\n    web:\n      OS::A: [a.yaml, 3]\n", "resource_registry.resources.web.OS::A[1]", "template file name"),
        ("requires: [puppet]\n", "requires", "must be a map"),
        ("requires:\n  deployment: {a: b}\n", "requires.deployment", "a value or a list of values"),
    ],
)
def test_capabilities_environment_refuses_malformed_lists_and_requires(text, path, words):
    with pytest.raises(TemplateErrors) as caught:
        environment.parse(text, "env.yaml")
    [error] = caught.value.errors
    assert error.path == path and words in error.message
    assert error.location is not None and error.location.file == "env.yaml"


def test_capabilities_environment_without_requires_is_stored_as_before():
    assert "requires" not in environment.parse("parameters: {a: 1}\n").to_dict()


def test_capabilities_several_environment_files_merge_requires_later_wins():
    first = environment.parse("requires: {deployment: puppet, nic: bond}\nresource_registry:\n  OS::A: [a.yaml, b.yaml]\n")
    second = environment.parse("requires: {deployment: docker}\n")
    merged = merge_environments([("1.yaml", first), ("2.yaml", second)])
    assert merged.requires == {"deployment": "docker", "nic": "bond"}
    assert merged.resource_registry == {"OS::A": ["a.yaml", "b.yaml"]}
    assert first.merge(second).requires == {"deployment": "docker", "nic": "bond"}


def test_capabilities_nested_stacks_inherit_requires_with_the_registry():
    parent = Environment(resource_registry={"OS::A": ["a.yaml", "b.yaml"]}, requires={"deployment": "docker"}, parameters={"x": 1})
    child = child_environment(parent, "web")
    assert child.requires == {"deployment": "docker"} and child.resource_registry["OS::A"] == ["a.yaml", "b.yaml"]


# -- the registry ------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry() -> ResourceRegistry:
    registry = ResourceRegistry()
    registry.register_mapping(builtin_mapping(), "builtin")
    return registry


def test_capabilities_registry_resolves_a_top_level_list(registry):
    env = Environment(resource_registry={"OS::TripleO::Controller": CONTROLLERS}, requires={"deployment": "docker"})
    cls = registry.get_class("OS::TripleO::Controller", env.type_aliases(), FILES, "controller")
    assert cls.template_name == "docker/controller.yaml"


def test_capabilities_registry_resolves_a_per_resource_list_before_the_type_entry(registry):
    env = Environment(
        resource_registry={"OS::TripleO::Controller": "puppet/controller.yaml", "resources": {"special": {"OS::TripleO::Controller": CONTROLLERS}}},
        requires={"deployment": "docker"},
    )
    aliases = env.type_aliases()
    assert registry.get_class("OS::TripleO::Controller", aliases, FILES, "special").template_name == "docker/controller.yaml"
    assert registry.get_class("OS::TripleO::Controller", aliases, FILES, "other").template_name == "puppet/controller.yaml"


def test_capabilities_registry_without_lists_is_unchanged(registry):
    env = Environment(resource_registry={"OS::TripleO::Controller": "puppet/controller.yaml", "My::None": "OS::Heat::None"})
    assert registry.get_class("OS::TripleO::Controller", env.type_aliases(), FILES).template_name == "puppet/controller.yaml"
    assert registry.get_class("My::None", env.type_aliases(), FILES).__name__ == builtin_mapping()["OS::Heat::None"].__name__


def test_capabilities_registry_ambiguous_list_raises_a_validation_error(registry):
    env = Environment(resource_registry={"OS::TripleO::Controller": CONTROLLERS})
    with pytest.raises(CapabilityResolutionError):
        registry.get_class("OS::TripleO::Controller", env.type_aliases(), FILES)


def test_capabilities_global_environment_lists_read_the_global_templates():
    registry = ResourceRegistry()
    registry.register_mapping(builtin_mapping(), "builtin")
    registry.environment = {"OS::TripleO::Controller": CONTROLLERS}
    registry.environment_files = dict(FILES)
    env = Environment(requires={"deployment": "puppet"})
    assert registry.get_class("OS::TripleO::Controller", env.type_aliases(), {}).template_name == "puppet/controller.yaml"


def test_capabilities_update_changes_show_which_resources_change_implementation():
    registry = {"OS::TripleO::Controller": CONTROLLERS}
    uses = [("controller", "OS::TripleO::Controller"), ("other", "OS::Heat::None")]
    before = capabilities.resolutions(registry, {"deployment": "puppet"}, FILES, uses)
    after = capabilities.resolutions(registry, {"deployment": "docker"}, FILES, uses)
    assert capabilities.changes(before, after) == [
        {"resource_name": "controller", "resource_type": "OS::TripleO::Controller", "from": "puppet/controller.yaml", "to": "docker/controller.yaml"}
    ]
    assert capabilities.changes(before, before) == []


# -- introspection -----------------------------------------------------------------


def test_capabilities_find_matches_every_requirement():
    matched, skipped = capabilities.find({**FILES, "bad.yaml": "heat_template_version: 2015-10-15\ncapabilities: 3\n"}, [("resource_type", "OS::TripleO::Controller")])
    assert matched == ["docker/controller.yaml", "puppet/controller.yaml"]
    assert [entry["template"] for entry in skipped] == ["bad.yaml"]
    matched, _ = capabilities.find(FILES, [("resource_type", "OS::TripleO::Controller"), ("deployment", "puppet")])
    assert matched == ["puppet/controller.yaml"]
    matched, _ = capabilities.find(FILES, [("resource_type", "OS::TripleO::ControllerPost"), ("resource_type", "OS::TripleO::ComputePost")])
    assert matched == ["any/post.yaml"]


def test_capabilities_summary_gives_both_forms():
    result = capabilities.summary(FILES, CONTROLLERS)
    assert result == {
        "capabilities": {"deployment": ["puppet", "docker"]},
        "resource_types": {"OS::TripleO::Controller": ["puppet/controller.yaml", "docker/controller.yaml"]},
    }


def test_capabilities_summary_with_an_environment_counts_its_candidates_and_resolves():
    env = Environment(resource_registry={"OS::TripleO::Controller": CONTROLLERS, "OS::TripleO::Compute": "puppet/compute.yaml"}, requires={"deployment": "puppet"})
    result = capabilities.describe_templates(FILES, [], env)
    assert result["resource_types"] == {
        "OS::TripleO::Controller": ["puppet/controller.yaml", "docker/controller.yaml"],
        "OS::TripleO::Compute": ["puppet/compute.yaml"],
    }
    assert result["requires"] == {"deployment": "puppet"}
    [resolution] = result["resolutions"]
    assert resolution["chosen"] == "puppet/controller.yaml"
    assert resolution["candidates"][1] == {"template": "docker/controller.yaml", "matched": False, "reasons": ["deployment is docker, not puppet"]}


@pytest.mark.parametrize(
    "text",
    [
        node("puppet", "OS::A"),
        "heat_template_version: 2015-10-15\ncapabilities:\n  # a comment\n  deployment: puppet\n\n  release: 2024-01-01\nresources: {}\n",
        '{"heat_template_version": "2015-10-15", "capabilities": {"deployment": "puppet"}}',
        "heat_template_version: 2015-10-15\nbase: &tool puppet\ncapabilities:\n  deployment: *tool\n",
        "---\nheat_template_version: 2015-10-15\ncapabilities: {deployment: [puppet, docker]}\n",
        "heat_template_version: 2015-10-15\ncapabilities: !!str puppet\n",
        "capabilities: {deployment: puppet}\nheat_template_version: 2016-04-08\n",
        "heat_template_version: 2015-04-30\ncapabilities: {deployment: puppet}\n",
    ],
)
def test_capabilities_quick_read_agrees_with_the_whole_document(text):
    from stoker.template import capabilities as template_capabilities
    from stoker.template import loader

    capabilities._DECLARED.clear()
    quick = capabilities.declared(text, "t.yaml")
    whole, problems = template_capabilities.read(loader.parse(text, "t.yaml").data)
    assert quick.capabilities == (None if problems else whole)
    assert (quick.problem is not None) == bool(problems)
