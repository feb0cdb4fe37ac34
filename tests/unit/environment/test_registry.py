"""How a type name resolves through a stack's resource_registry and the global one, and
how registries load: each case follows Heat's heat/engine/environment.py
(ResourceRegistry.iterable_by, get_resource_info, _load_registry, _register_info)."""

from __future__ import annotations

import pytest

from stoker.environment.directory import load_environment_dir
from stoker.environment.environment import load_registry, parse, restricted_actions
from stoker.environment.registry import (
    ResourceRegistry,
    TemplateNotFoundError,
    UnknownResourceTypeError,
)
from stoker.resources import builtin_mapping
from stoker.settings import Settings
from stoker.template.errors import TemplateErrors

NESTED = "heat_template_version: 2021-04-16\nresources: {}\n"


@pytest.fixture(scope="module")
def plugins() -> dict:
    registry = ResourceRegistry()
    registry.register_mapping(builtin_mapping(), "stoker.resources")
    return dict(registry.types)


@pytest.fixture
def registry(plugins) -> ResourceRegistry:
    return ResourceRegistry(types=dict(plugins))


def test_registry_glob_maps_a_prefix_to_another(registry, plugins):
    user = {"OS::Networking::*": "OS::Neutron::*"}
    assert registry.get_class("OS::Networking::Net", user) is plugins["OS::Neutron::Net"]
    assert registry.get_class("OS::Networking::Port", user) is plugins["OS::Neutron::Port"]


def test_registry_glob_maps_many_to_one(registry, plugins):
    user = {"OS::*": "OS::Heat::None"}
    assert registry.get_class("OS::Nova::Server", user) is plugins["OS::Heat::None"]
    # The glob does not match its own target (GlobResourceInfo.matches).
    assert registry.get_class("OS::Heat::None", user) is plugins["OS::Heat::None"]


def test_registry_glob_leading_nowhere_falls_back_to_the_plugin(registry, plugins):
    # A mapping whose target is unknown is skipped; the global plugin answers.
    user = {"OS::Heat::*": "My::Missing::*"}
    assert registry.get_class("OS::Heat::Value", user) is plugins["OS::Heat::Value"]


def test_registry_unknown_type_is_named_as_the_template_names_it(registry):
    with pytest.raises(UnknownResourceTypeError) as raised:
        registry.get_class("My::Thing", {"My::Thing": "My::Other"})
    # ...and the type it is mapped to, which is the one missing.
    assert str(raised.value) == "The Resource Type (My::Thing) could not be found: the environment maps it to My::Other, which no plugin or template provides."


def test_registry_mapping_loop_is_an_unknown_type(registry):
    with pytest.raises(UnknownResourceTypeError):
        registry.get_class("My::A", {"My::A": "My::B", "My::B": "My::A"})


def test_registry_per_resource_mapping_applies_to_that_resource_only(registry, plugins):
    user = {"resources": {"special": {"OS::Heat::Value": "OS::Heat::None"}}}
    assert registry.get_class("OS::Heat::Value", user, resource_name="special") is plugins["OS::Heat::None"]
    assert registry.get_class("OS::Heat::Value", user, resource_name="other") is plugins["OS::Heat::Value"]


def test_registry_per_resource_mapping_is_above_the_general_one(registry, plugins):
    # A longer path sorts first (ResourceInfo.__lt__).
    user = {"OS::Heat::Value": "OS::Heat::RandomString", "resources": {"special": {"OS::Heat::Value": "OS::Heat::None"}}}
    assert registry.get_class("OS::Heat::Value", user, resource_name="special") is plugins["OS::Heat::None"]
    assert registry.get_class("OS::Heat::Value", user, resource_name="plain") is plugins["OS::Heat::RandomString"]


def test_registry_per_resource_template(registry):
    user = {"resources": {"special": {"OS::Heat::Value": "special.yaml"}}}
    cls = registry.get_class("OS::Heat::Value", user, {"special.yaml": NESTED}, resource_name="special")
    assert cls.template_name == "special.yaml"
    with pytest.raises(TemplateNotFoundError):
        registry.get_class("OS::Heat::Value", user, {}, resource_name="special")


def test_registry_user_entries_are_above_global_ones(registry, plugins):
    registry.environment = {"My::Thing": "OS::Heat::Value"}
    assert registry.get_class("My::Thing") is plugins["OS::Heat::Value"]
    assert registry.get_class("My::Thing", {"My::Thing": "OS::Heat::None"}) is plugins["OS::Heat::None"]


def test_registry_global_mapping_replaces_the_plugin_of_that_name(registry, plugins):
    registry.environment = {"OS::Heat::Value": "OS::Heat::None"}
    assert registry.get_class("OS::Heat::Value") is plugins["OS::Heat::None"]


def test_load_registry_null_removes_a_mapping():
    loaded = load_registry({"My::A": "a.yaml", "My::B": "b.yaml"}, {"My::A": None})
    assert loaded == {"My::B": "b.yaml"}


def test_load_registry_null_glob_removes_every_mapping_under_the_prefix():
    before = {"OS::Networking::Net": "x.yaml", "OS::Networking::Port": "y.yaml", "OS::Other": "z.yaml"}
    assert load_registry(before, {"OS::Networking::*": None}) == {"OS::Other": "z.yaml"}


def test_load_registry_resources_load_entry_by_entry():
    before = {"resources": {"web": {"hooks": "pre-create", "OS::Heat::Value": "v.yaml"}}}
    loaded = load_registry(before, {"resources": {"web": {"hooks": ["pre-update"]}, "db": {"restricted_actions": "replace"}}})
    assert loaded == {"resources": {"web": {"hooks": ["pre-update"], "OS::Heat::Value": "v.yaml"}, "db": {"restricted_actions": "replace"}}}
    assert before["resources"]["web"]["hooks"] == "pre-create"  # the original is not changed


def test_environment_invalid_hook_is_refused():
    with pytest.raises(TemplateErrors) as raised:
        parse("resource_registry:\n  resources:\n    web:\n      hooks: [pre-crate]\n", "env.yaml")
    (error,) = raised.value.errors
    assert error.message == (
        "Invalid hook type \"['pre-crate']\" for resource breakpoint, acceptable hook types are: "
        "('pre-create', 'pre-update', 'pre-delete', 'post-create', 'post-update', 'post-delete')"
    )
    assert error.path == "resource_registry.resources.web.hooks"


def test_environment_invalid_restricted_action_is_refused():
    with pytest.raises(TemplateErrors) as raised:
        parse("resource_registry:\n  resources:\n    web:\n      restricted_actions: delete\n", "env.yaml")
    assert raised.value.errors[0].message == (
        'Invalid restricted_action type "delete" for resource, acceptable restricted_action types are: ' "('update', 'replace')"
    )


@pytest.mark.parametrize("section", ["parameters", "parameter_defaults", "resource_registry", "encrypted_param_names"])
def test_environment_empty_section_is_refused_with_its_line(section):
    with pytest.raises(TemplateErrors) as raised:
        parse(f"parameter_defaults:\n  size: 1\n{section}:\n", "env.yaml") if section != "parameter_defaults" else parse(
            "parameters:\n  size: 1\nparameter_defaults:\n", "env.yaml"
        )
    (error,) = raised.value.errors
    assert error.message == f'environment has empty section "{section}"'
    assert error.path == section
    assert error.location is not None and error.location.line == 3
    assert "remove it" in error.hint


def test_environment_null_mapping_is_read():
    assert parse("resource_registry:\n  OS::Networking::*: null\n").resource_registry == {"OS::Networking::*": None}


def test_environment_event_sinks_are_refused_by_name():
    with pytest.raises(TemplateErrors) as raised:
        parse("event_sinks:\n  - type: zaqar-queue\n    target: q\n", "env.yaml")
    (error,) = raised.value.errors
    assert error.path == "event_sinks" and "zaqar-queue" in error.message and "not supported" in error.message
    assert "stoker event list" in error.hint
    assert parse("event_sinks: []\n").event_sinks == []


def test_restricted_actions_match_name_patterns():
    registry = {"resources": {"db_*": {"restricted_actions": "replace"}, "db_main": {"restricted_actions": ["update"]}, "web": {"hooks": "pre-create"}}}
    assert restricted_actions(registry, "db_main") == {"replace", "update"}
    assert restricted_actions(registry, "db_other") == {"replace"}
    assert restricted_actions(registry, "web") == set()


def test_environment_dir_files_load_in_sorted_order(tmp_path, registry, plugins):
    (tmp_path / "20-late.yaml").write_text("resource_registry:\n  My::Thing: OS::Heat::None\n")
    (tmp_path / "10-early.yaml").write_text("resource_registry:\n  My::Thing: OS::Heat::Value\n  My::Other: OS::Heat::Value\n")
    (tmp_path / ".hidden.yaml").write_text("resource_registry:\n  My::Other: OS::Heat::None\n")
    load_environment_dir(registry, tmp_path)
    assert registry.get_class("My::Thing") is plugins["OS::Heat::None"]
    assert registry.get_class("My::Other") is plugins["OS::Heat::Value"]
    assert registry.problems == []


def test_environment_dir_null_removes_plugin_types(tmp_path, registry):
    (tmp_path / "disable.yaml").write_text("resource_registry:\n  OS::Neutron::*: null\n  OS::Heat::Value: null\n")
    load_environment_dir(registry, tmp_path)
    assert not any(name.startswith("OS::Neutron::") for name in registry.types)
    with pytest.raises(UnknownResourceTypeError):
        registry.get_class("OS::Heat::Value")
    assert "OS::Heat::None" in registry.types


def test_environment_dir_bad_file_is_reported_and_skipped(tmp_path, registry, plugins):
    (tmp_path / "a-bad.yaml").write_text("resource_registry: [not, a, map]\n")
    (tmp_path / "b-good.yaml").write_text("resource_registry:\n  My::Thing: OS::Heat::None\n")
    load_environment_dir(registry, tmp_path)
    assert registry.get_class("My::Thing") is plugins["OS::Heat::None"]
    assert len(registry.problems) == 1 and "a-bad.yaml" in registry.problems[0]


def test_environment_dir_templates_are_read_from_the_directory(tmp_path, registry):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "thing.yaml").write_text(NESTED)
    (tmp_path / "env.yaml").write_text("resource_registry:\n  My::Thing: templates/thing.yaml\n")
    load_environment_dir(registry, tmp_path)
    assert registry.get_class("My::Thing").template_name == "templates/thing.yaml"
    # A user environment's template must come in the request's files.
    with pytest.raises(TemplateNotFoundError):
        registry.get_class("My::Mine", {"My::Mine": "mine.yaml"})


def test_environment_dir_setting_is_read_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("STOKER_ENVIRONMENT_DIR", str(tmp_path))
    assert Settings.from_env().environment_dir == str(tmp_path)
    monkeypatch.delenv("STOKER_ENVIRONMENT_DIR")
    assert Settings.from_env().environment_dir is None
