"""Software configs in the store and through ``engine.software_configs``, on a SQLite
file and on PostgreSQL (the ``store`` fixture runs each test on both)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from stoker.engine.software_configs import StoredSoftwareConfigs
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.software_config import SoftwareConfigNotFoundError
from stoker.store import Store
from stoker.store.records import SoftwareConfigRecord
from tests.support.records import make_stack, new_id


def _record(name: str, created_at: datetime, config_id: str | None = None, tenant: str = "demo") -> SoftwareConfigRecord:
    body = {"config": f"echo {name}", "inputs": [{"name": "a", "type": "String"}], "outputs": [], "options": {"ü": "ünïcode"}}
    return SoftwareConfigRecord(id=config_id or new_id(), name=name, group="script", config=body, tenant=tenant, created_at=created_at)


def test_software_config_round_trips(store: Store) -> None:
    record = _record("one", datetime(2024, 1, 1, 12, 0, 0, 123456))
    store.software_configs.create_software_config(record)
    assert store.software_configs.get_software_config(record.id) == record


def test_software_config_structured_config_and_null_fields_round_trip(store: Store) -> None:
    record = SoftwareConfigRecord(id=new_id(), name=None, group=None, config={"config": {"deep": [1, {"x": None}]}, "inputs": [], "outputs": [], "options": {}}, tenant="")
    store.software_configs.create_software_config(record)
    found = store.software_configs.get_software_config(record.id)
    assert found is not None and found.created_at is not None
    assert (found.name, found.group, found.config) == (None, None, record.config)


def test_software_config_get_unknown_is_none(store: Store) -> None:
    assert store.software_configs.get_software_config(new_id()) is None


def test_software_config_list_is_newest_first_and_pages_with_marker(store: Store) -> None:
    start = datetime(2024, 1, 1)
    # Two with the same creation time: the id decides their order, as in Heat.
    same_time = sorted([new_id(), new_id()])
    records = [
        _record("a", start),
        _record("b", start + timedelta(seconds=1), same_time[0]),
        _record("c", start + timedelta(seconds=1), same_time[1]),
        _record("d", start + timedelta(seconds=2)),
    ]
    for record in records:
        store.software_configs.create_software_config(record)
    listed = [record.name for record in store.software_configs.list_software_configs()]
    assert listed == ["d", "c", "b", "a"]
    assert [r.name for r in store.software_configs.list_software_configs(limit=2)] == ["d", "c"]
    c_id = records[2].id
    assert [r.name for r in store.software_configs.list_software_configs(marker=c_id)] == ["b", "a"]
    assert [r.name for r in store.software_configs.list_software_configs(limit=1, marker=c_id)] == ["b"]
    assert [r.name for r in store.software_configs.list_software_configs(marker=records[0].id)] == []
    assert store.software_configs.list_software_configs(limit=0) == []
    # An unknown marker is ignored, as Heat's pagination ignores it.
    assert [r.name for r in store.software_configs.list_software_configs(marker=new_id())] == listed


def test_software_config_list_filters_by_tenant(store: Store) -> None:
    store.software_configs.create_software_config(_record("mine", datetime(2024, 1, 1), tenant="demo"))
    store.software_configs.create_software_config(_record("theirs", datetime(2024, 1, 2), tenant="other"))
    assert [r.name for r in store.software_configs.list_software_configs(tenant="demo")] == ["mine"]
    assert [r.name for r in store.software_configs.list_software_configs()] == ["theirs", "mine"]


def test_software_config_delete(store: Store) -> None:
    record = _record("gone", datetime(2024, 1, 1))
    store.software_configs.create_software_config(record)
    assert store.software_configs.delete_software_config(record.id) is True
    assert store.software_configs.get_software_config(record.id) is None
    assert store.software_configs.delete_software_config(record.id) is False


def test_stored_software_configs_normalise_and_answer_in_heat_shape(store: Store) -> None:
    configs = StoredSoftwareConfigs(store, tenant="demo")
    created = configs.create(name="c", group="script", config="#!/bin/sh", inputs=[{"name": "foo"}], outputs=[{"name": "out"}], options=None)
    assert created == {
        "id": created["id"],
        "name": "c",
        "group": "script",
        "creation_time": created["creation_time"],
        "config": "#!/bin/sh",
        "inputs": [{"name": "foo", "type": "String"}],
        "outputs": [{"name": "out", "type": "String", "error_output": False}],
        "options": {},
    }
    assert created["creation_time"].endswith("Z")
    assert configs.show(created["id"]) == created
    assert configs.list() == [{key: created[key] for key in ("id", "name", "group", "creation_time")}]
    assert store.software_configs.get_software_config(created["id"]).tenant == "demo"
    configs.delete(created["id"])
    with pytest.raises(SoftwareConfigNotFoundError):
        configs.show(created["id"])
    with pytest.raises(SoftwareConfigNotFoundError):
        configs.delete(created["id"])


def test_stored_software_configs_refuse_bad_inputs_and_store_nothing(store: Store) -> None:
    configs = StoredSoftwareConfigs(store, tenant="demo")
    with pytest.raises(ValidationError, match="Unknown Property bogus"):
        configs.create(name="bad", group=None, config=None, inputs=[{"name": "x", "bogus": 1}])
    assert store.software_configs.list_software_configs() == []


def test_stored_software_configs_of_a_stack_belong_to_its_project(store: Store) -> None:
    stack = make_stack(store, project_id="project-7")
    created = StoredSoftwareConfigs(store, stack_id=stack.id).create(name="c", group=None, config="x")
    assert store.software_configs.get_software_config(created["id"]).tenant == "project-7"


def test_stored_software_configs_find_by_name_gives_the_newest(store: Store) -> None:
    store.software_configs.create_software_config(_record("twin", datetime(2024, 1, 1), tenant=""))
    newer = _record("twin", datetime(2024, 1, 2), tenant="")
    store.software_configs.create_software_config(newer)
    configs = StoredSoftwareConfigs(store, tenant="")
    assert configs.find_by_name("twin") == newer.id
    assert configs.find_by_name("nobody") is None
    assert [r.id for r in store.software_configs.list_software_configs(name="twin", limit=1)] == [newer.id]
