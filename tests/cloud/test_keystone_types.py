"""Heat's Keystone types against the real Keystone of the test cloud: OS::Keystone::Domain,
Project, Role, User (with groups and roles), Group, UserRoleAssignment,
GroupRoleAssignment, Region, Service and Endpoint are created, updated in place, replaced
where Heat replaces, checked (and a check fails once the object is deleted behind the
stack's back), and deleted, also when already gone; openstacksdk as the cloud's admin is
the witness, and nothing is left in Keystone. A user the stack makes then authenticates
to the project the stack made, with the role the stack gave it, and its password (a
hidden parameter) appears in no event, output, resource or error."""

from __future__ import annotations

import json
import secrets
from urllib import parse

import openstack
import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.cloud import identity
from tests.support.stacks import from_data, states


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, admin_cloud):
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def template(resources: dict, outputs: dict | None = None, parameters: dict | None = None) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "parameters": parameters or {},
        "resources": resources,
        "outputs": outputs or {},
    }


def assignments(keystone, **query) -> set[tuple[str, str | None, str | None]]:
    return {
        (
            item.role["id"],
            (item.scope.get("project") or {}).get("id"),
            (item.scope.get("domain") or {}).get("id"),
        )
        for item in keystone.role_assignments(**query)
    }


def region(keystone, region_id: str) -> dict | None:
    """A region by its id, quoted in the path (openstacksdk sends an id as it is, and
    Heat's region ids are URL-encoded: "%20" in them)."""
    answer = keystone.request(f"/regions/{parse.quote(region_id, safe='')}", "GET")
    return answer.json()["region"] if answer.status_code == 200 else None


def projects_tree(suffix: str, **changes) -> dict:
    domain = {"name": f"dom-{suffix}", "description": "made by stoker"}
    project = {"domain": {"get_resource": "domain"}, "description": "first", "tags": ["a", "b"]}
    role = {"name": f"role-{suffix}"}
    domain.update(changes.get("domain", {}))
    project.update(changes.get("project", {}))
    role.update(changes.get("role", {}))
    resources = {
        "domain": {"type": "OS::Keystone::Domain", "properties": domain},
        "project": {"type": "OS::Keystone::Project", "properties": project},
        "role": {"type": "OS::Keystone::Role", "properties": role},
    }
    resources.update(changes.get("more", {}))
    return template(
        resources,
        {
            "project_name": {"value": {"get_attr": ["project", "name"]}},
            "project_domain": {"value": {"get_attr": ["project", "domain_id"]}},
            "project_enabled": {"value": {"get_attr": ["project", "enabled"]}},
            "project_show_tags": {"value": {"get_attr": ["project", "show", "tags"]}},
        },
    )


def test_keystone_domain_project_role_create_update_replace_check_delete(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    keystone = admin_cloud.connect("admin").identity
    stack_name = f"ks-tree-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(projects_tree(suffix)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    domain, project, role = (
        keystone.get_domain(ids["domain"]),
        keystone.get_project(ids["project"]),
        keystone.get_role(ids["role"]),
    )
    assert (domain.name, domain.description, domain.is_enabled) == (
        f"dom-{suffix}",
        "made by stoker",
        True,
    )
    # No name given: the physical resource name, as Heat makes it.
    assert project.name.startswith(f"{stack_name}-project-")
    assert (project.domain_id, project.description, project.is_enabled, sorted(project.tags)) == (
        domain.id,
        "first",
        True,
        ["a", "b"],
    )
    assert (role.name, role.domain_id) == (f"role-{suffix}", None)
    assert outputs(service, stack_name) == {
        "project_name": project.name,
        "project_domain": domain.id,
        "project_enabled": True,
        "project_show_tags": ["a", "b"],
    }
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: names, descriptions, enabled, tags.
    changed = projects_tree(
        suffix,
        domain={"name": f"dom2-{suffix}", "description": "renamed", "enabled": False},
        project={
            "name": f"proj-{suffix}",
            "description": "second",
            "enabled": False,
            "tags": ["c"],
        },
        role={"name": f"role2-{suffix}"},
    )
    stack = service.update_stack(stack_name, from_data(changed))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    domain, project, role = (
        keystone.get_domain(ids["domain"]),
        keystone.get_project(ids["project"]),
        keystone.get_role(ids["role"]),
    )
    assert (domain.name, domain.description, domain.is_enabled) == (
        f"dom2-{suffix}",
        "renamed",
        False,
    )
    assert (project.name, project.description, project.is_enabled, project.tags) == (
        f"proj-{suffix}",
        "second",
        False,
        ["c"],
    )
    assert role.name == f"role2-{suffix}"

    # Replaced where Heat replaces: a role's domain, a project's parent (new names too:
    # the replacement is made while the old one still holds its name).
    replaced = projects_tree(
        suffix,
        domain={"name": f"dom2-{suffix}", "enabled": True},
        project={"name": f"proj3-{suffix}", "parent": {"get_resource": "parent"}},
        role={"name": f"role3-{suffix}", "domain": {"get_resource": "domain"}},
        more={
            "parent": {
                "type": "OS::Keystone::Project",
                "properties": {"domain": {"get_resource": "domain"}},
            }
        },
    )
    stack = service.update_stack(stack_name, from_data(replaced))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    new_ids = physical_ids(service, stack_name)
    assert new_ids["domain"] == ids["domain"]
    assert new_ids["project"] != ids["project"] and new_ids["role"] != ids["role"]
    assert keystone.find_project(ids["project"]) is None and keystone.find_role(ids["role"]) is None
    assert keystone.get_project(new_ids["project"]).parent_id == new_ids["parent"]
    assert keystone.get_role(new_ids["role"]).domain_id == ids["domain"]

    # Check reads the live objects: a project deleted behind the stack's back fails it...
    keystone.delete_project(new_ids["project"])
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["project"] == "CHECK_FAILED"

    # ...and the delete tolerates it gone; the enabled domain is disabled, then deleted.
    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    for finder, identifier in (
        (keystone.find_domain, ids["domain"]),
        (keystone.find_project, new_ids["parent"]),
        (keystone.find_role, new_ids["role"]),
    ):
        assert finder(identifier) is None


def people_template(
    suffix: str, roles: list | None = None, groups: list | None = None, **user: object
) -> dict:
    """A project, two roles, a group with a role on the project, and a user in the group
    with roles of its own; the user's password a hidden parameter."""
    user_properties = {
        "name": f"user-{suffix}",
        "password": {"get_param": "password"},
        "email": f"user-{suffix}@example.com",
        "default_project": {"get_resource": "project"},
        "groups": groups if groups is not None else [{"get_resource": "group"}],
        "roles": roles
        if roles is not None
        else [{"role": {"get_resource": "worker"}, "project": {"get_resource": "project"}}],
    }
    user_properties.update(user)
    return template(
        {
            "project": {
                "type": "OS::Keystone::Project",
                "properties": {"name": f"people-{suffix}"},
            },
            "worker": {"type": "OS::Keystone::Role", "properties": {"name": f"worker-{suffix}"}},
            "viewer": {"type": "OS::Keystone::Role", "properties": {"name": f"viewer-{suffix}"}},
            "group": {
                "type": "OS::Keystone::Group",
                "properties": {
                    "name": f"group-{suffix}",
                    "roles": [
                        {"role": {"get_resource": "viewer"}, "project": {"get_resource": "project"}}
                    ],
                },
            },
            "other_group": {"type": "OS::Keystone::Group", "properties": {"description": "second"}},
            "user": {"type": "OS::Keystone::User", "properties": user_properties},
        },
        {
            "user_show": {"value": {"get_attr": ["user", "show"]}},
            "user_project": {"value": {"get_attr": ["user", "default_project_id"]}},
        },
        {"password": {"type": "string", "hidden": True}},
    )


def test_keystone_user_in_a_group_with_roles_authenticates_to_the_new_project(admin_cloud, stacks):
    """The end-to-end template: a project, a user with a role in it and a group; the user
    then gets a token scoped to the project, with both roles (its own and its group's)."""
    service, names = stacks
    suffix = secrets.token_hex(3)
    password = f"pw-{secrets.token_hex(8)}"
    keystone = admin_cloud.connect("admin").identity
    stack_name = f"ks-people-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(
        stack_name, from_data(people_template(suffix)), parameters={"password": password}
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    user = keystone.get_user(ids["user"])
    assert (user.name, user.email, user.default_project_id, user.domain_id) == (
        f"user-{suffix}",
        f"user-{suffix}@example.com",
        ids["project"],
        "default",
    )
    assert [group.id for group in keystone.user_groups(ids["user"])] == [ids["group"]]
    assert assignments(keystone, user_id=ids["user"]) == {(ids["worker"], ids["project"], None)}
    assert assignments(keystone, group_id=ids["group"]) == {(ids["viewer"], ids["project"], None)}
    shown = outputs(service, stack_name)
    assert shown["user_project"] == ids["project"]
    assert shown["user_show"]["id"] == ids["user"] and "password" not in shown["user_show"]

    def authenticate(secret: str):
        return openstack.connect(
            auth_url=admin_cloud.keystone_url, username=f"user-{suffix}", password=secret, project_id=ids["project"],
            user_domain_id="default", region_name=identity.REGION,
        )  # fmt: skip

    user_connection = authenticate(password)
    access = user_connection.session.auth.get_access(user_connection.session)
    assert access.project_id == ids["project"]
    assert {f"worker-{suffix}", f"viewer-{suffix}"} <= set(access.role_names)
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: a new password, the other group instead, the viewer role on the domain
    # instead of the worker role on the project.
    new_password = f"pw2-{secrets.token_hex(8)}"
    updated = people_template(
        suffix,
        roles=[{"role": {"get_resource": "viewer"}, "domain": "default"}],
        groups=[{"get_resource": "other_group"}],
        description="moved",
    )
    stack = service.update_stack(
        stack_name, from_data(updated), parameters={"password": new_password}
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    assert keystone.get_user(ids["user"]).description == "moved"
    assert [group.id for group in keystone.user_groups(ids["user"])] == [ids["other_group"]]
    assert assignments(keystone, user_id=ids["user"]) == {(ids["viewer"], None, "default")}
    with pytest.raises(openstack.exceptions.SDKException):
        authenticate(password).authorize()
    # No role on the project any more: the new password is right, the project refused.
    with pytest.raises(openstack.exceptions.SDKException):
        authenticate(new_password).authorize()

    # The password is in no event, output or resource of the stack.
    recorded = json.dumps(
        [
            [event.resource_status_reason for event in service.list_events(stack_name)],
            outputs(service, stack_name),
            [record.attributes for record in service.list_resources(stack_name)],
        ],
        default=str,
    )
    assert password not in recorded and new_password not in recorded

    # Neutron makes a project's "default" security group when first asked for its groups;
    # the project's delete deletes it too (Heat's), so nothing of it is orphaned.
    network = admin_cloud.connect("admin").network
    assert [group.name for group in network.security_groups(project_id=ids["project"])] == [
        "default"
    ]

    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    # (Filtered here: asked for a project's groups, Neutron would make its default again.)
    assert [
        group.id for group in network.security_groups() if group.project_id == ids["project"]
    ] == []
    assert keystone.find_user(ids["user"]) is None and keystone.find_project(ids["project"]) is None
    assert keystone.find_group(ids["group"]) is None and keystone.find_role(ids["worker"]) is None


def test_keystone_user_refused_by_keystone_fails_without_its_password(admin_cloud, stacks):
    """Keystone refuses the user (its name is taken) after the password was sent: the
    failure is Keystone's, and the password is in none of what the stack shows."""
    service, names = stacks
    suffix = secrets.token_hex(3)
    keystone = admin_cloud.connect("admin").identity
    taken = keystone.create_user(name=f"taken-{suffix}", domain_id="default")
    stack_name = f"ks-badpw-{suffix}"
    names.append(stack_name)
    password = f"pw-{secrets.token_hex(8)}"
    user = template(
        {
            "user": {
                "type": "OS::Keystone::User",
                "properties": {"name": f"taken-{suffix}", "password": {"get_param": "password"}},
            }
        },
        parameters={"password": {"type": "string", "hidden": True}},
    )
    try:
        stack = service.create_stack(stack_name, from_data(user), parameters={"password": password})

        assert stack.state == "CREATE_FAILED"
        assert "ConflictException: 409" in stack.status_reason, stack.status_reason
        shown = [
            stack.status_reason,
            *(str(event.resource_status_reason) for event in service.list_events(stack_name)),
        ]
        assert not any(password in reason for reason in shown), shown
        assert physical_ids(service, stack_name)["user"] is None
        assert [found.id for found in keystone.users(name=f"taken-{suffix}")] == [taken.id]
    finally:
        keystone.delete_user(taken, ignore_missing=True)


def test_keystone_role_assignments_grant_move_check_revoke(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    keystone = admin_cloud.connect("admin").identity
    made = {
        "project": keystone.create_project(name=f"ra-{suffix}", domain_id="default"),
        "role": keystone.create_role(name=f"ra-role-{suffix}"),
        "other_role": keystone.create_role(name=f"ra-other-{suffix}"),
        "user": keystone.create_user(name=f"ra-user-{suffix}", domain_id="default"),
        "second_user": keystone.create_user(name=f"ra-user2-{suffix}", domain_id="default"),
        "group": keystone.create_group(name=f"ra-group-{suffix}", domain_id="default"),
    }
    project, role, other, user, second, group = (
        made[key].id for key in ("project", "role", "other_role", "user", "second_user", "group")
    )
    stack_name = f"ks-assign-{suffix}"
    names.append(stack_name)

    def assigned(user_name: str, roles: list) -> dict:
        return template(
            {
                "for_user": {
                    "type": "OS::Keystone::UserRoleAssignment",
                    "properties": {"user": user_name, "roles": roles},
                },
                "for_group": {
                    "type": "OS::Keystone::GroupRoleAssignment",
                    "properties": {"group": f"ra-group-{suffix}", "roles": roles},
                },
            },
            {"reference": {"value": {"get_resource": "for_user"}}},
        )

    # By names: the role on the project and on the domain (default), to both.
    first = [
        {"role": f"ra-role-{suffix}", "project": f"ra-{suffix}"},
        {"role": f"ra-role-{suffix}", "domain": "default"},
    ]
    try:
        stack = service.create_stack(stack_name, from_data(assigned(f"ra-user-{suffix}", first)))

        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        assert outputs(service, stack_name) == {
            "reference": "for_user"
        }  # Heat's reference: the name
        both = {(role, project, None), (role, None, "default")}
        assert (
            assignments(keystone, user_id=user) == both
            and assignments(keystone, group_id=group) == both
        )
        assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

        # In place: the other role instead on the project (domain kept), by id this time.
        second_roles = [{"role": other, "project": project}, {"role": role, "domain": "default"}]
        stack = service.update_stack(
            stack_name, from_data(assigned(f"ra-user-{suffix}", second_roles))
        )

        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        moved = {(other, project, None), (role, None, "default")}
        assert (
            assignments(keystone, user_id=user) == moved
            and assignments(keystone, group_id=group) == moved
        )

        # Another user: the roles move to it.
        stack = service.update_stack(stack_name, from_data(assigned(second, second_roles)))

        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert (
            assignments(keystone, user_id=user) == set()
            and assignments(keystone, user_id=second) == moved
        )

        # A role revoked behind the stack's back fails the check.
        keystone.unassign_project_role_from_group(project, group, other)
        assert service.stack_action(stack_name, "CHECK").state == "CHECK_FAILED"
        assert states(service, stack_name)["for_group"] == "CHECK_FAILED"

        deleted = service.delete_stack(stack_name)
        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        assert (
            assignments(keystone, user_id=second) == set()
            and assignments(keystone, group_id=group) == set()
        )
    finally:
        for kind, delete in (
            ("user", keystone.delete_user), ("second_user", keystone.delete_user), ("group", keystone.delete_group),
            ("project", keystone.delete_project), ("role", keystone.delete_role), ("other_role", keystone.delete_role),
        ):  # fmt: skip
            delete(made[kind], ignore_missing=True)


def catalog_template(
    suffix: str,
    region: dict | None = None,
    endpoint: dict | None = None,
    service: dict | None = None,
) -> dict:
    return template(
        {
            "parent": {
                "type": "OS::Keystone::Region",
                "properties": {"id": f"parent-{suffix}", "description": "top"},
            },
            "region": {
                "type": "OS::Keystone::Region",
                "properties": {
                    "id": f"region {suffix}",
                    "parent_region": {"get_resource": "parent"},
                    **(region or {}),
                },
            },
            "service": {
                "type": "OS::Keystone::Service",
                "properties": {"type": f"kind-{suffix}", **(service or {})},
            },
            "endpoint": {
                "type": "OS::Keystone::Endpoint",
                "properties": {
                    "service": {"get_resource": "service"},
                    "region": {"get_resource": "region"},
                    "interface": "public",
                    "url": "http://127.0.0.1:1/first",
                    **(endpoint or {}),
                },
            },
        },
        {
            "endpoint": {"value": {"get_attr": ["endpoint", "show"]}},
            "region": {"value": {"get_attr": ["region", "show"]}},
        },
    )


def test_keystone_region_service_endpoint_create_update_replace_check_delete(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    keystone = admin_cloud.connect("admin").identity
    stack_name = f"ks-catalog-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(catalog_template(suffix)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    # Heat URL-encodes the region id it is given.
    assert ids["region"] == f"region%20{suffix}" and ids["parent"] == f"parent-{suffix}"
    assert region(keystone, ids["region"])["parent_region_id"] == ids["parent"]
    catalog_service = keystone.get_service(ids["service"])
    assert (catalog_service.type, catalog_service.is_enabled) == (f"kind-{suffix}", True)
    assert catalog_service.name.startswith(f"{stack_name}-service-")
    endpoint = keystone.get_endpoint(ids["endpoint"])
    assert (endpoint.service_id, endpoint.region_id, endpoint.interface, endpoint.url) == (
        ids["service"],
        ids["region"],
        "public",
        "http://127.0.0.1:1/first",
    )
    shown = outputs(service, stack_name)
    # Keystone's extra fields, as Heat's client sends them: the endpoint's name, enabled.
    assert (
        shown["endpoint"]["name"].startswith(f"{stack_name}-endpoint-")
        and shown["region"]["enabled"] is True
    )
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: every endpoint and service property, a region's description and enabled.
    changed = catalog_template(
        suffix,
        region={"description": "second", "enabled": False},
        endpoint={
            "interface": "internal",
            "url": "http://127.0.0.1:1/second",
            "name": f"ep-{suffix}",
            "enabled": False,
        },
        service={
            "name": f"svc-{suffix}",
            "description": "catalogued",
            "type": f"kind2-{suffix}",
            "enabled": False,
        },
    )
    stack = service.update_stack(stack_name, from_data(changed))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    endpoint = keystone.get_endpoint(ids["endpoint"])
    assert (endpoint.interface, endpoint.url, endpoint.is_enabled) == (
        "internal",
        "http://127.0.0.1:1/second",
        False,
    )
    catalog_service = keystone.get_service(ids["service"])
    assert (catalog_service.name, catalog_service.description, catalog_service.type, catalog_service.is_enabled) == (
        f"svc-{suffix}", "catalogued", f"kind2-{suffix}", False,
    )  # fmt: skip
    assert (
        region(keystone, ids["region"])["description"],
        region(keystone, ids["region"])["enabled"],
    ) == ("second", False)
    assert outputs(service, stack_name)["region"]["enabled"] is False

    # A new region id replaces the region; the endpoint follows it in place.
    stack = service.update_stack(
        stack_name, from_data(catalog_template(suffix, region={"id": f"moved-{suffix}"}))
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    new_ids = physical_ids(service, stack_name)
    assert new_ids["region"] == f"moved-{suffix}" and new_ids["endpoint"] == ids["endpoint"]
    assert region(keystone, ids["region"]) is None
    assert keystone.get_endpoint(ids["endpoint"]).region_id == f"moved-{suffix}"

    # Deleted behind the stack's back: the check fails, the delete tolerates it.
    keystone.delete_endpoint(ids["endpoint"])
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_FAILED"
    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert keystone.find_service(ids["service"]) is None
    assert region(keystone, new_ids["region"]) is None and region(keystone, ids["parent"]) is None


class Context:
    """A request context for client plugins used outside a stack."""


def test_keystone_find_created_finds_by_physical_name_only(admin_cloud):
    """What an interrupted create left (made, id never recorded) is found by the physical
    resource name, exactly; a name the template gave is never claimed; and the finders
    take Heat's ``name{domain}``."""
    from stoker.resources.openstack.keystone.client_plugin import KeystoneClientPlugin
    from stoker.resources.openstack.keystone.project import KeystoneProject
    from stoker.resources.openstack.keystone.user import KeystoneUser
    from stoker.sdk.exceptions import EntityNotFound
    from stoker.sdk.testing import PluginHarness

    suffix = secrets.token_hex(3)
    keystone = admin_cloud.connect("admin").identity
    plugin = KeystoneClientPlugin(Context(), name="keystone")

    # (The keystone.* constraints are the stack tests' to check; any name passes here.)
    names = {
        f"keystone.{kind}": (lambda value: bool(value))
        for kind in ("domain", "project", "group", "role")
    }

    def harness(cls, **properties):
        return PluginHarness(
            cls,
            properties,
            name="made",
            stack_name=f"orphans-{suffix}",
            clients={"keystone": plugin},
            constraints=names,
        )

    project, user = harness(KeystoneProject).resource, harness(KeystoneUser).resource
    assert project.find_created() is None and user.find_created() is None
    made_project = keystone.create_project(
        name=project.physical_resource_name(), domain_id="default"
    )
    made_user = keystone.create_user(name=user.physical_resource_name(), domain_id="default")
    decoy = keystone.create_project(
        name=project.physical_resource_name() + "x", domain_id="default"
    )
    try:
        assert project.find_created() == made_project.id
        assert user.find_created() == made_user.id
        assert (
            harness(KeystoneProject, name=project.physical_resource_name()).resource.find_created()
            is None
        )
        # Heat's finders: by id, by name, and by name{domain} (the domain by name or id).
        assert plugin.get_user_id(f"{user.physical_resource_name()}{{Default}}") == made_user.id
        assert (
            plugin.get_project_id(f"{project.physical_resource_name()}{{default}}")
            == made_project.id
        )
        with pytest.raises(EntityNotFound) as missing:
            plugin.get_project_id(f"no-such-{suffix}")
        assert (
            missing.value.message == f"The KeystoneProject (no-such-{suffix}) could not be found."
        )
    finally:
        for made in (made_project, decoy):
            keystone.delete_project(made, ignore_missing=True)
        keystone.delete_user(made_user, ignore_missing=True)
