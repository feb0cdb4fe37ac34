"""Drift detection on a real store, with Test::LiveFile (tests/support/plugins): a
resource whose live object is a file, edited, chmodded or removed behind the stack's
back as a cloud object would be."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from stoker.engine.errors import ActionInProgressError, StackChangedError
from stoker.masking import MASK
from stoker.store.records import utcnow
from tests.support.stacks import template

PLUGINS = str(Path(__file__).resolve().parents[1] / "support" / "plugins")

INNER = """
heat_template_version: 2021-04-16
parameters:
  where: {type: string}
resources:
  deep:
    type: Test::LiveFile
    properties: {path: {get_param: where}, content: deep}
"""

BODY = """
heat_template_version: 2021-04-16
parameters:
  directory: {type: string}
  secret: {type: string, hidden: true, default: s3cr3t-value}
resources:
  notes:
    type: Test::LiveFile
    properties:
      path: {list_join: ['/', [{get_param: directory}, notes.txt]]}
      content: hello
      labels: [a, b]
  vault:
    type: Test::LiveFile
    properties:
      path: {list_join: ['/', [{get_param: directory}, vault.txt]]}
      content: {get_param: secret}
  word:
    type: OS::Heat::RandomString
  inner:
    type: inner.yaml
    properties:
      where: {list_join: ['/', [{get_param: directory}, deep.txt]]}
"""


@pytest.fixture
def drift_service(make_service, tmp_path):
    service = make_service(plugin_dirs=[PLUGINS])
    files = tmp_path / "files"
    files.mkdir()
    stack = service.create_stack(
        "s", template(BODY), [], {"directory": str(files)}, files={"inner.yaml": INNER}
    )
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    return service, files


def by_path(record):
    return {result["path"]: result for result in record.resources}


def test_drift_of_an_untouched_stack_is_none_on_every_run(drift_service):
    service, _ = drift_service
    for _ in range(3):
        record = service.detect_drift("s")
        results = by_path(record)
        assert {path: r["status"] for path, r in results.items()} == {
            "notes": "IN_SYNC",
            "vault": "IN_SYNC",
            "word": "NOT_CHECKED",
            "inner/deep": "IN_SYNC",
        }
        assert results["word"]["reason"] == "OS::Heat::RandomString has no live object to read"
        assert record.summary == {
            "stack_status": "IN_SYNC",
            "resources": 4,
            "in_sync": 3,
            "modified": 0,
            "deleted": 0,
            "not_checked": 1,
        }


def test_drift_reports_each_changed_property_with_expected_and_actual(drift_service):
    service, files = drift_service
    (files / "notes.txt").write_text("edited")
    os.chmod(files / "notes.txt", 0o600)
    (files / "notes.txt.labels").write_text("b\na\n")  # same labels, another order: no drift
    (files / "deep.txt").unlink()
    record = service.detect_drift("s")
    results = by_path(record)
    assert results["notes"]["status"] == "MODIFIED"
    assert results["notes"]["properties"] == [
        {"name": "content", "expected": "hello", "actual": "edited"},
        {"name": "mode", "expected": "0644", "actual": "0600"},
    ]
    assert results["inner/deep"]["status"] == "DELETED"
    assert results["inner/deep"]["reason"] == "the live object is gone"
    assert results["vault"]["status"] == "IN_SYNC"
    assert record.summary["stack_status"] == "DRIFTED"
    assert (record.summary["modified"], record.summary["deleted"]) == (1, 1)


def test_drift_masks_hidden_values(drift_service):
    service, files = drift_service
    (files / "vault.txt").write_text("leaked s3cr3t-value here")
    result = by_path(service.detect_drift("s"))["vault"]
    assert result["properties"] == [
        {"name": "content", "expected": MASK, "actual": f"leaked {MASK} here"}
    ]
    events = [e.resource_status_reason for e in service.list_events("s", "vault")]
    assert not any("s3cr3t" in reason for reason in events)


def test_drift_records_events_and_keeps_the_last_result(drift_service):
    service, files = drift_service
    assert service.last_drift("s") is None
    before = len(service.list_events("s"))
    service.detect_drift("s")
    stack_events = service.list_events("s")[before:]
    # An untouched stack: one event, the stack's; RandomString is NOT_CHECKED (one more).
    assert [(e.resource_name, e.resource_action, e.resource_status) for e in stack_events] == [
        ("word", "CREATE", "COMPLETE"),
        ("s", "CREATE", "COMPLETE"),
    ]
    assert (
        stack_events[-1].resource_status_reason
        == "Drift detection: IN_SYNC (3 IN_SYNC, 0 MODIFIED, 0 DELETED, 1 NOT_CHECKED)"
    )
    (files / "notes.txt").write_text("edited")
    record = service.detect_drift("s")
    notes = [
        e for e in service.list_events("s", "notes") if e.resource_status_reason.startswith("Drift")
    ]
    assert (
        notes[-1].resource_status_reason
        == 'Drift MODIFIED: content expected "hello", actual "edited"'
    )
    kept = service.last_drift("s")
    assert (kept.summary, kept.resources, kept.detected_at) == (
        record.summary,
        record.resources,
        record.detected_at,
    )
    # The resources' states are untouched: a detection is no stack action.
    assert {r.state for r in service.list_resources("s")} == {"CREATE_COMPLETE"}


def test_drift_is_refused_while_an_action_runs(drift_service):
    service, _ = drift_service
    stack = service.get_stack("s")
    service.store.update_stack(stack.id, action="UPDATE", status="IN_PROGRESS")
    with pytest.raises(ActionInProgressError):
        service.detect_drift("s")


def test_drift_detected_while_an_action_began_is_not_kept(drift_service):
    """Detection takes no lock: an action that began while it read the live objects makes
    its result a mix of before and after, refused and not kept."""
    service, files = drift_service
    first = service.detect_drift("s")
    notes = files / "notes.txt"
    notes.unlink()
    os.mkfifo(notes)  # the detection's read of it waits for a writer
    outcome: list[BaseException | None] = []

    def detect() -> None:
        try:
            service.detect_drift("s")
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            outcome.append(error)

    reader = threading.Thread(target=detect)
    reader.start()
    with open(notes, "w") as writer:  # opens once the detection reads it
        stack = service.get_stack("s")
        service.store.update_stack(stack.id, action="UPDATE", status="IN_PROGRESS")
        writer.write("hello")
    reader.join(60)
    (error,) = outcome
    assert isinstance(error, StackChangedError), error
    assert str(error).startswith("Stack s changed while its drift was detected (it is UPDATE_IN_PROGRESS now): the result was not kept")
    assert service.last_drift("s").detected_at == first.detected_at


def test_drift_names_a_resource_never_created(make_service):
    service = make_service()
    body = """
    heat_template_version: 2021-04-16
    resources:
      broken:
        type: OS::Heat::TestResource
        properties: {fail: true}
    """
    stack = service.create_stack("f", template(body), [], {}, disable_rollback=True)
    assert stack.state == "CREATE_FAILED"
    result = service.detect_drift("f").resources[0]
    assert (result["path"], result["status"], result["reason"]) == (
        "broken",
        "NOT_CHECKED",
        "never created (CREATE_FAILED)",
    )


def test_drift_of_a_nested_stack_gone_is_deleted(drift_service):
    service, _ = drift_service
    inner = next(r for r in service.list_resources("s") if r.name == "inner")
    child = service.store.get_stack(inner.physical_resource_id)
    service.store.update_stack(child.id, deleted_at=utcnow())  # gone behind the parent's back
    result = by_path(service.detect_drift("s"))["inner"]
    assert (result["status"], result["reason"]) == ("DELETED", "its nested stack is gone")


def test_update_with_converge_changes_back_what_drifted(drift_service):
    service, files = drift_service
    (files / "notes.txt").write_text("edited")
    os.chmod(files / "notes.txt", 0o600)
    (files / "deep.txt").unlink()
    # Without converge an update of the same template changes nothing: the stack
    # believes its record.
    assert service.update_stack("s", existing=True).state == "UPDATE_COMPLETE"
    assert (files / "notes.txt").read_text() == "edited"
    stack = service.update_stack("s", existing=True, converge=True)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert (files / "notes.txt").read_text() == "hello"
    assert f"{(files / 'notes.txt').stat().st_mode & 0o777:o}" == "644"
    assert (files / "deep.txt").read_text() == "deep"
    reasons = [e.resource_status_reason for e in service.list_events("s", "notes")]
    assert "Drift converging: content, mode as found in the live object" in reasons
    assert service.detect_drift("s").summary["stack_status"] == "IN_SYNC"


def test_converge_plan_is_what_the_converging_update_does(drift_service):
    service, files = drift_service
    (files / "notes.txt").write_text("edited")
    (files / "vault.txt").write_text("not-the-secret")
    (files / "deep.txt").write_text("shallow")  # in the nested stack: not failed, drifted
    plan = service.plan_update("s", existing=True, converge=True)["plan"]
    planned = {e["address"]: (e["action"], e["reason"]) for e in plan["resources"] if e["action"] != "no-change"}
    drifted = " (drifted: the old values are the live object's)"
    assert planned == {
        "notes": ("update", "content changed" + drifted),
        "vault": ("update", "content changed" + drifted),
        "inner": ("update", "its nested stack's resources drifted"),
        "inner.deep": ("update", "content changed" + drifted),
    }
    [vault] = [e for e in plan["resources"] if e["address"] == "vault"]
    assert vault["changes"] == [
        {"path": "properties.content", "old": "not-the-secret", "new": MASK, "op": "change"}
    ]
    assert (files / "deep.txt").read_text() == "shallow"  # planning changed nothing

    stack = service.update_stack("s", existing=True, converge=True)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert [(files / name).read_text() for name in ("notes.txt", "vault.txt", "deep.txt")] == [
        "hello",
        "s3cr3t-value",
        "deep",
    ]
    assert service.detect_drift("s").summary["stack_status"] == "IN_SYNC"


def test_refresh_takes_nested_values_and_the_next_update_changes_them_back(drift_service):
    service, files = drift_service
    (files / "deep.txt").write_text("shallow")
    planned = service.plan_refresh("s")["plan"]
    assert [(e["address"], e["action"]) for e in planned["resources"] if e["action"] != "no-change"] == [
        ("inner.deep", "update")
    ]
    done = service.refresh_stack("s")["plan"]
    assert done["resources"] == planned["resources"]
    assert service.detect_drift("s").summary["stack_status"] == "IN_SYNC"
    assert (files / "deep.txt").read_text() == "shallow"
    # The stack now holds "shallow" where its template says "deep": an update plans it back.
    plan = service.plan_update("s", existing=True)["plan"]
    assert {e["address"]: e["action"] for e in plan["resources"] if e["action"] != "no-change"} == {
        "inner": "update",
        "inner.deep": "update",
    }
    assert service.update_stack("s", existing=True).state == "UPDATE_COMPLETE"
    assert (files / "deep.txt").read_text() == "deep"
