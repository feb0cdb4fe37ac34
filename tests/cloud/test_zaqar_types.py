"""OS::Zaqar::Queue, OS::Zaqar::Subscription, OS::Zaqar::SignedQueueURL and
OS::Zaqar::MistralTrigger against the real Zaqar of the test cloud (``zaqar_service``:
Zaqar 2026.2 from PyPI, its SQL store on MariaDB, its message store on Redis): create,
update in place, replacement, check (failing when an object is deleted behind the stack's
back), delete tolerating what is already gone, validation errors placed at the property,
and a webhook subscription delivering a real message to a real HTTP server. openstacksdk
and plain HTTP are the witnesses, and nothing may be left in Zaqar.

These sessions start no Mistral, so a MistralTrigger is refused here, as it must be on a
cloud without a workflow service; test_mistral_types.py runs one with both services real.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.template.errors import TemplateErrors
from tests.cloud import identity
from tests.support.stacks import from_data, states


@pytest.fixture
def zaqar_cloud(openstack_cloud, zaqar_service):
    # As a project member (demo), as a template author is: Zaqar's default policy lets
    # members manage their project's queues and subscriptions.
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, zaqar_cloud):
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


# openstacksdk's listings of queues and messages do not end on this Zaqar (they page on
# with markers Zaqar does not take: a KeyError, or the same message for ever), so the
# witnesses read Zaqar's listings through the proxy's session, one page.
CLIENT_ID = {"Client-ID": "5d5a4b8e-3a51-4f7e-9f34-0c6e1b0a2d11"}


def listing(connection, path: str, key: str) -> list[dict]:
    """Every item of a Zaqar listing (20 a page at most), following its ``next`` links."""
    found: list[dict] = []
    while path:
        answer = connection.message.get(path, headers=CLIENT_ID)
        assert answer.status_code in (200, 204), answer.text
        page = answer.json() if answer.content else {}
        found += page.get(key, [])
        following = [link["href"] for link in page.get("links", []) if link.get("rel") == "next"]
        path = following[0].removeprefix("/v2") if following and page.get(key) else ""
    return found


def queue_names(connection, prefix: str) -> set[str]:
    listed = listing(connection, "/queues?limit=20", "queues")
    return {queue["name"] for queue in listed if queue["name"].startswith(prefix)}


def queue_metadata(connection, queue: str) -> dict:
    answer = connection.message.get(f"/queues/{queue}", headers=CLIENT_ID)
    assert answer.status_code == 200, answer.text
    return {key: value for key, value in answer.json().items() if not key.startswith("_")}


def subscriptions(connection, queue: str) -> list[dict]:
    return listing(connection, f"/queues/{queue}/subscriptions?limit=20", "subscriptions")


def queue_template(name: str | None = None, metadata: dict | None = None) -> dict:
    properties: dict = {"metadata": metadata or {"purpose": "jobs"}}
    if name is not None:
        properties["name"] = name
    return {
        "heat_template_version": "2021-04-16",
        "resources": {"queue": {"type": "OS::Zaqar::Queue", "properties": properties}},
        "outputs": {
            "href": {"value": {"get_attr": ["queue", "href"]}},
            "metadata": {"value": {"get_attr": ["queue", "show", "metadata"]}},
            "ref": {"value": {"get_resource": "queue"}},
        },
    }


def test_zaqar_queue_create_update_replace_check_delete(zaqar_cloud, zaqar_service, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = zaqar_cloud.connect("demo")
    stack_name = f"zq-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(queue_template()))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    queue = physical_ids(service, stack_name)["queue"]
    # No name: the physical resource name, as Heat makes it.
    assert queue.startswith(f"{stack_name}-queue-")
    assert queue_names(connection, stack_name) == {queue}
    assert queue_metadata(connection, queue) == {"purpose": "jobs"}
    shown = outputs(service, stack_name)
    assert shown["href"] == f"{zaqar_service.endpoint}/v2/queues/{queue}"
    assert shown["ref"] == queue
    assert shown["metadata"]["purpose"] == "jobs"
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the metadata is replaced whole (a key left out is removed).
    stack = service.update_stack(
        stack_name, from_data(queue_template(metadata={"owner": "ops", "tier": 2}))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["queue"] == queue
    assert queue_metadata(connection, queue) == {"owner": "ops", "tier": 2}

    # A new name is a new queue (Heat replaces it); the old one is deleted.
    renamed = f"zq-named-{suffix}"
    stack = service.update_stack(
        stack_name, from_data(queue_template(name=renamed, metadata={"owner": "ops"}))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["queue"] == renamed
    assert queue_names(connection, stack_name) == set()
    assert queue_names(connection, renamed) == {renamed}
    assert queue_metadata(connection, renamed) == {"owner": "ops"}

    # Check reads the live queue: deleted behind the stack's back, the check fails...
    connection.message.delete_queue(renamed)
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["queue"] == "CHECK_FAILED"
    assert "does not exist" in checked.status_reason

    # ...and deleting the stack tolerates the queue already gone.
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert queue_names(connection, renamed) == set()


class Webhook:
    """An HTTP server on 127.0.0.1 that keeps the JSON bodies POSTed to it."""

    def __init__(self) -> None:
        received: list[dict] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append(json.loads(body or b"{}"))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *arguments) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, count: int, timeout_s: float = 30) -> list[dict]:
        deadline = time.monotonic() + timeout_s
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.2)
        return list(self.received)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook():
    hook = Webhook()
    yield hook
    hook.close()


def subscription_template(
    queue: str, subscriber: str, ttl: int | None = None, options: dict | None = None
) -> dict:
    properties: dict = {"queue_name": {"get_resource": "queue"}, "subscriber": subscriber}
    if ttl is not None:
        properties["ttl"] = ttl
    if options is not None:
        properties["options"] = options
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "queue": {"type": "OS::Zaqar::Queue", "properties": {"name": queue}},
            "subscription": {"type": "OS::Zaqar::Subscription", "properties": properties},
        },
        "outputs": {"show": {"value": {"get_attr": ["subscription", "show"]}}},
    }


def test_zaqar_subscription_delivers_updates_replaces_and_deletes(zaqar_cloud, stacks, webhook):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = zaqar_cloud.connect("demo")
    stack_name = f"zs-{suffix}"
    names.append(stack_name)
    queue = f"zs-{suffix}"

    stack = service.create_stack(
        stack_name, from_data(subscription_template(queue, webhook.url, options={"a": "1"}))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    subscription_id = physical_ids(service, stack_name)["subscription"]
    (live,) = subscriptions(connection, queue)
    assert (live["id"], live["subscriber"], live["options"]) == (
        subscription_id,
        webhook.url,
        {"a": "1"},
    )
    # Heat's default ttl: never expires (the year 9000).
    assert live["ttl"] == 220367260800
    shown = outputs(service, stack_name)["show"]
    assert (shown["id"], shown["subscriber"], shown["queue_name"]) == (
        subscription_id,
        webhook.url,
        queue,
    )

    # A message posted to the queue reaches the subscriber: Zaqar's notifier POSTs it.
    connection.message.post_message(queue, [{"body": {"event": "hello"}, "ttl": 300}])
    delivered = webhook.wait_for(1)
    assert [message.get("body") for message in delivered] == [{"event": "hello"}]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: ttl and options (and the subscriber) are updated on the same subscription.
    moved = webhook.url + "?moved=1"
    stack = service.update_stack(
        stack_name, from_data(subscription_template(queue, moved, ttl=3600, options={"b": "2"}))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["subscription"] == subscription_id
    (live,) = subscriptions(connection, queue)
    assert (live["id"], live["subscriber"], live["ttl"], live["options"]) == (
        subscription_id,
        moved,
        3600,
        {"b": "2"},
    )

    # Another queue is a replacement: a new subscription there, none left on the old queue.
    other = f"zs-other-{suffix}"
    stack = service.update_stack(
        stack_name, from_data(subscription_template(other, moved, ttl=3600))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replaced = physical_ids(service, stack_name)["subscription"]
    assert replaced != subscription_id
    assert [found["id"] for found in subscriptions(connection, other)] == [replaced]
    assert subscriptions(connection, queue) == []

    # Deleted behind the stack's back: check fails, delete tolerates it.
    connection.message.delete_subscription(other, replaced)
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_FAILED"
    assert states(service, stack_name)["subscription"] == "CHECK_FAILED"
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert queue_names(connection, f"zs-other-{suffix}") == set()


def signed_url_template(queue: str, ttl: int, methods: list[str]) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "queue": {"type": "OS::Zaqar::Queue", "properties": {"name": queue}},
            "signed": {
                "type": "OS::Zaqar::SignedQueueURL",
                "properties": {"queue": {"get_resource": "queue"}, "ttl": ttl, "methods": methods},
            },
        },
        "outputs": {
            name: {"value": {"get_attr": ["signed", name]}}
            for name in ("signature", "expires", "paths", "methods", "project", "query_str")
        },
    }


def read_with_signature(zaqar_service, queue: str, signed: dict) -> identity.Response:
    """GET the queue's messages as an agent holding only the signed URL would."""
    return identity.request(
        "GET",
        f"{zaqar_service.endpoint}/v2/queues/{queue}/messages?echo=true",
        headers={
            "Client-ID": "9c3a1f6e-2b7d-4c8e-a5f0-7d1e3b6a4c29",
            "URL-Signature": signed["signature"],
            "URL-Expires": signed["expires"],
            "URL-Methods": ",".join(signed["methods"]),
            "URL-Paths": ",".join(signed["paths"]),
            "X-Project-ID": signed["project"],
        },
    )


def test_zaqar_signed_queue_url_reads_the_queue_and_is_replaced(zaqar_cloud, zaqar_service, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = zaqar_cloud.connect("demo")
    stack_name = f"zu-{suffix}"
    names.append(stack_name)
    queue = f"zu-{suffix}"

    stack = service.create_stack(stack_name, from_data(signed_url_template(queue, 3600, ["GET"])))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    signed = outputs(service, stack_name)
    assert signed["methods"] == ["GET"]
    assert signed["paths"] == [f"/v2/queues/{queue}/messages"]
    assert signed["project"] == connection.current_project_id
    query = parse_qs(signed["query_str"])
    assert query["queue_name"] == [queue] and query["signature"] == [signed["signature"]]
    assert query["project_id"] == [signed["project"]]

    # The signature is real: an agent with no token reads the queue's messages with it.
    connection.message.post_message(queue, [{"body": "for the agent", "ttl": 300}])
    answer = read_with_signature(zaqar_service, queue, signed)
    assert answer.status == 200, answer.body
    assert [message["body"] for message in answer.body["messages"]] == ["for the agent"]
    # A forged signature is refused (Zaqar answers 404, as for a path it does not serve).
    forged = read_with_signature(zaqar_service, queue, {**signed, "signature": "0" * 64})
    assert forged.status == 404 and "messages" not in str(forged.body)

    # Every property change makes a new URL: a replacement with a new signature.
    first_id = physical_ids(service, stack_name)["signed"]
    stack = service.update_stack(
        stack_name, from_data(signed_url_template(queue, 7200, ["GET", "POST"]))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["signed"] != first_id
    resigned = outputs(service, stack_name)
    assert resigned["signature"] != signed["signature"] and resigned["methods"] == ["GET", "POST"]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert queue_names(connection, queue) == set()


def _refusal(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_zaqar_validation_errors_name_the_property(zaqar_cloud, make_service):
    service = make_service()

    def one(resource_type: str, properties: dict) -> dict:
        return {
            "heat_template_version": "2021-04-16",
            "resources": {"r": {"type": resource_type, "properties": properties}},
        }

    bad_subscriber = _refusal(
        service, one("OS::Zaqar::Subscription", {"queue_name": "q", "subscriber": "ftp://host/x"})
    )
    assert (
        "The subscriber type of must be one of: http, https, mailto, trust+http, trust+https."
        in bad_subscriber
    )
    assert "resources.r.properties.subscriber" in bad_subscriber

    short_ttl = _refusal(
        service,
        one("OS::Zaqar::Subscription", {"queue_name": "q", "subscriber": "http://h/x", "ttl": 59}),
    )
    assert "resources.r.properties.ttl" in short_ttl and "60" in short_ttl

    long_queue = _refusal(
        service,
        one("OS::Zaqar::Subscription", {"queue_name": "q" * 65, "subscriber": "http://h/x"}),
    )
    assert (
        "Queue name length must be 1-64" in long_queue
        and "resources.r.properties.queue_name" in long_queue
    )

    long_name = _refusal(service, one("OS::Zaqar::Queue", {"name": "n" * 65}))
    assert "resources.r.properties.name" in long_name

    method = _refusal(
        service, one("OS::Zaqar::SignedQueueURL", {"queue": "q", "methods": ["HEAD"]})
    )
    assert "resources.r.properties.methods" in method and "HEAD" in method

    trigger = _refusal(
        service, one("OS::Zaqar::MistralTrigger", {"queue_name": "q", "workflow_id": "wf"})
    )
    catalog = {entry.type for entry in zaqar_cloud.connect("admin").identity.services()}
    if "workflowv2" in catalog:
        # The session's Mistral add-on runs (its tests ran first): the workflow is looked up.
        assert "resources.r.properties.workflow_id: The Workflow (wf) could not be found." in trigger
    else:
        # No Mistral in this cloud: the trigger is refused at validate, saying what to do.
        assert "needs the Mistral workflow service (service type workflowv2)" in trigger
        assert "resources.r" in trigger and "OS::Zaqar::Subscription" in trigger
