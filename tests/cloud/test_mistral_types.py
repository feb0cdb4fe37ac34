"""OS::Mistral::Workflow, OS::Mistral::CronTrigger and OS::Mistral::ExternalResource against
the real Mistral of the test cloud (``mistral_service``: Mistral 2026.2 from PyPI, its API
under uWSGI, its engine, executor and periodic tasks in one mistral-server, its database on
MariaDB, its RPC on RabbitMQ): a workflow created, signalled (a real execution runs in
Mistral's engine and executor), updated in place and deleted with its executions; a cron
trigger firing on its own; an external resource whose create, update, suspend, resume and
delete are real workflow executions, with its replacement and ``always_update`` rules;
validation errors in their places, the ``mistral.workflow`` constraint asking the real
Mistral. openstacksdk's workflow proxy, as the project's member, is the witness.
"""

from __future__ import annotations

import json
import secrets

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.engine.states import Action
from stoker.template.errors import TemplateErrors
from tests.cloud.test_import_round_trip import round_trip
from tests.support.stacks import from_data, states
from tests.support.waiting import wait_until

HOT = "2021-04-16"
WAIT_S = 120


@pytest.fixture
def workflows(openstack_cloud, mistral_service):
    """The project member's openstacksdk workflow proxy; stoker acts as the same user."""
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud.connect("demo").workflow
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, workflows):
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


def mistral(workflows, method: str, path: str) -> dict:
    """One read of Mistral's API through the proxy's session (the witness's own view)."""
    answer = workflows.request(path, method)
    assert answer.status_code < 400, answer.text
    return answer.json() if answer.content else {}


def gone(workflows, path: str) -> bool:
    return workflows.request(path, "GET").status_code == 404


def executions(service, stack_name: str) -> list[dict]:
    """The workflow's ``executions`` attribute as resource show resolves it (live: no
    output refers to it, so nothing stores it)."""
    shown = service.resource_attributes(service.get_stack(stack_name), "hello")
    return shown["executions"]


ECHO_TASKS = [
    {
        "name": "greet",
        "action": "std.echo output=<% $.greeting %>",
        "publish": {"said": "<% task().result %>"},
    }
]


def workflow_template(description: str = "says hello", tasks: list | None = None) -> dict:
    return {
        "heat_template_version": HOT,
        "resources": {
            "hello": {
                "type": "OS::Mistral::Workflow",
                "properties": {
                    "type": "direct",
                    "description": description,
                    "input": {"greeting": "hello"},
                    "output": {"said": "<% $.said %>"},
                    "tasks": tasks or ECHO_TASKS,
                },
            }
        },
        "outputs": {
            "name": {"value": {"get_resource": "hello"}},
            "data": {"value": {"get_attr": ["hello", "data"]}},
            "alarm_url": {"value": {"get_attr": ["hello", "alarm_url"]}},
        },
    }


def test_mistral_workflow_create_signal_update_delete(stacks, workflows):
    service, names = stacks
    stack_name = f"wf-{secrets.token_hex(3)}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(workflow_template()))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    name = physical_ids(service, stack_name)["hello"]
    # Heat's physical name: <stack>-<resource>-<short id>.
    assert name.startswith(f"{stack_name}-hello-")
    live = mistral(workflows, "GET", f"/workflows/{name}")
    assert "std.echo output=<% $.greeting %>" in live["definition"]
    assert json.loads(json.dumps(live["input"])) == "greeting"
    found = outputs(service, stack_name)
    assert found["name"] == name
    assert found["data"] == {"name": name, "input": {"greeting": "hello"}}
    assert executions(service, stack_name) == []
    assert "/waitcondition/" in found["alarm_url"]

    # A signal starts an execution with the signal's input over the template's.
    service.signal_resource(stack_name, "hello", {"input": {"greeting": "bonjour"}})
    succeeded = wait_until(
        lambda: [e for e in executions(service, stack_name) if e["state"] == "SUCCESS"],
        "the execution's success",
        WAIT_S,
        interval_s=1,
    )
    assert len(succeeded) == 1
    execution = succeeded[0]
    assert (execution["workflow_name"], execution["input"], execution["output"]) == (
        name,
        {"greeting": "bonjour"},
        {"said": "bonjour"},
    )
    assert mistral(workflows, "GET", f"/executions/{execution['id']}")["state"] == "SUCCESS"
    # Without input, the template's input.
    service.signal_resource(stack_name, "hello", {})
    both = wait_until(
        lambda: (
            [e for e in executions(service, stack_name) if e["state"] == "SUCCESS"][1:]
            and executions(service, stack_name)
        ),
        "the second execution's success",
        WAIT_S,
        interval_s=1,
    )
    assert [e["output"] for e in both] == [{"said": "hello"}, {"said": "bonjour"}]
    # A signal naming an input the workflow does not have is refused, in Heat's words.
    with pytest.raises(Exception, match="Unknown input shout"):
        service.signal_resource(stack_name, "hello", {"input": {"shout": "HI"}})

    # An update changes the definition in place: the same workflow, a new task.
    tasks = [*ECHO_TASKS]
    tasks[0] = {**tasks[0], "on_success": ["done"]}
    tasks.append({"name": "done", "action": "std.noop"})
    updated = service.update_stack(stack_name, from_data(workflow_template("says more", tasks)))
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    assert physical_ids(service, stack_name)["hello"] == name
    live = mistral(workflows, "GET", f"/workflows/{name}")
    assert "says more" in live["definition"] and "std.noop" in live["definition"]

    # Drift reads the definition: in sync, then a description and an input name changed
    # by hand (Mistral lists the input's names only; their values are the stack's).
    drift = {r["path"]: r for r in service.detect_drift(stack_name).resources}
    assert drift["hello"]["status"] == "IN_SYNC", drift
    by_hand = live["definition"].replace("says more", "changed by hand").replace("- greeting", "- greeting\n  - extra")
    assert "- extra" in by_hand, live["definition"]
    changed = workflows.request("/workflows", "PUT", data=by_hand, headers={"Content-Type": "text/plain"})
    assert changed.status_code == 200, changed.text
    drift = {r["path"]: r for r in service.detect_drift(stack_name).resources}
    assert drift["hello"]["status"] == "MODIFIED", drift
    assert "changed by hand" in json.dumps(drift["hello"]) and "extra" in json.dumps(drift["hello"]), drift

    started = [e["id"] for e in executions(service, stack_name)]
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert gone(workflows, f"/workflows/{name}")
    assert all(gone(workflows, f"/executions/{execution}") for execution in started)


def test_mistral_cron_trigger_fires_then_is_deleted(stacks, workflows):
    service, names = stacks
    stack_name = f"cron-{secrets.token_hex(3)}"
    names.append(stack_name)
    template = workflow_template()
    template["resources"]["every_5s"] = {
        "type": "OS::Mistral::CronTrigger",
        "properties": {
            # croniter's sixth field: seconds.
            "pattern": "* * * * * */5",
            "count": 10,
            "workflow": {"name": {"get_resource": "hello"}, "input": {"greeting": "tick"}},
        },
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    assert ids["every_5s"].startswith(f"{stack_name}-every_5s-")
    trigger = mistral(workflows, "GET", f"/cron_triggers/{ids['every_5s']}")
    assert (
        trigger["pattern"],
        trigger["workflow_name"],
        json.loads(trigger["workflow_input"]),
    ) == (
        "* * * * * */5",
        ids["hello"],
        {"greeting": "tick"},
    )

    def shown() -> dict:
        # Live, as resource show resolves them (no output stores them).
        return service.resource_attributes(service.get_stack(stack_name), "every_5s")

    assert shown()["next_execution_time"] is not None

    def fired() -> list:
        return [e for e in executions_of(workflows, ids["hello"]) if e["state"] == "SUCCESS"]

    ran = wait_until(fired, "the trigger's first execution", 60, interval_s=1)
    assert json.loads(ran[0]["input"]) == {"greeting": "tick"}
    assert json.loads(ran[0]["output"]) == {"said": "tick"}
    assert wait_until(
        lambda: (shown()["remaining_executions"] or 10) < 10, "a count below 10", 30, interval_s=1
    )

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert gone(workflows, f"/cron_triggers/{ids['every_5s']}")
    assert gone(workflows, f"/workflows/{ids['hello']}")


def _returning(name: str, output: dict, input_names: list[str]) -> dict:
    """A workflow resource whose one task echoes ``output`` (YAQL allowed) as its output."""
    return {
        "type": "OS::Mistral::Workflow",
        "properties": {
            "name": name,
            "type": "direct",
            "input": dict.fromkeys(input_names, ""),
            "output": {key: f"<% $.result.{key} %>" for key in output},
            "tasks": [
                {
                    "name": "run",
                    "action": "std.echo",
                    "input": {"output": output},
                    "publish": {"result": "<% task().result %>"},
                }
            ],
        },
    }


def external_template(prefix: str, size: int, zone: str, always_update: bool = False) -> dict:
    inputs = ["size", "zone"]
    return {
        "heat_template_version": HOT,
        "resources": {
            "create_wf": _returning(
                f"{prefix}-create",
                {"resource_id": "thing-<% $.zone %>-<% $.size %>", "made": "<% $.size %>"},
                inputs,
            ),
            "update_wf": _returning(
                f"{prefix}-update",
                {"resized": "<% $.size %>", "was": "<% env().heat_extresource_data.made %>"},
                inputs,
            ),
            "suspend_wf": _returning(f"{prefix}-suspend", {"suspended": "yes"}, inputs),
            "delete_wf": _returning(f"{prefix}-delete", {"deleted": "<% $.zone %>"}, inputs),
            "thing": {
                "type": "OS::Mistral::ExternalResource",
                "properties": {
                    "actions": {
                        "CREATE": {"workflow": {"get_resource": "create_wf"}},
                        "UPDATE": {"workflow": {"get_resource": "update_wf"}},
                        "SUSPEND": {"workflow": {"get_resource": "suspend_wf"}},
                        "DELETE": {"workflow": {"get_resource": "delete_wf"}},
                    },
                    "input": {"size": size, "zone": zone},
                    "description": "stoker's external thing",
                    "replace_on_change_inputs": ["zone"],
                    "always_update": always_update,
                },
            },
        },
        "outputs": {"output": {"value": {"get_attr": ["thing", "output"]}}},
    }


def executions_of(workflows, workflow: str) -> list[dict]:
    """The workflow's executions, oldest first, each read whole (Mistral's listing leaves
    out their input, output and params)."""
    path = f"/executions?workflow_name={workflow}&sort_keys=created_at&sort_dirs=asc"
    listed = mistral(workflows, "GET", path)["executions"]
    return [mistral(workflows, "GET", f"/executions/{e['id']}") for e in listed]


def test_mistral_external_resource_runs_its_workflows(stacks, workflows):
    service, names = stacks
    prefix = f"ext-{secrets.token_hex(3)}"
    stack_name = prefix
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(external_template(prefix, 1, "a")))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    # The create workflow's output names the resource.
    assert physical_ids(service, stack_name)["thing"] == "thing-a-1"
    assert outputs(service, stack_name)["output"] == {"resource_id": "thing-a-1", "made": 1}
    [created] = executions_of(workflows, f"{prefix}-create")
    assert (created["state"], created["description"], json.loads(created["input"])) == (
        "SUCCESS",
        "stoker's external thing",
        {"size": 1, "zone": "a"},
    )

    # An input change runs the UPDATE workflow, which reads the earlier output from env.
    updated = service.update_stack(stack_name, from_data(external_template(prefix, 2, "a")))
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    [update] = executions_of(workflows, f"{prefix}-update")
    assert json.loads(update["output"]) == {"resized": 2, "was": 1}
    assert outputs(service, stack_name)["output"] == {
        "resource_id": "thing-a-1", "made": 1, "resized": 2, "was": 1,
    }  # fmt: skip
    # Unchanged: no UPDATE execution (always_update is off).
    service.update_stack(stack_name, from_data(external_template(prefix, 2, "a")))
    assert len(executions_of(workflows, f"{prefix}-update")) == 1

    # Suspend runs its workflow; resume has none and just completes.
    assert service.stack_action(stack_name, Action.SUSPEND).state == "SUSPEND_COMPLETE"
    assert [e["state"] for e in executions_of(workflows, f"{prefix}-suspend")] == ["SUCCESS"]
    assert service.stack_action(stack_name, Action.RESUME).state == "RESUME_COMPLETE"

    # A change of a replace_on_change input replaces it: a new create, the old one's delete.
    replaced = service.update_stack(stack_name, from_data(external_template(prefix, 2, "b")))
    assert replaced.state == "UPDATE_COMPLETE", replaced.status_reason
    assert physical_ids(service, stack_name)["thing"] == "thing-b-2"
    assert len(executions_of(workflows, f"{prefix}-create")) == 2
    [deleted] = executions_of(workflows, f"{prefix}-delete")
    assert json.loads(deleted["output"]) == {"deleted": "a"}
    assert json.loads(deleted["params"])["env"]["heat_extresource_data"]["made"] == 1

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    # Both deletes ran (a's above): Mistral orders by created_at, which two executions of
    # the same second may share, so the list is compared whatever its order.
    deletes = [json.loads(e["output"]) for e in executions_of(workflows, f"{prefix}-delete")]
    assert sorted(deletes, key=lambda output: output["deleted"]) == [{"deleted": "a"}, {"deleted": "b"}]

    # always_update: an update that changes nothing runs the UPDATE workflow all the same.
    always = f"{prefix}-always"
    names.append(always)
    template = external_template(always, 3, "c", always_update=True)
    made = service.create_stack(always, from_data(template))
    assert made.state == "CREATE_COMPLETE", made.status_reason
    again = service.update_stack(always, from_data(template))
    assert again.state == "UPDATE_COMPLETE", again.status_reason
    [update] = executions_of(workflows, f"{always}-update")
    assert json.loads(update["output"]) == {"resized": 3, "was": 3}


def test_mistral_external_resource_failing_workflow_fails_the_create(stacks, workflows):
    service, names = stacks
    prefix = f"extfail-{secrets.token_hex(3)}"
    names.append(prefix)
    template = {
        "heat_template_version": HOT,
        "resources": {
            "failing": {
                "type": "OS::Mistral::Workflow",
                "properties": {
                    "name": f"{prefix}-fail",
                    "type": "direct",
                    "tasks": [{"name": "boom", "action": "std.fail error_data='no luck'"}],
                },
            },
            "thing": {
                "type": "OS::Mistral::ExternalResource",
                "properties": {"actions": {"CREATE": {"workflow": {"get_resource": "failing"}}}},
            },
        },
    }
    stack = service.create_stack(prefix, from_data(template), disable_rollback=True)
    assert stack.state == "CREATE_FAILED"
    assert states(service, prefix)["thing"] == "CREATE_FAILED"
    assert "ended ERROR" in stack.status_reason


def _refusal(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_mistral_validation_errors_name_their_place(stacks, workflows):
    service, names = stacks

    def one(resource_type: str, properties: dict) -> dict:
        return {
            "heat_template_version": HOT,
            "resources": {"it": {"type": resource_type, "properties": properties}},
        }

    reverse = one(
        "OS::Mistral::Workflow", {"type": "reverse", "tasks": [{"name": "a", "action": "std.noop"}]}
    )
    refused = _refusal(service, reverse)
    assert "'task_name' is not assigned in 'params' in case of reverse type workflow." in refused
    assert "resources.it.properties.params" in refused

    requires = one(
        "OS::Mistral::Workflow",
        {"type": "direct", "tasks": [{"name": "a", "action": "std.noop", "requires": ["b"]}]},
    )
    refused = _refusal(service, requires)
    assert "Only reverse workflows can contain property 'requires'" in refused
    assert "resources.it.properties.tasks[0].requires" in refused

    both = one(
        "OS::Mistral::Workflow",
        {
            "type": "direct",
            "tasks": [{"name": "a", "action": "std.noop", "workflow": {"get_resource": "other"}}],
        },
    )
    both["resources"]["other"] = {
        "type": "OS::Mistral::Workflow",
        "properties": {"type": "direct", "tasks": [{"name": "b", "action": "std.noop"}]},
    }
    # The task's workflow is not known at validation (get_resource): create checks again.
    names.append(f"conflict-{secrets.token_hex(3)}")
    failed = service.create_stack(names[-1], from_data(both))
    assert failed.state == "CREATE_FAILED"
    assert "Cannot define the following properties at the same time: workflow, action" in (
        failed.status_reason
    )
    assert "resources.it.properties.tasks[0]" in failed.status_reason

    # The mistral.workflow constraint asks the real Mistral.
    unknown = one(
        "OS::Mistral::CronTrigger",
        {"pattern": "* * * * *", "workflow": {"name": f"nowhere-{secrets.token_hex(3)}"}},
    )
    refused = _refusal(service, unknown)
    assert "The Workflow (nowhere-" in refused and "could not be found" in refused

    # A workflow that exists, so that the trigger's own rule is the one broken.
    existing = f"existing-{secrets.token_hex(3)}"
    made = workflows.request(
        "/workflows",
        "POST",
        data=f"version: '2.0'\n{existing}:\n  tasks:\n    a:\n      action: std.noop\n",
        headers={"Content-Type": "text/plain"},
    )
    assert made.status_code == 201, made.text
    untimed = one("OS::Mistral::CronTrigger", {"workflow": {"name": existing}})
    assert (
        "At least one of the following properties must be specified: pattern, first_time"
        in _refusal(service, untimed)
    )
    assert workflows.request(f"/workflows/{existing}", "DELETE").status_code == 204


def test_zaqar_mistral_trigger_starts_the_workflow_for_each_message(
    stacks, workflows, openstack_cloud, zaqar_service
):
    """OS::Zaqar::MistralTrigger with both services real: a message posted to the queue
    reaches Mistral through Zaqar's notifier (with a token of the trust Zaqar made for the
    subscriber) and starts the workflow, the message in its env as ``notification``."""
    service, names = stacks
    stack_name = f"mtrig-{secrets.token_hex(3)}"
    names.append(stack_name)
    queue = f"{stack_name}-q"
    template = {
        "heat_template_version": HOT,
        "resources": {
            "noted": {
                "type": "OS::Mistral::Workflow",
                "properties": {
                    "type": "direct",
                    "input": {"who": "nobody"},
                    "output": {"note": "<% env().notification.body %>", "who": "<% $.who %>"},
                    "tasks": [{"name": "noop", "action": "std.noop"}],
                },
            },
            "trigger": {
                "type": "OS::Zaqar::MistralTrigger",
                "properties": {
                    "queue_name": queue,
                    "workflow_id": {"get_attr": ["noted", "show", "id"]},
                    "input": {"who": "zaqar"},
                    "ttl": 3600,
                },
            },
        },
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    workflow = physical_ids(service, stack_name)["noted"]
    messaging = openstack_cloud.connect("demo").message
    client = {"Client-ID": "8e3c1d2a-6b4f-4c1e-9a0d-5f7b2c3e4d10"}
    posted = messaging.post(
        f"/queues/{queue}/messages",
        json={"messages": [{"body": {"text": "from zaqar"}, "ttl": 300}]},
        headers=client,
    )
    assert posted.status_code == 201, posted.text

    ran = wait_until(
        lambda: [e for e in executions_of(workflows, workflow) if e["state"] == "SUCCESS"],
        "the execution the message started",
        WAIT_S,
        interval_s=1,
    )
    assert json.loads(ran[0]["output"]) == {"note": {"text": "from zaqar"}, "who": "zaqar"}

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert gone(workflows, f"/workflows/{workflow}")


def test_external_resource_and_mistral_trigger_are_imported(make_service, workflows, zaqar_service):
    """Made, abandoned and imported back by their ids: the import runs no workflow (the
    external resource has no object to read: drift NOT_CHECKED), the trigger's Zaqar
    subscription is checked; the delete runs the DELETE workflow with the imported id."""
    service = make_service(enable_stack_abandon=True)
    prefix = f"rt-ext-{secrets.token_hex(3)}"
    data = external_template(prefix, 2, "a")
    data["resources"]["trigger"] = {
        "type": "OS::Zaqar::MistralTrigger",
        "properties": {"queue_name": f"{prefix}-q", "workflow_id": {"get_attr": ["suspend_wf", "show", "id"]}, "input": {"size": 1, "zone": "b"}, "ttl": 3600},
    }

    round_trip(service, data, prefix, not_checked=frozenset({"thing"}))

    # Once each: the create of the stack made first, the delete of the one that took over.
    assert [json.loads(e["input"]) for e in executions_of(workflows, f"{prefix}-create")] == [{"size": 2, "zone": "a"}]
    deleted = executions_of(workflows, f"{prefix}-delete")
    assert [(e["state"], json.loads(e["input"])) for e in deleted] == [("SUCCESS", {"size": 2, "zone": "a"})], deleted


def test_mistral_workflow_alarm_url_starts_an_execution(openstack_cloud, workflows, tmp_path):
    """A POST to the workflow's ``alarm_url`` (what an alarm service sends, no token) on a
    real ``stoker serve`` starts an execution with the posted input."""
    import urllib.request

    from tests.support.server import Server

    serving = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        **openstack_cloud.cloud_environ("demo"),
    )
    # The alarm URL must lead back to this server.
    serving.environment["STOKER_PUBLIC_URL"] = serving.url
    serving.start()
    try:
        name = f"alarm-{secrets.token_hex(3)}"
        status, body = serving.request(
            "POST", "/stacks", {"stack_name": name, "template": workflow_template()}
        )
        assert status == 201, body
        stack_id = body["stack"]["id"]
        created = serving.wait_for(stack_id, timeout=120)
        assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
        status, shown = serving.request("GET", f"/stacks/{name}/{stack_id}")
        found = {
            output["output_key"]: output.get("output_value") for output in shown["stack"]["outputs"]
        }

        request = urllib.request.Request(
            found["alarm_url"],
            data=json.dumps({"input": {"greeting": "alarm!"}}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            assert answer.status in (200, 202, 204)
        ran = wait_until(
            lambda: [e for e in executions_of(workflows, found["name"]) if e["state"] == "SUCCESS"],
            "the alarm's execution",
            WAIT_S,
            interval_s=1,
        )
        assert json.loads(ran[0]["output"]) == {"said": "alarm!"}

        status, body = serving.request("DELETE", f"/stacks/{name}/{stack_id}")
        assert status == 204, body
        deleted = serving.wait_for(stack_id, timeout=120)
        assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]
        assert gone(workflows, f"/workflows/{found['name']}")
    finally:
        log = serving.stop()
    assert "Traceback" not in log, log
