"""Heat's stack user domain through the engine, on a stand-in Keystone
(tests/support/fake_keystone.py) behind the built-in ``keystone`` client plugin: a
stack's users are made by the domain admin in a project of their own in the domain (one
per stack tree, recorded on the stack before any user is made), found again after a
crash, deleted once checked, and the project goes at the end of the stack's delete. The
real Keystone is driven in tests/cloud/test_stack_users.py."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml

from stoker.reads import Project
from stoker.resources.openstack.keystone import stack_user
from stoker.resources.openstack.keystone.client_plugin import KeystoneClientPlugin
from tests.support.fake_keystone import FakeKeystone, domain_keystone_plugin
from tests.support.stacks import from_data

ADMIN_PASSWORD = "domain-admin-secret-7"
LOGIN_PASSWORD = "login-secret-1"
PROJECT = "owner-project"

INNER = {
    "heat_template_version": "2021-04-16",
    "resources": {"inner": {"type": "AWS::IAM::User"}},
}
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "user": {"type": "AWS::IAM::User", "properties": {"LoginProfile": {"Password": LOGIN_PASSWORD}}},
        "key": {"type": "AWS::IAM::AccessKey", "properties": {"UserName": {"get_resource": "user"}}},
        "handle": {"type": "OS::Heat::WaitConditionHandle", "properties": {"signal_transport": "HEAT_SIGNAL"}},
        "nested": {"type": "inner.yaml"},
    },
    "outputs": {"access": {"value": {"get_resource": "key"}}, "secret": {"value": {"get_attr": ["key", "SecretAccessKey"]}}},
}
FILES = {"inner.yaml": yaml.safe_dump(INNER)}


DOMAIN_SETTINGS = {"stack_user_domain": "heat", "stack_domain_admin": "heat_domain_admin", "stack_domain_admin_password": ADMIN_PASSWORD}


@pytest.fixture
def keystone(make_service):
    fake = FakeKeystone()
    service = make_service(**DOMAIN_SETTINGS)
    service.registry.clients.register("keystone", domain_keystone_plugin(fake, ADMIN_PASSWORD))
    return service, fake


def test_stack_users_are_made_in_the_stack_domain_in_one_project_per_stack_tree(keystone):
    service, fake = keystone
    stack = service.create_stack("iam", from_data(TEMPLATE), files=FILES, project_id=PROJECT)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    # One project in the domain, Heat's name, recorded on the root and the nested stack.
    [(project_id, project)] = fake.projects.items()
    assert project == {"id": project_id, "name": f"{PROJECT}-{stack.id}", "domain_id": fake.domain_id, "description": "Heat stack user project"}
    root = service.store.get_stack(stack.id)
    [child] = service.store.child_stacks(stack.id)
    assert (root.stack_user_project_id, child.stack_user_project_id) == (project_id, project_id)
    # Every user (the root's two, the nested stack's one) in the domain and project, with the role.
    names = sorted(user["name"] for user in fake.users.values())
    assert [name.startswith(prefix) for name, prefix in zip(names, ("iam-handle-", "iam-nested-", "iam-user-"), strict=True)] == [True] * 3
    assert "-inner-" in names[1]
    role_id = next(role_id for role_id, role in fake.roles.items() if role["name"] == "heat_stack_user")
    for user_id, user in fake.users.items():
        assert (user["domain_id"], user["default_project_id"]) == (fake.domain_id, project_id)
        assert (project_id, user_id, role_id) in fake.grants
    # The access key is the domain admin's EC2 credential of the stack's User, on the project.
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs("iam")}
    credential = fake.credentials[hashlib.sha256(outputs["access"].encode()).hexdigest()]
    user_id = service.list_resources("iam")[[r.name for r in service.list_resources("iam")].index("user")].physical_resource_id
    assert (credential["user_id"], credential["project_id"]) == (user_id, project_id)
    assert json.loads(credential["blob"]) == {"access": outputs["access"], "secret": outputs["secret"]}
    # Nothing was asked with the stack's own credentials (there are none here).
    assert all(method in ("GET", "POST", "PUT", "PATCH", "DELETE") for method, _ in fake.requests)


def test_stack_user_projects_reach_their_stacks_and_stack_show_names_it(keystone):
    service, fake = keystone
    stack = service.create_stack("iam", from_data(TEMPLATE), files=FILES, project_id=PROJECT)
    project_id = service.store.get_stack(stack.id).stack_user_project_id
    [child] = service.store.child_stacks(stack.id)
    # Heat's identify_stack and _get_stack: the tenant, or the stack_user_project_id.
    for caller in (Project(PROJECT), Project(project_id)):
        assert service.identified_stack("iam", stack.id, caller).id == stack.id
        assert service.get_stack("iam", caller).id == stack.id
        assert service.identified_stack(child.name, child.id, caller).id == child.id
    with pytest.raises(Exception, match="could not be found"):
        service.identified_stack("iam", stack.id, Project("someone-else"))
    from stoker.api import views

    class Links:
        def stack_url(self, stack, *parts):
            return "/".join([stack.name, stack.id, *parts])

        def link(self, url):
            return {"href": url, "rel": "self"}

    assert views.stack_summary(Links(), service.store.get_stack(stack.id))["stack_user_project_id"] == project_id


def test_stack_delete_deletes_users_credentials_and_project(keystone):
    service, fake = keystone
    stack = service.create_stack("iam", from_data(TEMPLATE), files=FILES, project_id=PROJECT)
    assert fake.users and fake.credentials and fake.projects
    fake.requests.clear()
    assert service.delete_stack("iam").state == "DELETE_COMPLETE"
    assert (fake.users, fake.credentials, fake.projects) == ({}, {}, {})
    # Each user was checked (Heat's _check_stack_domain_user) before its delete.
    deletes = [path for method, path in fake.requests if method == "DELETE" and path.startswith("/users/")]
    assert len(deletes) == 3
    for path in deletes:
        assert fake.requests.index(("GET", path)) < fake.requests.index(("DELETE", path))
    # The project last, after the resources.
    assert fake.requests[-1][0] == "DELETE" and fake.requests[-1][1].startswith("/projects/")
    assert service.store.get_stack(stack.id).stack_user_project_id is not None


def test_a_refused_project_delete_fails_the_stack_delete_and_a_retry_completes(keystone):
    service, fake = keystone
    service.create_stack("iam", from_data(TEMPLATE), files=FILES, project_id=PROJECT)
    fake.refuse[("DELETE", "/projects/")] = 500
    stack = service.delete_stack("iam")
    assert stack.state == "DELETE_FAILED"
    assert stack.status_reason.startswith("Error deleting project: StackDomainError: Keystone refused the stack domain admin DELETE /projects/")
    assert ADMIN_PASSWORD not in stack.status_reason
    del fake.refuse[("DELETE", "/projects/")]
    assert service.delete_stack("iam").state == "DELETE_COMPLETE"
    assert fake.projects == {}


def test_a_project_of_another_domain_is_never_deleted(keystone):
    service, fake = keystone
    stack = service.create_stack("iam", from_data(INNER), project_id=PROJECT)
    # As a stack made before the domain was set up would name its own project.
    other = fake.add_project("owner", "default")
    service.store.set_stack_user_project([stack.id], other)
    fake.users.clear()
    assert service.delete_stack("iam").state == "DELETE_COMPLETE"
    assert other in fake.projects


def test_a_create_cut_short_finds_its_project_and_user_by_name(keystone):
    """A crash after Keystone made the project and the user, before either id was
    written: the next create finds both by name; none is made twice."""
    service, fake = keystone
    stack = service.create_stack("iam", from_data(INNER), project_id=PROJECT)
    [project_id] = fake.projects
    [(user_id, user)] = fake.users.items()
    runtime = service.engine.load_runtime(service.store.get_stack(stack.id))
    [record] = service.store.list_resources(stack.id)
    instance = runtime.instance(record)
    # What a create cut short left: no id recorded, on the stack or in the resource's data.
    service.store.set_stack_user_project([stack.id], None)
    runtime.stack.stack_user_project_id = None
    runtime._tree_user_project = None
    for key in (stack_user.USER_ID, stack_user.PROJECT_ID):
        instance.data_delete(key)
    assert stack_user.create_stack_user(instance) == user_id
    assert list(fake.projects) == [project_id] and list(fake.users) == [user_id]
    assert service.store.get_stack(stack.id).stack_user_project_id == project_id


def test_a_user_outside_the_domain_is_deleted_the_legacy_way(keystone, monkeypatch):
    """Heat's fallback: a user the domain check refuses (made before the domain was set
    up, in the stack's own project) is deleted with the stack's credentials."""
    service, fake = keystone
    stack = service.create_stack("iam", from_data(INNER), project_id=PROJECT)
    [record] = service.store.list_resources(stack.id)
    [user_id] = fake.users
    fake.users[user_id]["domain_id"] = "default"
    legacy = []

    class Identity:
        def delete_user(self, user, ignore_missing=True):
            legacy.append(user)

        def delete_credential(self, credential, ignore_missing=True):
            pass

    monkeypatch.setattr(service.registry.clients.get_class("keystone"), "client", lambda self, version=None: Identity())
    assert service.delete_stack("iam").state == "DELETE_COMPLETE", record
    assert legacy == [user_id] and user_id in fake.users


def test_without_the_settings_the_keystone_plugin_has_no_stack_domain(make_service):
    """Heat's legacy fallback: no settings, no stack domain, nothing asked of Keystone."""
    service = make_service()
    assert not {"stack_user_domain", "stack_domain_admin", "stack_domain_admin_password"} & set(service.registry.client_settings)
    plugin = KeystoneClientPlugin(None, name="keystone", settings=service.registry.client_settings)
    assert plugin.stack_domain() is None
    plugin.delete_stack_user_project("a-project")  # no connection is made: there is no cloud here


def test_a_poll_server_cfn_servers_keypair_is_the_domain_admins_credential(keystone):
    """POLL_SERVER_CFN: the server's stack user in the domain, its EC2 keypair made by the
    domain admin (Heat's create_stack_domain_user_keypair), deleted with the server after
    the user is checked; stoker's own keypair credential goes too."""
    service, fake = keystone
    server = {"type": "OS::Heat::DeployedServer", "properties": {"software_config_transport": "POLL_SERVER_CFN"}}
    stack = service.create_stack("cfn", from_data({"heat_template_version": "2021-04-16", "resources": {"server": server}}), project_id=PROJECT)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    [(user_id, user)] = fake.users.items()
    [(credential_id, credential)] = fake.credentials.items()
    project_id = service.store.get_stack(stack.id).stack_user_project_id
    assert (credential["user_id"], credential["project_id"], user["default_project_id"]) == (user_id, project_id, project_id)
    # The access key is the one stoker issued for the server's CFN requests.
    access = json.loads(credential["blob"])["access"]
    assert hashlib.sha256(access.encode()).hexdigest() == credential_id
    fake.requests.clear()
    assert service.delete_stack("cfn").state == "DELETE_COMPLETE"
    assert (fake.users, fake.credentials, fake.projects) == ({}, {}, {})
    path = f"/credentials/{credential_id}"
    assert fake.requests.index(("GET", f"/users/{user_id}")) < fake.requests.index(("DELETE", path))
