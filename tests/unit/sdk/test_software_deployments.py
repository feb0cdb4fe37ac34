"""Heat's software deployment rules as the SDK states them (``signal_outcome``,
``deployment_changes``, ``new_deployment``, ``deployment_metadata``), and
``MemorySoftwareDeployments``, the contract plugin tests use."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from stoker.sdk.exceptions import ValidationError
from stoker.sdk.software_config import (
    DeploymentConfigNotFoundError,
    MemorySoftwareConfigs,
    MemorySoftwareDeployments,
    SignalOutcome,
    SoftwareDeploymentNotFoundError,
    deployment_changes,
    deployment_metadata,
    format_deployment,
    new_deployment,
    signal_outcome,
)

ID = "d-1"
CONFIG = {"outputs": [{"name": "result", "error_output": False}, {"name": "oops", "error_output": True}, {"name": "quiet"}]}


# -- signal_outcome: Heat's signal_software_deployment ---------------------------------------


@pytest.mark.parametrize("status", ["COMPLETE", "FAILED", "INIT", None])
def test_signal_is_ignored_unless_in_progress(status):
    assert signal_outcome(ID, status, None, CONFIG, {"deploy_status_code": 1}) is None


def test_signal_with_outputs_completes():
    outcome = signal_outcome(ID, "IN_PROGRESS", {"earlier": 1}, CONFIG, {"result": "ok", "deploy_stdout": "out", "deploy_status_code": 0, "undeclared": 2})
    assert outcome == SignalOutcome(
        output_values={"earlier": 1, "result": "ok", "deploy_stdout": "out", "deploy_stderr": None, "deploy_status_code": 0},
        status="COMPLETE",
        status_reason="Outputs received",
        event_reason=f"deployment {ID} succeeded",
    )


@pytest.mark.parametrize("details", [None, {}])
def test_signal_without_details_completes_with_empty_deploy_outputs(details):
    outcome = signal_outcome(ID, "IN_PROGRESS", None, CONFIG, details)
    assert outcome.status == "COMPLETE"
    assert outcome.output_values == {"deploy_stdout": None, "deploy_stderr": None, "deploy_status_code": None}


@pytest.mark.parametrize("code", [0, "0", None, ""])
def test_signal_zero_or_empty_status_code_succeeds(code):
    assert signal_outcome(ID, "IN_PROGRESS", None, CONFIG, {"deploy_status_code": code}).status == "COMPLETE"


@pytest.mark.parametrize("code", [1, "2", -1, "error"])
def test_signal_non_zero_status_code_fails(code):
    outcome = signal_outcome(ID, "IN_PROGRESS", None, CONFIG, {"deploy_status_code": code})
    assert outcome.status == "FAILED"
    assert outcome.status_reason == f"deploy_status_code : Deployment exited with non-zero status code: {code}"
    assert outcome.event_reason == f"deployment {ID} failed ({code})"
    assert outcome.output_values["deploy_status_code"] == code


def test_signal_error_output_fails_whatever_its_value():
    outcome = signal_outcome(ID, "IN_PROGRESS", None, CONFIG, {"oops": "", "result": "half"})
    assert (outcome.status, outcome.status_reason, outcome.event_reason) == ("FAILED", "oops : ", f"deployment {ID} failed")
    assert outcome.output_values["oops"] == "" and outcome.output_values["result"] == "half"


def test_signal_status_code_and_error_output_are_both_reasons():
    outcome = signal_outcome(ID, "IN_PROGRESS", None, CONFIG, {"deploy_status_code": 4, "oops": ["a", 1]})
    assert outcome.status_reason == "deploy_status_code : Deployment exited with non-zero status code: 4, oops : ['a', 1]"
    # The error output decides the event's reason, as in Heat.
    assert outcome.event_reason == f"deployment {ID} failed"


def test_signal_of_a_deployment_whose_config_is_gone_keeps_only_deploy_outputs():
    outcome = signal_outcome(ID, "IN_PROGRESS", None, None, {"result": "x", "deploy_stderr": "e"})
    assert outcome.status == "COMPLETE"
    assert outcome.output_values == {"deploy_stdout": None, "deploy_stderr": "e", "deploy_status_code": None}


def test_signal_details_must_be_a_map():
    with pytest.raises(ValidationError, match="must be a map"):
        signal_outcome(ID, "IN_PROGRESS", None, CONFIG, ["result"])


# -- deployment_changes: Heat's update_software_deployment -------------------------------------


def test_changes_take_only_truthy_values_and_stamp_now():
    before = datetime.now(UTC).replace(tzinfo=None)
    changes = deployment_changes(config_id="", input_values={}, output_values=None, action="", status="COMPLETE", status_reason=0)
    assert set(changes) == {"status", "updated_at"}
    assert before <= changes["updated_at"] <= datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=1)


def test_changes_read_updated_at_as_naive_utc():
    assert deployment_changes(updated_at="2024-05-01T12:00:00Z")["updated_at"] == datetime(2024, 5, 1, 12)
    assert deployment_changes(updated_at="2024-05-01T12:00:00-03:00")["updated_at"] == datetime(2024, 5, 1, 15)
    aware = datetime(2024, 5, 1, 12, tzinfo=timezone(timedelta(hours=1)))
    assert deployment_changes(updated_at=aware)["updated_at"] == datetime(2024, 5, 1, 11)
    assert deployment_changes(status_reason=5)["status_reason"] == "5"


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"updated_at": "soon"}, '"updated_at" must be an ISO 8601 time'),
        ({"updated_at": 5}, '"updated_at" must be an ISO 8601 time'),
        ({"input_values": ["a"]}, '"input_values" must be a map'),
        ({"output_values": "x"}, '"output_values" must be a map'),
        ({"status": "S" * 256}, '"status" should be no more than 255 characters'),
        ({"config_id": 7}, '"config_id" must be a string'),
    ],
)
def test_changes_refuse_bad_values(fields, words):
    with pytest.raises(ValidationError, match=words):
        deployment_changes(**fields)


# -- new_deployment: Heat's create_software_deployment ------------------------------------------


def test_new_deployment_fields():
    fields = new_deployment(server_id="s", config_id="c", status_reason=None)
    assert fields == {
        "id": fields["id"],
        "config_id": "c",
        "server_id": "s",
        "input_values": None,
        "action": "INIT",
        "status": "COMPLETE",
        "status_reason": "None",  # Heat keeps str(status_reason)
        "stack_user_project_id": None,
    }
    assert len(fields["id"]) == 36
    assert new_deployment(server_id="s", config_id="c", deployment_id="mine")["id"] == "mine"


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"stack_user_project_id": "p" * 65}, '"stack_user_project_id" should be no more than 64 characters'),
        ({"server_id": None}, '"server_id" must be a string'),
        ({"config_id": 1}, '"config_id" must be a string'),
        ({"deployment_id": "i" * 37}, '"id" should be no more than 36 characters'),
        ({"input_values": "a=b"}, '"input_values" must be a map'),
    ],
)
def test_new_deployment_refuses(fields, words):
    with pytest.raises(ValidationError, match=words):
        new_deployment(**{"server_id": "s", "config_id": "c", **fields})


# -- format_deployment and deployment_metadata --------------------------------------------------


def test_format_deployment_has_heats_keys_and_updated_time_only_once_set():
    created = datetime(2015, 1, 31, 15, 12, 36, 999)
    shown = format_deployment(ID, "s", "c", {"a": 1}, None, "CREATE", "IN_PROGRESS", "r", created)
    assert list(shown) == ["id", "server_id", "input_values", "output_values", "action", "status", "status_reason", "config_id", "creation_time"]
    assert shown["creation_time"] == "2015-01-31T15:12:36Z"
    updated = format_deployment(ID, "s", "c", None, None, None, None, None, created, datetime(2015, 1, 31, 15, 18, 21))
    assert updated["updated_time"] == "2015-01-31T15:18:21Z"


def test_metadata_leaves_out_missing_configs_and_orders_by_name():
    b1, a, b2, unnamed = {"name": "b", "id": 1}, {"name": "a", "id": 2}, {"name": "b", "id": 3}, {"name": None, "id": 4}
    assert deployment_metadata([b1, None, a, b2, unnamed]) == [unnamed, a, b1, b2]


# -- MemorySoftwareDeployments -----------------------------------------------------------------


@pytest.fixture
def memory():
    configs = MemorySoftwareConfigs()
    return configs, MemorySoftwareDeployments(configs)


def test_memory_deployments_life(memory):
    configs, deployments = memory
    config = configs.create(name="c", group="script", config="x", outputs=[{"name": "result"}])
    created = deployments.create(server_id="s", config_id=config["id"], status="IN_PROGRESS", input_values={"a": 1})
    assert deployments.show(created["id"]) == created and "updated_time" not in created
    assert deployments.list() == [created] == deployments.list(server_id="s")
    assert deployments.list(server_id="t") == []
    assert deployments.metadata("s") == [config]
    reason = deployments.signal(created["id"], {"result": 42}, updated_at="2024-01-01T00:00:00Z")
    assert reason == f"deployment {created['id']} succeeded"
    shown = deployments.show(created["id"])
    assert (shown["status"], shown["output_values"]["result"], shown["updated_time"]) == ("COMPLETE", 42, "2024-01-01T00:00:00Z")
    assert deployments.signal(created["id"], {"result": 43}) is None
    assert deployments.update(created["id"], action="UPDATE", status="IN_PROGRESS")["action"] == "UPDATE"
    deployments.delete(created["id"])
    with pytest.raises(SoftwareDeploymentNotFoundError, match="Deployment with id .* not found"):
        deployments.show(created["id"])
    with pytest.raises(SoftwareDeploymentNotFoundError):
        deployments.delete(created["id"])


def test_memory_deployments_refuse_unknown_configs_and_taken_ids(memory):
    configs, deployments = memory
    with pytest.raises(DeploymentConfigNotFoundError, match="Config with id nope not found"):
        deployments.create(server_id="s", config_id="nope")
    config = configs.create(name="c", group=None, config=None)
    created = deployments.create(server_id="s", config_id=config["id"], deployment_id="fixed")
    with pytest.raises(ValidationError, match="exists already"):
        deployments.create(server_id="s", config_id=config["id"], deployment_id="fixed")
    with pytest.raises(DeploymentConfigNotFoundError):
        deployments.update(created["id"], config_id="nope")
    configs.delete(config["id"])
    assert deployments.metadata("s") == []
    with pytest.raises(ValidationError, match="server_id must be specified"):
        deployments.metadata("")
