"""Software deployments in the store and through ``engine.software_deployments``, and
the purpose of signal credentials, on a SQLite file and on PostgreSQL (the ``store``
fixture runs each test on both)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from stoker.engine.software_configs import StoredSoftwareConfigs
from stoker.engine.software_deployments import StoredSoftwareDeployments
from stoker.engine.stack import _Hooks
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.software_config import (
    DeploymentConfigNotFoundError,
    SoftwareDeploymentNotFoundError,
    software_deployments,
)
from stoker.store import Store
from stoker.store.records import SignalCredentialRecord, SoftwareDeploymentRecord
from tests.support.records import make_resource, make_stack, new_id


def _record(server_id: str, created_at: datetime, deployment_id: str | None = None, **fields) -> SoftwareDeploymentRecord:
    return SoftwareDeploymentRecord(id=deployment_id or new_id(), config_id=new_id(), server_id=server_id, created_at=created_at, **fields)


# -- the store ---------------------------------------------------------------------------


def test_software_deployment_round_trips(store: Store) -> None:
    record = _record(
        "server-1",
        datetime(2024, 1, 1, 12, 0, 0, 123456),
        input_values={"ü": [1, {"x": None}]},
        output_values={"deploy_status_code": 0},
        action="CREATE",
        status="IN_PROGRESS",
        status_reason="Deploy data available",
        tenant="demo",
        stack_user_project_id="p" * 64,
    )
    assert store.software_configs.create_software_deployment(record) is True
    assert store.software_configs.get_software_deployment(record.id) == record


def test_software_deployment_defaults_and_nulls_round_trip(store: Store) -> None:
    record = SoftwareDeploymentRecord(id=new_id(), config_id=new_id(), server_id="s")
    store.software_configs.create_software_deployment(record)
    found = store.software_configs.get_software_deployment(record.id)
    assert found is not None and found.created_at is not None and found.updated_at is None
    assert (found.input_values, found.output_values, found.action, found.status, found.status_reason) == (None, None, "INIT", "COMPLETE", "")


def test_software_deployment_with_a_taken_id_is_refused_and_changes_nothing(store: Store) -> None:
    first = _record("s", datetime(2024, 1, 1))
    store.software_configs.create_software_deployment(first)
    twin = _record("other", datetime(2024, 1, 2), deployment_id=first.id)
    assert store.software_configs.create_software_deployment(twin) is False
    assert store.software_configs.get_software_deployment(first.id) == first


def test_software_deployment_get_unknown_is_none(store: Store) -> None:
    assert store.software_configs.get_software_deployment(new_id()) is None


def test_software_deployment_list_is_oldest_first_and_filters_by_server(store: Store) -> None:
    start = datetime(2024, 1, 1)
    # Two made at the same time: the id decides their order.
    same_time = sorted([new_id(), new_id()])
    records = [
        _record("b", start + timedelta(seconds=2)),
        _record("a", start + timedelta(seconds=1), same_time[1]),
        _record("a", start + timedelta(seconds=1), same_time[0]),
        _record("a", start),
    ]
    for record in records:
        store.software_configs.create_software_deployment(record)
    assert [r.id for r in store.software_configs.list_software_deployments()] == [records[3].id, same_time[0], same_time[1], records[0].id]
    assert [r.id for r in store.software_configs.list_software_deployments(server_id="a")] == [records[3].id, same_time[0], same_time[1]]
    assert store.software_configs.list_software_deployments(server_id="nobody") == []


def test_software_deployment_update_changes_only_the_fields_given(store: Store) -> None:
    record = _record("s", datetime(2024, 1, 1), status="IN_PROGRESS", tenant="demo")
    store.software_configs.create_software_deployment(record)
    when = datetime(2024, 2, 1, 8, 30)
    updated = store.software_configs.update_software_deployment(record.id, status="COMPLETE", output_values={"result": "ü"}, updated_at=when)
    assert updated is not None
    assert (updated.status, updated.output_values, updated.updated_at) == ("COMPLETE", {"result": "ü"}, when)
    assert (updated.action, updated.tenant, updated.created_at) == (record.action, "demo", record.created_at)
    assert store.software_configs.get_software_deployment(record.id) == updated
    assert store.software_configs.update_software_deployment(new_id(), status="FAILED") is None
    with pytest.raises(TypeError, match="server_id"):
        store.software_configs.update_software_deployment(record.id, server_id="moved")


def test_software_deployment_update_guarded_by_status(store: Store) -> None:
    record = _record("s", datetime(2024, 1, 1), status="IN_PROGRESS")
    store.software_configs.create_software_deployment(record)
    done = store.software_configs.update_software_deployment(record.id, when_status="IN_PROGRESS", status="COMPLETE")
    assert done is not None and done.status == "COMPLETE"
    assert store.software_configs.update_software_deployment(record.id, when_status="IN_PROGRESS", status="FAILED") is None
    assert store.software_configs.get_software_deployment(record.id).status == "COMPLETE"


def test_software_deployment_delete(store: Store) -> None:
    record = _record("s", datetime(2024, 1, 1))
    store.software_configs.create_software_deployment(record)
    assert store.software_configs.delete_software_deployment(record.id) is True
    assert store.software_configs.get_software_deployment(record.id) is None
    assert store.software_configs.delete_software_deployment(record.id) is False


# -- signal credentials' purpose ----------------------------------------------------------


def _credential(stack_id: str, resource: str, purpose: str | None = None) -> SignalCredentialRecord:
    return SignalCredentialRecord(new_id(), stack_id, resource, "0" * 64, purpose=purpose)


def test_signal_credentials_carry_their_purpose(store: Store) -> None:
    stack = make_stack(store)
    resource = new_id()
    plain, metadata = _credential(stack.id, resource), _credential(stack.id, resource, "metadata")
    store.signals.add_signal_credential(plain)
    store.signals.add_signal_credential(metadata)
    assert store.signals.get_signal_credential(metadata.id).purpose == "metadata"
    assert store.signals.get_signal_credential(plain.id).purpose is None
    # A metadata credential leaves the signal credential be, and the other way round.
    assert {(c.id, c.purpose) for c in store.signals.signal_credentials(resource)} == {(plain.id, None), (metadata.id, "metadata")}


def test_signal_credential_revokes_only_those_of_its_purpose(store: Store) -> None:
    stack = make_stack(store)
    resource = new_id()
    old_plain, old_signal, metadata = _credential(stack.id, resource), _credential(stack.id, resource, "signal"), _credential(stack.id, resource, "metadata")
    store.signals.add_signal_credential(old_plain)
    store.signals.add_signal_credential(metadata)
    # None and "signal" are one purpose: an ordinary credential replaces either.
    store.signals.add_signal_credential(old_signal)
    assert {c.id for c in store.signals.signal_credentials(resource)} == {old_signal.id, metadata.id}
    newer_metadata = _credential(stack.id, resource, "metadata")
    store.signals.add_signal_credential(newer_metadata)
    assert {c.id for c in store.signals.signal_credentials(resource)} == {old_signal.id, newer_metadata.id}
    assert store.signals.get_signal_credential(metadata.id).revoked_at is not None
    assert store.signals.revoke_signal_credentials(resource) == 2
    assert store.signals.signal_credentials(resource) == []


# -- engine.software_deployments ------------------------------------------------------------


def _config(store: Store, name: str = "c", outputs: list | None = None, tenant: str = "demo") -> dict:
    return StoredSoftwareConfigs(store, tenant=tenant).create(name=name, group="script", config="#!/bin/sh", outputs=outputs)


def test_stored_deployments_answer_in_heat_shape(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    config = _config(store)
    created = deployments.create(server_id="server-1", config_id=config["id"], input_values={"foo": "ü"}, action="CREATE", status="IN_PROGRESS", status_reason="Deploy data available")
    assert created == {
        "id": created["id"],
        "server_id": "server-1",
        "input_values": {"foo": "ü"},
        "output_values": None,
        "action": "CREATE",
        "status": "IN_PROGRESS",
        "status_reason": "Deploy data available",
        "config_id": config["id"],
        "creation_time": created["creation_time"],
    }
    assert created["creation_time"].endswith("Z")
    assert deployments.show(created["id"]) == created
    assert deployments.list() == [created]
    assert deployments.list(server_id="server-1") == [created]
    assert deployments.list(server_id="") == [created]  # Heat filters only by a server id given
    assert deployments.list(server_id="other") == []
    assert store.software_configs.get_software_deployment(created["id"]).tenant == "demo"
    deployments.delete(created["id"])
    with pytest.raises(SoftwareDeploymentNotFoundError, match=f"Deployment with id {created['id']} not found"):
        deployments.show(created["id"])
    with pytest.raises(SoftwareDeploymentNotFoundError):
        deployments.delete(created["id"])


def test_stored_deployments_take_a_given_id_once(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    config = _config(store)
    wanted = new_id()
    assert deployments.create(server_id="s", config_id=config["id"], deployment_id=wanted)["id"] == wanted
    with pytest.raises(ValidationError, match="exists already"):
        deployments.create(server_id="s", config_id=config["id"], deployment_id=wanted)


def test_stored_deployments_refuse_unknown_configs_and_bad_fields_and_store_nothing(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    missing = new_id()
    with pytest.raises(DeploymentConfigNotFoundError, match=f"Config with id {missing} not found"):
        deployments.create(server_id="s", config_id=missing)
    config = _config(store)
    with pytest.raises(ValidationError, match='"stack_user_project_id" should be no more than 64 characters'):
        deployments.create(server_id="s", config_id=config["id"], stack_user_project_id="p" * 65)
    with pytest.raises(ValidationError, match='"server_id" should be no more than 255'):
        deployments.create(server_id="s" * 256, config_id=config["id"])
    assert store.software_configs.list_software_deployments() == []


def test_stored_deployment_update_follows_heats_truthy_rule(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    config, other = _config(store, "one"), _config(store, "two")
    created = deployments.create(server_id="s", config_id=config["id"], input_values={"a": 1}, status_reason="made")
    # Empty values change nothing (Heat's rule); updated_time is now when not given.
    unchanged = deployments.update(created["id"], input_values={}, status_reason="", action="")
    assert {k: unchanged[k] for k in ("input_values", "status_reason", "action")} == {"input_values": {"a": 1}, "status_reason": "made", "action": "INIT"}
    assert unchanged["updated_time"].endswith("Z")
    changed = deployments.update(created["id"], config_id=other["id"], status="FAILED", updated_at="2024-03-01T10:00:00+02:00")
    assert (changed["config_id"], changed["status"], changed["updated_time"]) == (other["id"], "FAILED", "2024-03-01T08:00:00Z")
    with pytest.raises(DeploymentConfigNotFoundError):
        deployments.update(created["id"], config_id=new_id())
    with pytest.raises(SoftwareDeploymentNotFoundError):
        deployments.update(new_id(), status="COMPLETE")
    with pytest.raises(ValidationError, match="updated_at"):
        deployments.update(created["id"], updated_at="last tuesday")


def test_stored_deployment_signal_completes_then_is_ignored(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    config = _config(store, outputs=[{"name": "result"}, {"name": "unused"}])
    created = deployments.create(server_id="s", config_id=config["id"], status="IN_PROGRESS")
    reason = deployments.signal(created["id"], {"result": "ü", "deploy_stdout": "done", "deploy_status_code": 0, "stray": 1}, "2024-01-01T00:00:05Z")
    assert reason == f"deployment {created['id']} succeeded"
    shown = deployments.show(created["id"])
    assert (shown["status"], shown["status_reason"], shown["updated_time"]) == ("COMPLETE", "Outputs received", "2024-01-01T00:00:05Z")
    assert shown["output_values"] == {"result": "ü", "deploy_stdout": "done", "deploy_stderr": None, "deploy_status_code": 0}
    # Only an IN_PROGRESS deployment takes outputs.
    assert deployments.signal(created["id"], {"deploy_status_code": 1}) is None
    assert deployments.show(created["id"]) == shown
    with pytest.raises(SoftwareDeploymentNotFoundError):
        deployments.signal(new_id(), {})


def test_stored_deployment_signal_fails_on_status_code_and_error_output(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    config = _config(store, outputs=[{"name": "oops", "error_output": True}])
    created = deployments.create(server_id="s", config_id=config["id"], status="IN_PROGRESS")
    reason = deployments.signal(created["id"], {"deploy_status_code": 3, "oops": "disk full"})
    assert reason == f"deployment {created['id']} failed"
    shown = deployments.show(created["id"])
    assert shown["status"] == "FAILED"
    assert shown["status_reason"] == "deploy_status_code : Deployment exited with non-zero status code: 3, oops : disk full"


def test_stored_deployment_signals_at_once_finish_it_once(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    config = _config(store)
    created = deployments.create(server_id="s", config_id=config["id"], status="IN_PROGRESS")
    with ThreadPoolExecutor(8) as pool:
        reasons = list(pool.map(lambda n: deployments.signal(created["id"], {"deploy_stdout": str(n)}), range(8)))
    assert sum(reason is not None for reason in reasons) == 1
    assert deployments.show(created["id"])["status"] == "COMPLETE"


def test_stored_deployment_metadata_is_the_servers_configs_by_name(store: Store) -> None:
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    zed, alpha, gone, elsewhere = _config(store, "zed"), _config(store, "alpha"), _config(store, "gone"), _config(store, "elsewhere")
    for config in (zed, alpha, gone):
        deployments.create(server_id="s", config_id=config["id"])
    deployments.create(server_id="other", config_id=elsewhere["id"])
    StoredSoftwareConfigs(store, tenant="demo").delete(gone["id"])
    assert deployments.metadata("s") == [alpha, zed]
    assert deployments.metadata("nobody") == []
    with pytest.raises(ValidationError, match="server_id must be specified"):
        deployments.metadata("")


def test_engine_hooks_offer_the_stored_deployments_to_plugins(store: Store) -> None:
    stack = make_stack(store, project_id="project-7")
    record = make_resource(stack.id, "deployment")
    hooks = _Hooks(store, record, clock=None, clients=None)
    resource = SimpleNamespace(_hooks=hooks, type="OS::Heat::SoftwareDeployment", name="deployment")
    offered = software_deployments(resource)
    assert isinstance(offered, StoredSoftwareDeployments)
    created = offered.create(server_id="s", config_id=_config(store, tenant="project-7")["id"])
    assert store.software_configs.get_software_deployment(created["id"]).tenant == "project-7"
    assert software_deployments(SimpleNamespace(_hooks=object(), type="T", name="n"), required=False) is None
    with pytest.raises(Exception, match="needs the engine's software deployment store"):
        software_deployments(SimpleNamespace(_hooks=object(), type="T", name="n"))


def test_stored_deployment_create_answers_what_a_show_will(store: Store) -> None:
    # PostgreSQL's JSON keeps a number as a numeric: 1e300 comes back an integer.
    deployments = StoredSoftwareDeployments(store, tenant="demo")
    created = deployments.create(server_id="s", config_id=_config(store)["id"], input_values={"big": 1.5e300, "small": -1e-5})
    assert deployments.show(created["id"]) == created
