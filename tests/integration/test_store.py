"""The store against real databases: every test runs on a SQLite file and on PostgreSQL.

These tests go through ``Store``'s public methods only, except where the behaviour under
test belongs to the schema itself (cascading deletes), which no ``Store`` method exposes.
The writer under concurrency is tested in ``test_store_writer.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from stoker.store import EventRecord, StackRecord, Store, tables
from stoker.store.repository import HEAD_REVISION, StackNameTakenError
from tests.support.records import make_event, make_resource, make_stack, new_id

# -- schema -------------------------------------------------------------------------------


def test_store_migrate_twice_is_harmless(database_url: str) -> None:
    store = Store(database_url)
    try:
        store.migrate()
        stack = make_stack(store, created_at=datetime(2024, 1, 1))
        store.migrate()
        assert store.get_stack(stack.id) == stack
        with store.engine.connect() as connection:
            versions = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
        assert versions == [HEAD_REVISION]
    finally:
        store.close()


def test_store_migrate_from_second_store_keeps_data(database_url: str) -> None:
    first = Store(database_url)
    try:
        first.migrate()
        stack = make_stack(first)
    finally:
        first.close()
    second = Store(database_url)
    try:
        second.migrate()
        found = second.get_stack(stack.id)
        assert found is not None
        assert found.name == "web"
    finally:
        second.close()


# -- templates ----------------------------------------------------------------------------


def test_template_round_trips_nested_json_and_unicode(store: Store) -> None:
    template = {
        "heat_template_version": "2021-04-16",
        "description": "Ünïcödé — 雪 ❄ emoji 🚀 and \"quotes\" and \\ backslash",
        "parameters": {"count": {"type": "number", "default": 3, "constraints": [{"range": {"min": 1, "max": 9}}]}},
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": {"get_param": "count"},
                    "resource_def": {"type": "OS::Heat::None", "properties": {"deep": [[1, [2, [3, {"x": None}]]]]}},
                },
            }
        },
        "outputs": {"flag": {"value": True}, "ratio": {"value": 0.25}, "empty": {"value": {}}},
    }
    files = {"file:///nested.yaml": "heat_template_version: 2021-04-16\ndescription: ñ\n"}
    environment = {"parameters": {"count": 2}, "resource_registry": {"My::Type": "file:///nested.yaml"}}

    template_id = store.store_template(template, files, environment)
    stored = store.get_template(template_id)

    assert stored.id == template_id
    assert stored.template == template
    assert stored.files == files
    assert stored.environment == environment


def test_template_store_gives_distinct_ids(store: Store) -> None:
    first = store.store_template({"a": 1}, {}, {})
    second = store.store_template({"a": 2}, {}, {})
    assert first != second
    assert store.get_template(first).template == {"a": 1}
    assert store.get_template(second).template == {"a": 2}


# -- stacks -------------------------------------------------------------------------------


def test_stack_create_then_get_round_trips_every_field(store: Store) -> None:
    template_id = store.store_template({"t": 1}, {}, {})
    previous_template_id = store.store_template({"t": 0}, {}, {})
    created = datetime(2024, 5, 6, 7, 8, 9, 123456)
    record = StackRecord(
        id=new_id(),
        name="database",
        action="CREATE",
        status="COMPLETE",
        status_reason="Stack CREATE completed successfully",
        raw_template_id=template_id,
        parameters={"flavor": "m1.small", "count": 3, "nested": {"list": [1, "two", None]}},
        disable_rollback=False,
        timeout_mins=60,
        tags=["prod", "ümlaut"],
        project_id="project-1",
        prev_raw_template_id=previous_template_id,
        created_at=created,
    )
    store.create_stack(record)

    assert store.get_stack(record.id) == record


def test_stack_create_fills_created_at(store: Store) -> None:
    stack = make_stack(store)
    found = store.get_stack(stack.id)
    assert found is not None
    assert isinstance(found.created_at, datetime)
    assert found.updated_at is None
    assert found.deleted_at is None


def test_stack_create_with_event_writes_both(store: Store) -> None:
    template_id = store.store_template({}, {}, {})
    record = StackRecord(new_id(), "with-event", "CREATE", "IN_PROGRESS", "", template_id, {})
    event = make_event(record.id, "with-event", "CREATE", "IN_PROGRESS", "Stack CREATE started")

    store.create_stack(record, event)

    assert store.get_stack(record.id) is not None
    assert isinstance(event.id, int)
    assert [e.uuid for e in store.events.list_events(record.id)] == [event.uuid]


def test_stack_get_unknown_id_returns_none(store: Store) -> None:
    assert store.get_stack(new_id()) is None


def test_find_stack_by_id_and_by_name(store: Store) -> None:
    stack = make_stack(store, "frontend")
    make_stack(store, "backend")

    by_id = store.find_stack(stack.id)
    by_name = store.find_stack("frontend")

    assert by_id is not None and by_id.id == stack.id
    assert by_name is not None and by_name.id == stack.id
    assert store.find_stack("nonexistent") is None


def test_store_refuses_a_second_live_stack_of_a_name(store: Store) -> None:
    old = make_stack(store, "app", created_at=datetime(2024, 1, 1))
    with pytest.raises(StackNameTakenError):
        make_stack(store, "app", created_at=datetime(2024, 1, 2))
    # Another project may have it; so may a new stack once the old one is deleted.
    make_stack(store, "app", created_at=datetime(2023, 1, 1), project_id="other")
    store.update_stack(old.id, deleted_at=datetime(2024, 1, 3))
    new = make_stack(store, "app", created_at=datetime(2024, 1, 4))
    found = store.find_stack("app")
    assert found is not None and found.id == new.id


def test_find_stack_skips_deleted_stack_by_id_and_by_name(store: Store) -> None:
    stack = make_stack(store, "gone")

    store.update_stack(stack.id, action="DELETE", status="COMPLETE", deleted_at=datetime(2024, 2, 2))

    assert store.find_stack(stack.id) is None
    assert store.find_stack("gone") is None
    # get_stack is the engine's lookup by id and still sees the deleted row.
    deleted = store.get_stack(stack.id)
    assert deleted is not None
    assert deleted.deleted_at == datetime(2024, 2, 2)
    assert deleted.state == "DELETE_COMPLETE"


def test_list_stacks_hides_deleted_unless_include_deleted(store: Store) -> None:
    first = make_stack(store, "first", created_at=datetime(2024, 1, 1))
    second = make_stack(store, "second", created_at=datetime(2024, 1, 2))
    third = make_stack(store, "third", created_at=datetime(2024, 1, 3))

    store.update_stack(second.id, deleted_at=datetime(2024, 1, 4))

    assert [s.id for s in store.list_stacks()] == [first.id, third.id]
    assert [s.id for s in store.list_stacks(include_deleted=True)] == [first.id, second.id, third.id]


def test_list_stacks_leaves_out_stacks_with_a_hidden_tag(store: Store) -> None:
    plain = make_stack(store, "plain", created_at=datetime(2024, 1, 1))
    hidden = make_stack(store, "hidden", created_at=datetime(2024, 1, 2), tags=["keep", "me_too"])
    tagged = make_stack(store, "tagged", created_at=datetime(2024, 1, 3), tags=["keep"])

    assert [s.id for s in store.list_stacks(hidden_tags=["hide_me", "me_too"])] == [plain.id, tagged.id]
    assert [s.id for s in store.list_stacks()] == [plain.id, hidden.id, tagged.id]


def test_services_report_delete_and_list(store: Store) -> None:
    now = datetime(2024, 5, 1, 12, 0, 0)
    row = {"engine_id": new_id(), "host": "h", "hostname": "h", "binary": "heat-engine", "topic": "engine", "report_interval": 60, "created_at": now, "updated_at": now, "deleted_at": None}
    first, second = new_id(), new_id()
    store.serving.add_service({**row, "id": first})
    store.serving.add_service({**row, "id": second, "created_at": now + timedelta(seconds=1)})
    assert [s["id"] for s in store.serving.list_services()] == [first, second]
    store.serving.report_service(first, now + timedelta(seconds=60))
    assert store.serving.list_services()[0]["updated_at"] == now + timedelta(seconds=60)
    store.serving.delete_services([second], now + timedelta(seconds=61))
    assert [s["id"] for s in store.serving.list_services()] == [first]


def test_list_stacks_orders_by_created_at(store: Store) -> None:
    base = datetime(2024, 3, 1)
    later = make_stack(store, "later", created_at=base + timedelta(hours=2))
    earliest = make_stack(store, "earliest", created_at=base)
    middle = make_stack(store, "middle", created_at=base + timedelta(hours=1))

    assert [s.name for s in store.list_stacks()] == [earliest.name, middle.name, later.name]


def test_update_stack_with_event_writes_both_in_one_call(store: Store) -> None:
    stack = make_stack(store)
    event = make_event(stack.id, stack.name, "CREATE", "COMPLETE", "Stack CREATE completed successfully")

    store.update_stack(stack.id, event, status="COMPLETE", status_reason="Stack CREATE completed successfully")

    found = store.get_stack(stack.id)
    assert found is not None
    assert found.state == "CREATE_COMPLETE"
    assert found.status_reason == "Stack CREATE completed successfully"
    assert isinstance(found.updated_at, datetime)
    # An event written with a state change gets its id from the database (batched
    # inserts do not hand it back); its time is set when it is queued.
    assert isinstance(event.created_at, datetime)
    events = store.events.list_events(stack.id)
    assert [(e.uuid, e.resource_status_reason) for e in events] == [(event.uuid, "Stack CREATE completed successfully")]
    assert isinstance(events[0].id, int)


def test_update_stack_rolls_back_fields_when_event_fails(store: Store) -> None:
    stack = make_stack(store)
    first = make_event(stack.id, stack.name, "CREATE", "IN_PROGRESS")
    store.events.add_event(first)
    duplicate = make_event(stack.id, stack.name, "CREATE", "FAILED")
    duplicate.uuid = first.uuid

    with pytest.raises(sa.exc.IntegrityError):
        store.update_stack(stack.id, duplicate, status="FAILED")

    found = store.get_stack(stack.id)
    assert found is not None and found.status == "IN_PROGRESS"
    assert [e.id for e in store.events.list_events(stack.id)] == [first.id]


def test_update_stack_keeps_explicit_updated_at(store: Store) -> None:
    stack = make_stack(store)
    when = datetime(2030, 1, 1, 12, 0, 0)
    store.update_stack(stack.id, updated_at=when, status="COMPLETE")
    found = store.get_stack(stack.id)
    assert found is not None and found.updated_at == when


# -- resources ----------------------------------------------------------------------------


def test_insert_resources_fills_ids_in_order_for_many_rows(store: Store) -> None:
    stack = make_stack(store)
    records = [make_resource(stack.id, f"server_{index:04d}") for index in range(500)]

    store.insert_resources(records)

    ids = [record.id for record in records]
    assert all(isinstance(record_id, int) for record_id in ids)
    assert len(set(ids)) == len(ids)
    # Rows are inserted in the order given, so ids ascend in that order.
    assert ids == sorted(ids)
    listed = store.list_resources(stack.id)
    assert [(r.id, r.uuid, r.name) for r in listed] == [(r.id, r.uuid, r.name) for r in records]


def test_insert_resources_round_trips_fields(store: Store) -> None:
    stack = make_stack(store)
    created = datetime(2024, 7, 8, 9, 10, 11, 654321)
    record = make_resource(
        stack.id,
        "volume",
        action="CREATE",
        status="FAILED",
        status_reason="quota exceeded — ünïcode",
        physical_resource_id="vol-1",
        properties={"size": 10, "metadata": {"k": "v"}},
        attributes={"id": "vol-1", "list": [1, 2]},
        data={"secret": "s"},
        definition={"type": "OS::Cinder::Volume", "properties": {"size": 10}},
        handler_token={"token": ["a", 1]},
        current=False,
        replaces=7,
        replaced_by=9,
        created_at=created,
    )

    store.insert_resources([record])

    [found] = store.list_resources(stack.id)
    assert found == record


def test_insert_resources_with_no_records_is_a_no_op(store: Store) -> None:
    stack = make_stack(store)
    store.insert_resources([])
    store.insert_resources(iter(()))
    assert store.list_resources(stack.id) == []


def test_insert_resources_accepts_a_generator(store: Store) -> None:
    stack = make_stack(store)
    records = [make_resource(stack.id, name) for name in ("a", "b", "c")]
    store.insert_resources(record for record in records)
    assert all(isinstance(record.id, int) for record in records)
    assert [r.name for r in store.list_resources(stack.id)] == ["a", "b", "c"]


def test_update_resource_with_event_writes_both(store: Store) -> None:
    stack = make_stack(store)
    record = make_resource(stack.id, "server")
    store.insert_resources([record])
    assert record.id is not None
    event = make_event(stack.id, "server", "CREATE", "COMPLETE", "state changed")

    store.update_resource(
        record, event, action="CREATE", status="COMPLETE", physical_resource_id="srv-1", handler_token=None
    )

    [found] = store.list_resources(stack.id)
    assert found.state == "CREATE_COMPLETE"
    assert found.physical_resource_id == "srv-1"
    assert found.handler_token is None
    assert isinstance(found.updated_at, datetime)
    assert [(e.uuid, e.resource_name, e.resource_status) for e in store.events.list_events(stack.id)] == [
        (event.uuid, "server", "COMPLETE")
    ]


def test_update_resource_without_event_writes_no_event(store: Store) -> None:
    stack = make_stack(store)
    record = make_resource(stack.id, "server")
    store.insert_resources([record])
    assert record.id is not None

    store.update_resource(record, status_reason="polling")

    [found] = store.list_resources(stack.id)
    assert found.status_reason == "polling"
    assert store.events.list_events(stack.id) == []


def test_update_resource_touches_only_the_given_row(store: Store) -> None:
    stack = make_stack(store)
    first, second = make_resource(stack.id, "first"), make_resource(stack.id, "second")
    store.insert_resources([first, second])
    assert first.id is not None

    store.update_resource(first, status="FAILED")

    states = {r.name: (r.status, r.updated_at) for r in store.list_resources(stack.id)}
    assert states["first"][0] == "FAILED"
    assert states["second"] == ("COMPLETE", None)


def test_list_resources_orders_by_id_and_filters_by_stack(store: Store) -> None:
    stack = make_stack(store, "one")
    other = make_stack(store, "two")
    # Names chosen so that name order differs from insertion (id) order.
    first_batch = [make_resource(stack.id, name) for name in ("zeta", "alpha")]
    other_batch = [make_resource(other.id, "elsewhere")]
    second_batch = [make_resource(stack.id, name) for name in ("mu", "beta")]
    store.insert_resources(first_batch)
    store.insert_resources(other_batch)
    store.insert_resources(second_batch)

    assert [r.name for r in store.list_resources(stack.id)] == ["zeta", "alpha", "mu", "beta"]
    assert [r.name for r in store.list_resources(other.id)] == ["elsewhere"]
    assert store.list_resources(new_id()) == []


def test_list_resources_filters_by_status(store: Store) -> None:
    stack = make_stack(store)
    store.insert_resources([make_resource(stack.id, "done", status="COMPLETE"), make_resource(stack.id, "busy", status="IN_PROGRESS")])
    assert [r.name for r in store.list_resources(stack.id, status="IN_PROGRESS")] == ["busy"]


def test_count_tree_resources_counts_a_stack_and_every_live_nested_stack(store: Store) -> None:
    """What max_resources_per_stack limits (Heat's total_resources): the current rows of
    the root and of its nested stacks at every depth; not a deleted nested stack's, not
    a replaced row, not another tree's."""
    root = make_stack(store, "root")
    child = make_stack(store, "child", owner_id=root.id, owner_resource="group", nested_depth=1)
    grandchild = make_stack(store, "grandchild", owner_id=child.id, owner_resource="0", nested_depth=2)
    gone = make_stack(store, "gone", owner_id=root.id, owner_resource="old", nested_depth=1)
    other = make_stack(store, "other")
    store.insert_resources([make_resource(root.id, "group"), make_resource(root.id, "old"), make_resource(root.id, "replaced", current=False)])
    store.insert_resources([make_resource(child.id, name) for name in ("0", "1")])
    store.insert_resources([make_resource(grandchild.id, name) for name in ("a", "b", "c")])
    store.insert_resources([make_resource(gone.id, "x"), make_resource(other.id, "y")])
    store.update_stack(gone.id, deleted_at=datetime(2026, 1, 1))

    assert store.count_tree_resources(root.id) == 2 + 2 + 3
    assert store.count_tree_resources(child.id) == 2 + 3
    assert store.count_tree_resources(other.id) == 1
    assert store.count_tree_resources(new_id()) == 0


def test_delete_resources_removes_only_the_given_rows(store: Store) -> None:
    stack = make_stack(store)
    records = [make_resource(stack.id, name) for name in ("a", "b", "c", "d")]
    store.insert_resources(records)

    store.delete_resources(stack.id, (record.id for record in records if record.name in ("b", "d")))

    assert [r.name for r in store.list_resources(stack.id)] == ["a", "c"]


def test_delete_resources_with_no_ids_is_a_no_op(store: Store) -> None:
    stack = make_stack(store)
    store.insert_resources([make_resource(stack.id, "a")])
    store.delete_resources(stack.id, [])
    assert [r.name for r in store.list_resources(stack.id)] == ["a"]


# -- events -------------------------------------------------------------------------------


@pytest.fixture
def stack_with_events(store: Store) -> tuple[StackRecord, list[EventRecord]]:
    stack = make_stack(store)
    other = make_stack(store, "other")
    events = []
    for index in range(12):
        name = ("server", "volume", "port")[index % 3]
        event = make_event(stack.id, name, reason=f"event {index}")
        store.events.add_event(event)
        events.append(event)
        store.events.add_event(make_event(other.id, name, reason=f"other {index}"))
    return stack, events


def test_list_events_returns_the_stack_events_in_id_order(
    store: Store, stack_with_events: tuple[StackRecord, list[EventRecord]]
) -> None:
    stack, events = stack_with_events

    listed = store.events.list_events(stack.id)

    assert [e.uuid for e in listed] == [e.uuid for e in events]
    assert [e.id for e in listed] == sorted(e.id for e in listed)
    assert listed == events


def test_list_events_filters_by_resource_name(
    store: Store, stack_with_events: tuple[StackRecord, list[EventRecord]]
) -> None:
    stack, events = stack_with_events

    listed = store.events.list_events(stack.id, resource_name="volume")

    assert [e.resource_status_reason for e in listed] == ["event 1", "event 4", "event 7", "event 10"]
    assert store.events.list_events(stack.id, resource_name="missing") == []


def test_list_events_filters_after_id(
    store: Store, stack_with_events: tuple[StackRecord, list[EventRecord]]
) -> None:
    stack, events = stack_with_events
    marker = events[5].id

    listed = store.events.list_events(stack.id, after_id=marker)

    assert [e.uuid for e in listed] == [e.uuid for e in events[6:]]
    assert store.events.list_events(stack.id, after_id=events[-1].id) == []


def test_list_events_limits_from_the_oldest(
    store: Store, stack_with_events: tuple[StackRecord, list[EventRecord]]
) -> None:
    stack, events = stack_with_events

    assert [e.uuid for e in store.events.list_events(stack.id, limit=4)] == [e.uuid for e in events[:4]]
    assert store.events.list_events(stack.id, limit=0) == []


def test_list_events_combines_resource_name_after_id_and_limit(
    store: Store, stack_with_events: tuple[StackRecord, list[EventRecord]]
) -> None:
    stack, events = stack_with_events

    listed = store.events.list_events(stack.id, resource_name="server", after_id=events[0].id, limit=2)

    assert [e.resource_status_reason for e in listed] == ["event 3", "event 6"]


def test_list_events_pages_through_every_event_once(
    store: Store, stack_with_events: tuple[StackRecord, list[EventRecord]]
) -> None:
    stack, events = stack_with_events
    seen: list[str] = []
    after_id = None
    while page := store.events.list_events(stack.id, after_id=after_id, limit=5):
        seen.extend(e.uuid for e in page)
        after_id = page[-1].id
    assert seen == [e.uuid for e in events]


def test_add_event_fills_id_and_created_at(store: Store) -> None:
    stack = make_stack(store)
    event = make_event(stack.id, "server")
    store.events.add_event(event)
    assert isinstance(event.id, int)
    assert isinstance(event.created_at, datetime)
    [listed] = store.events.list_events(stack.id)
    assert listed.created_at == event.created_at


# -- JSON columns -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"nested": {"list": [1, 2.5, "three", None, True, {"deep": []}]}},
        [1, "two", {"three": 3}, [None]],
        None,
        {},
        [],
        "a string token",
        42,
        {"unicode": "ünïcödé 雪 🚀", "quote": "\"'\\"},
    ],
    ids=["dict", "list", "none", "empty-dict", "empty-list", "string", "int", "unicode"],
)
def test_resource_json_columns_keep_value(store: Store, value: object) -> None:
    stack = make_stack(store)
    record = make_resource(stack.id, "server", handler_token=value, data=value, properties=value)
    store.insert_resources([record])
    assert record.id is not None

    [inserted] = store.list_resources(stack.id)
    assert (inserted.handler_token, inserted.data, inserted.properties) == (value, value, value)

    store.update_resource(record, attributes=value, definition=value)
    [updated] = store.list_resources(stack.id)
    assert (updated.attributes, updated.definition) == (value, value)


def test_resource_json_columns_change_between_dict_list_and_none(store: Store) -> None:
    stack = make_stack(store)
    record = make_resource(stack.id, "server")
    store.insert_resources([record])
    assert record.id is not None

    for value in ({"token": {"phase": 1}}, ["step", 2], None, {"token": None}):
        store.update_resource(record, handler_token=value)
        [found] = store.list_resources(stack.id)
        assert found.handler_token == value


def test_stack_json_columns_keep_dict_and_list(store: Store) -> None:
    stack = make_stack(store, parameters={"a": {"b": [1, None]}}, tags=[])
    found = store.get_stack(stack.id)
    assert found is not None
    assert found.parameters == {"a": {"b": [1, None]}}
    assert found.tags == []

    store.update_stack(stack.id, parameters={}, tags=["x", "ÿ"])
    found = store.get_stack(stack.id)
    assert found is not None
    assert (found.parameters, found.tags) == ({}, ["x", "ÿ"])


# -- cascades declared by the schema --------------------------------------------------------


def test_stack_row_delete_cascades_to_resources_and_events(store: Store) -> None:
    stack = make_stack(store, "doomed")
    survivor = make_stack(store, "survivor")
    store.insert_resources([make_resource(stack.id, "a"), make_resource(stack.id, "b")])
    store.insert_resources([make_resource(survivor.id, "kept")])
    store.events.add_event(make_event(stack.id, "a"))
    store.events.add_event(make_event(survivor.id, "kept"))

    # No Store method deletes stack rows; ondelete=CASCADE is the schema's promise, so
    # exercise it with plain SQL on the store's own engine (its connections are the ones
    # that must enforce foreign keys; on SQLite that needs PRAGMA foreign_keys=ON).
    with store.engine.begin() as connection:
        if store.is_sqlite:
            assert connection.execute(sa.text("PRAGMA foreign_keys")).scalar() == 1
        connection.execute(tables.stacks.delete().where(tables.stacks.c.id == stack.id))

    assert store.get_stack(stack.id) is None
    assert store.list_resources(stack.id) == []
    assert store.events.list_events(stack.id) == []
    with store.engine.connect() as connection:
        orphans = connection.execute(
            sa.select(sa.func.count()).select_from(tables.resources).where(tables.resources.c.stack_id == stack.id)
        ).scalar()
    assert orphans == 0
    assert [r.name for r in store.list_resources(survivor.id)] == ["kept"]
    assert len(store.events.list_events(survivor.id)) == 1


def test_resource_insert_for_unknown_stack_is_rejected(store: Store) -> None:
    # The foreign key is enforced on both databases (on SQLite only with foreign_keys=ON).
    with pytest.raises(sa.exc.IntegrityError):
        store.insert_resources([make_resource(new_id(), "orphan")])
