"""Projects kept apart in the store and the service, on a SQLite file and on PostgreSQL:
a stack, software config or deployment is found for its own project only (an admin's
by id too); stack names are unique per project; the embedded CLI's lookups, without a
project, find every stack."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

from stoker.engine.errors import StackExistsError, StackNotFoundError
from stoker.engine.software_configs import StoredSoftwareConfigs
from stoker.engine.software_deployments import (
    DeploymentServerNotFoundError,
    StackUserProjectError,
    StoredSoftwareDeployments,
)
from stoker.reads import Project
from stoker.sdk.software_config import (
    DeploymentConfigNotFoundError,
    SoftwareConfigNotFoundError,
    SoftwareDeploymentNotFoundError,
)
from stoker.service import Service, Source
from stoker.settings import Settings
from stoker.store import Store
from stoker.store.repository import StackNameTakenError, utcnow
from tests.support.records import make_resource, make_stack

TEMPLATE = "heat_template_version: 2021-04-16\nresources:\n  nothing: {type: OS::Heat::None}\n"


def test_store_finds_and_lists_a_projects_stacks_only(store: Store) -> None:
    mine = make_stack(store, "web", created_at=datetime(2024, 1, 1), project_id="a")
    nested = make_stack(store, "web-child-x1", created_at=datetime(2024, 1, 2), project_id="a", owner_id=mine.id, owner_resource="child")
    theirs = make_stack(store, "db", created_at=datetime(2024, 1, 3), project_id="b")

    assert store.find_stack("web", "a") == mine
    assert store.find_stack(mine.id, "a") == mine
    assert store.find_stack("web", "b") is None
    assert store.find_stack(mine.id, "b") is None
    assert store.find_stack(theirs.id) == theirs  # no project: any project's
    assert [s.id for s in store.list_stacks(project_id="a")] == [mine.id]
    assert [s.id for s in store.list_stacks(project_id="a", include_nested=True)] == [mine.id, nested.id]
    assert [s.id for s in store.list_stacks(project_id="b", include_nested=True)] == [theirs.id]
    assert store.list_stacks(project_id="c", include_nested=True, include_deleted=True) == []
    assert [s.id for s in store.list_stacks(include_nested=True)] == [mine.id, nested.id, theirs.id]


def test_store_stack_user_projects_are_recorded_and_find_their_stacks(store: Store) -> None:
    """Heat's stack_user_project_id: recorded on a tree's root and nested stack at once
    (their updated_at kept), and a name or id found through it only when asked
    (``stack_users``: Heat's stack_get_by_name), never by a name check of another project."""
    root = make_stack(store, "web", project_id="a")
    nested = make_stack(store, "web-child-x1", project_id="a", owner_id=root.id, owner_resource="child")
    other = make_stack(store, "web", project_id="b")
    before = store.get_stack(root.id).updated_at
    store.set_stack_user_project([root.id, nested.id], "users-of-web")
    assert [store.get_stack(s.id).stack_user_project_id for s in (root, nested, other)] == ["users-of-web", "users-of-web", None]
    assert store.get_stack(root.id).updated_at == before
    assert store.find_stack("web", "users-of-web", stack_users=True).id == root.id
    assert store.find_stack(nested.id, "users-of-web", stack_users=True).id == nested.id
    assert store.find_stack("web", "users-of-web") is None
    assert store.find_stack("web", "a", stack_users=True).id == root.id
    assert Project("users-of-web").reaches(store.get_stack(root.id))
    assert not Project("users-of-web").reaches(store.get_stack(other.id))
    assert not Project("").reaches(store.get_stack(other.id))


def test_store_stack_names_are_unique_per_project(store: Store) -> None:
    first = make_stack(store, "twin", project_id="a")
    second = make_stack(store, "twin", project_id="b")
    assert store.find_stack("twin", "a").id == first.id and store.find_stack("twin", "b").id == second.id
    with pytest.raises(StackNameTakenError):
        make_stack(store, "twin", project_id="a")
    store.update_stack(first.id, deleted_at=utcnow())
    again = make_stack(store, "twin", project_id="a")  # a deleted stack's name is free
    assert store.find_stack("twin", "a").id == again.id


def test_store_lists_a_projects_software_configs_and_deployments(store: Store) -> None:
    mine = StoredSoftwareConfigs(store, tenant="a").create(name="mine", group="script", config="a")
    theirs = StoredSoftwareConfigs(store, tenant="b").create(name="theirs", group="script", config="b")
    assert [c.id for c in store.software_configs.list_software_configs(tenant="a")] == [mine["id"]]
    # Another project's config is no marker of this project's list (ignored, as unknown).
    assert [c.id for c in store.software_configs.list_software_configs(tenant="a", marker=theirs["id"])] == [mine["id"]]
    assert [c.id for c in store.software_configs.list_software_configs(tenant="a", marker=mine["id"])] == []

    made = StoredSoftwareDeployments(store, tenant="a").create(server_id="s", config_id=mine["id"])
    # Only a cloud admin makes a deployment for another project's stack users (issue 26).
    for_users = StoredSoftwareDeployments(store, tenant="a", admin=True).create(server_id="s", config_id=mine["id"], stack_user_project_id="users")
    assert [d.id for d in store.software_configs.list_software_deployments(project="a")] == [made["id"], for_users["id"]]
    assert [d.id for d in store.software_configs.list_software_deployments(server_id="s", project="users")] == [for_users["id"]]
    assert store.software_configs.list_software_deployments(server_id="s", project="b") == []
    assert len(store.software_configs.list_software_deployments(server_id="s")) == 2


def test_stored_software_configs_and_deployments_are_found_by_their_project(store: Store) -> None:
    configs_a, configs_b = StoredSoftwareConfigs(store, tenant="a"), StoredSoftwareConfigs(store, tenant="b")
    config = configs_a.create(name="c", group="script", config="x")
    assert configs_a.show(config["id"]) == config
    assert configs_a.find_by_name("c") == config["id"] and configs_b.find_by_name("c") is None
    assert configs_b.list() == []
    for attempt in (configs_b.show, configs_b.delete):
        with pytest.raises(SoftwareConfigNotFoundError):
            attempt(config["id"])
    admin = StoredSoftwareConfigs(store, tenant="b", admin=True)
    assert admin.show(config["id"]) == config and [c["id"] for c in admin.list()] == [config["id"]]

    deployments_a, deployments_b = StoredSoftwareDeployments(store, tenant="a"), StoredSoftwareDeployments(store, tenant="b")
    with pytest.raises(DeploymentConfigNotFoundError):
        deployments_b.create(server_id="s", config_id=config["id"])  # not B's config to deploy
    deployment = deployments_a.create(server_id="s", config_id=config["id"], action="CREATE", status="IN_PROGRESS")
    assert deployments_b.list() == [] and deployments_b.metadata("s") == []
    for attempt in (deployments_b.show, deployments_b.delete, lambda d: deployments_b.update(d, status="FAILED"), lambda d: deployments_b.signal(d, {})):
        with pytest.raises(SoftwareDeploymentNotFoundError):
            attempt(deployment["id"])
    assert deployments_a.show(deployment["id"])["status"] == "IN_PROGRESS"
    assert [item["name"] for item in deployments_a.metadata("s")] == ["c"]
    # The stack users' project (Heat's stack_user_project_id) finds the deployment too;
    # only a cloud admin names a project other than its own (issue 26).
    with pytest.raises(StackUserProjectError):
        deployments_b.create(server_id="t", config_id=config["id"], stack_user_project_id="a")
    assert deployments_a.create(server_id="t", config_id=config["id"], stack_user_project_id="a")["id"] in [d["id"] for d in deployments_a.list()]
    users = StoredSoftwareDeployments(store, tenant="a", admin=True).create(server_id="t", config_id=config["id"], stack_user_project_id="users")
    assert StoredSoftwareDeployments(store, tenant="users").show(users["id"]) == users
    # A stack's resources act for the stack's project.
    stack = make_stack(store, project_id="b")
    with pytest.raises(SoftwareConfigNotFoundError):
        StoredSoftwareConfigs(store, stack_id=stack.id).show(config["id"])
    StoredSoftwareConfigs(store, tenant="a").delete(config["id"])
    assert store.software_configs.get_software_config(config["id"]) is None


def test_stored_software_deployments_reach_no_server_of_another_projects_stack(store: Store) -> None:
    config_a = StoredSoftwareConfigs(store, tenant="a").create(name="c", group="script", config="a")
    config_b = StoredSoftwareConfigs(store, tenant="b").create(name="c", group="script", config="b")
    stack_a = make_stack(store, "a-stack", project_id="a")
    store.insert_resources([make_resource(stack_a.id, "server", physical_resource_id="server-of-a", action="CREATE", status="COMPLETE")])
    assert store.software_configs.physical_id_owner("server-of-a") == "a" and store.software_configs.physical_id_owner("unheard-of") is None
    deployments_a, deployments_b = StoredSoftwareDeployments(store, tenant="a"), StoredSoftwareDeployments(store, tenant="b")
    deployments_a.create(server_id="server-of-a", config_id=config_a["id"])
    for attempt in (
        lambda: deployments_b.create(server_id="server-of-a", config_id=config_b["id"]),
        lambda: deployments_b.metadata("server-of-a"),
        # A stack of B's that holds the id too (adopted) comes second: still A's server.
        lambda: (
            store.insert_resources([make_resource(make_stack(store, "b-stack", project_id="b").id, "server", physical_resource_id="server-of-a", action="ADOPT", status="COMPLETE")]),
            deployments_b.create(server_id="server-of-a", config_id=config_b["id"]),
        ),
        # A stack's resources act for its project: B's stack deploys to no server of A's.
        lambda: StoredSoftwareDeployments(store, stack_id=make_stack(store, "b-deployer", project_id="b").id).create(server_id="server-of-a", config_id=config_b["id"]),
    ):
        with pytest.raises(DeploymentServerNotFoundError, match=r"The Server \(server-of-a\) could not be found."):
            attempt()
    assert [item["config"] for item in deployments_a.metadata("server-of-a")] == ["a"]
    # A server no stack holds (one made outside stoker) may be deployed to, as in Heat.
    assert deployments_b.create(server_id="unheard-of", config_id=config_b["id"])["server_id"] == "unheard-of"
    # A cloud admin deploys anywhere; a deleted stack's server is nobody's.
    assert StoredSoftwareDeployments(store, tenant="b", admin=True).create(server_id="server-of-a", config_id=config_b["id"])
    store.update_stack(stack_a.id, deleted_at=utcnow())
    assert store.software_configs.physical_id_owner("server-of-a") == "b"


@pytest.fixture
def service(database_url: str) -> Iterator[Service]:
    running = Service(Settings(database_url=database_url))
    yield running
    running.close()


def test_service_finds_a_stack_for_its_project_only(service: Service) -> None:
    mine = service.create_stack("web", Source(TEMPLATE), project_id="a")
    twin = service.create_stack("web", Source(TEMPLATE), project_id="b")  # the name is per project
    assert (mine.state, twin.state) == ("CREATE_COMPLETE", "CREATE_COMPLETE")
    with pytest.raises(StackExistsError):
        service.create_stack("web", Source(TEMPLATE), project_id="a")
    with pytest.raises(StackExistsError):
        service.preview_stack("web", Source(TEMPLATE), project_id="b")

    a, b, c = Project("a"), Project("b"), Project("c")
    assert service.get_stack("web", a).id == mine.id and service.get_stack("web", b).id == twin.id
    assert service.get_stack(mine.id, a).id == mine.id
    for name_or_id in ("web", mine.id, twin.id):
        with pytest.raises(StackNotFoundError):
            service.get_stack(name_or_id, c)
    with pytest.raises(StackNotFoundError):
        service.get_stack(mine.id, b)
    assert service.identified_stack("web", mine.id, a).id == mine.id
    for name, stack_id, project in (("web", mine.id, b), ("web", twin.id, a), ("other", mine.id, a)):
        with pytest.raises(StackNotFoundError, match=r"The Stack \(\w+/[-\w]+\) could not be found"):
            service.identified_stack(name, stack_id, project)
    assert [s.id for s in service.list_stacks(project=a)] == [mine.id]
    assert service.list_stacks(project=c, all_projects=True) == []  # every project's: an admin's only

    # An admin reaches any stack by id, by name only its own project's (as Heat).
    admin = Project("c", admin=True)
    assert service.get_stack(twin.id, admin).id == twin.id
    assert service.identified_stack("web", mine.id, admin).id == mine.id
    with pytest.raises(StackNotFoundError):
        service.get_stack("web", admin)
    assert service.list_stacks(project=admin) == []
    assert {s.id for s in service.list_stacks(project=admin, all_projects=True)} == {mine.id, twin.id}

    # The empty project is nobody's: not even the stacks made without a project.
    cli = service.create_stack("cli", Source(TEMPLATE))
    assert cli.project_id == "" and service.get_stack("cli").id == cli.id
    nobody = Project("")
    for name_or_id in ("cli", cli.id):
        with pytest.raises(StackNotFoundError):
            service.get_stack(name_or_id, nobody)
    with pytest.raises(StackNotFoundError):
        service.identified_stack("cli", cli.id, nobody)
    assert service.list_stacks(project=nobody) == []

    # Without a project (the embedded CLI), every stack is found, as before.
    assert {s.id for s in service.list_stacks()} == {mine.id, twin.id, cli.id}
    assert service.get_stack(twin.id).id == twin.id
    deleted = service.delete_stack(mine.id)
    assert deleted.state == "DELETE_COMPLETE"
    with pytest.raises(StackNotFoundError):
        service.identified_stack("web", mine.id, a)
    assert service.identified_stack("web", mine.id, a, deleted=True).id == mine.id
    with pytest.raises(StackNotFoundError):
        service.identified_stack("web", mine.id, b, deleted=True)
