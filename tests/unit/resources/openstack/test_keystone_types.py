"""The Keystone types without a cloud: Heat's names, support statuses, schemas (defaults,
what updates in place and what replaces), the role-assignment checks, and the requests
built from properties, names resolved to ids by Heat's translation rules. A stand-in
for the ``keystone`` client plugin answers the finders only (``id-<value>``);
tests/cloud/test_keystone_types.py drives the real Keystone."""

from __future__ import annotations

import pytest

from stoker.resources.openstack import constraint_mapping, resource_mapping
from stoker.resources.openstack.keystone.client_plugin import KeystoneServiceNameConflict
from stoker.resources.openstack.keystone.project import KeystoneProject
from stoker.resources.openstack.keystone.region import KeystoneRegion
from stoker.resources.openstack.keystone.role_assignments import UserRoleAssignment
from stoker.resources.openstack.keystone.user import KeystoneUser
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.testing import PluginHarness

KEYSTONE_CONSTRAINTS = ("project", "domain", "role", "user", "group", "service", "region")
ANY_NAME = {
    f"keystone.{name}": (lambda value: isinstance(value, str) and bool(value))
    for name in KEYSTONE_CONSTRAINTS
}


class Finders:
    """The finders the translation rules name; each answers ``id-<value>``."""

    def __getattr__(self, name: str):
        if name.startswith("get_") and name.endswith("_id"):
            return lambda value: f"id-{value}"
        raise AttributeError(name)


def harness(plugin, **properties) -> PluginHarness:
    return PluginHarness(
        plugin,
        properties,
        name="made",
        stack_name="web",
        constraints=ANY_NAME,
        clients={"keystone": Finders()},
    )


def test_keystone_types_and_constraints_are_registered_under_heat_names():
    mapping = resource_mapping()
    types = {name: cls for name, cls in mapping.items() if name.startswith("OS::Keystone::")}
    assert set(types) == {
        f"OS::Keystone::{name}"
        for name in (
            "Project",
            "Domain",
            "Role",
            "User",
            "Group",
            "GroupRoleAssignment",
            "UserRoleAssignment",
            "Region",
            "Service",
            "Endpoint",
        )
    }
    assert {cls.support_status.version for cls in types.values()} <= {
        "2015.1",
        "5.0.0",
        "6.0.0",
        "8.0.0",
    }
    assert all(
        cls.support_status.message == "Supported versions: keystone v3" for cls in types.values()
    )
    assert {f"keystone.{name}" for name in KEYSTONE_CONSTRAINTS} <= set(constraint_mapping())


@pytest.mark.parametrize(
    ("type_name", "replaced_by"),
    [
        ("OS::Keystone::Project", {"parent"}),
        ("OS::Keystone::Role", {"domain"}),
        ("OS::Keystone::Region", {"id"}),
        ("OS::Keystone::Domain", set()),
        ("OS::Keystone::User", set()),
        ("OS::Keystone::Group", set()),
        ("OS::Keystone::Service", set()),
        ("OS::Keystone::Endpoint", set()),
        ("OS::Keystone::UserRoleAssignment", set()),
        ("OS::Keystone::GroupRoleAssignment", set()),
    ],
)
def test_keystone_types_replace_only_where_heat_does(type_name, replaced_by):
    schema = resource_mapping()[type_name].properties_schema
    assert {name for name, item in schema.items() if not item.update_allowed} == replaced_by


def test_keystone_project_defaults_and_create_arguments_resolve_names():
    project = harness(KeystoneProject, parent="top", tags=["x"]).resource

    arguments = project.create_arguments()

    assert arguments["name"] == project.physical_resource_name()
    # The default ("default") is the default domain's id; a name given is resolved.
    assert (arguments["domain_id"], arguments["parent_id"]) == ("default", "id-top")
    assert (
        harness(KeystoneProject, domain="dev").resource.create_arguments()["domain_id"] == "id-dev"
    )
    assert (arguments["description"], arguments["is_enabled"], arguments["tags"]) == (
        "",
        True,
        ["x"],
    )


def test_keystone_user_create_arguments_carry_the_password_and_resolved_project():
    user = harness(
        KeystoneUser, name="ann", password="s3cret", default_project="proj", groups=["g1"]
    ).resource

    assert user.create_arguments() == {
        "name": "ann", "domain_id": "default", "description": "", "is_enabled": True, "password": "s3cret",
        "default_project_id": "id-proj",
    }  # fmt: skip
    assert user.properties["groups"] == ["id-g1"]


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        (
            [{"role": "admin", "project": "p", "domain": "d"}],
            "Cannot define the following properties at the same time: project, domain.",
        ),
        ([{"role": "admin"}], "Either project or domain must be specified for role admin"),
    ],
)
def test_keystone_roles_need_a_project_or_a_domain_not_both(roles, message):
    for plugin, properties in ((KeystoneUser, {}), (UserRoleAssignment, {"user": "ann"})):
        with pytest.raises(ValidationError) as raised:
            harness(plugin, roles=roles, **properties).validate()
        assert raised.value.message == message
        assert raised.value.path == "resources.made.properties.roles[0]"


def test_keystone_region_id_is_url_encoded_as_heat_does():
    region = harness(KeystoneRegion, id="east 1/a", description="d").resource

    assert region.create_body() == {"id": "east%201/a", "description": "d", "enabled": True}


def test_keystone_assignment_reference_is_its_name_as_in_heat():
    assignment = harness(
        UserRoleAssignment, user="ann", roles=[{"role": "r", "domain": "default"}]
    ).resource
    assignment.resource_id_set("user-id")

    assert assignment.get_reference_id() == "made"


def test_keystone_service_name_conflict_is_heats_message():
    assert KeystoneServiceNameConflict("web").message == (
        "Keystone has more than one service with same name web. Please use service id instead of name"
    )
