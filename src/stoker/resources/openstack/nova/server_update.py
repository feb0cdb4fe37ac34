"""OS::Nova::Server's in-place update: the steps an update takes (detach and attach
interfaces, resize then confirm, rebuild) and pushing them to completion one at a time.

Owns: the update token, ``{"id": ..., "steps": [{"op": ..., "state": "new" | "called" |
"done", ...}]}``, plain JSON so a restarted engine can carry on polling it, and its copy in
the resource data (``update_progress``): the engine persists the token once, when the
handler returns, and each step's progress is persisted here as it moves, so a resumed
update neither repeats a resize nor skips a confirm.

Must not: decide what an update changes beyond turning ``prop_diff`` into steps (the
planning of interfaces is ``server_requests.plan_network_update``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stoker.resources.openstack.nova import server_requests as requests
from stoker.resources.openstack.nova import server_schema as s
from stoker.sdk.exceptions import ResourceFailure

if TYPE_CHECKING:
    from stoker.resources.openstack.nova.server import Server

__all__ = ["UPDATE_PROGRESS", "advance", "new_token"]

UPDATE_PROGRESS = "update_progress"
NEW, CALLED, DONE = "new", "called", "done"
# Task states in which a resize is still going on (Nova's RESIZE_* task states).
_RESIZE_TASK_PREFIX = "resize"
# A traceback's exception line: "nova.exception.NoValidHost: No valid host was found."
_RAISED = re.compile(r"^[A-Za-z_][\w.]*: \S")


def new_token(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": uuid.uuid4().hex, "steps": [{**step, "state": NEW} for step in steps]}


def resize_steps(server: Server, flavor_id: str) -> list[dict[str, Any]]:
    flavor = server.client().get_flavor(flavor_id)
    return [{"op": "resize", "flavor": flavor_id, "flavor_name": flavor.name}, {"op": "confirm_resize", "flavor": flavor_id}]


def rebuild_step(image: str, after: Mapping[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "preserve_ephemeral": after[s.IMAGE_UPDATE_POLICY] == "REBUILD_PRESERVE_EPHEMERAL",
        "metadata": requests.serialize_metadata(after[s.METADATA]),
    }
    if after[s.ADMIN_PASS]:
        attrs["admin_password"] = after[s.ADMIN_PASS]
    return {"op": "rebuild", "image": image, "attrs": attrs}


def network_steps(server: Server, old_networks: Any, after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Detach, then attach, as Heat orders them; ports made for removed entries are
    deleted and floating IPs of removed entries disassociated now, as Heat does."""
    helper = server.networks_helper()
    server_id = str(server.resource_id)
    plan = requests.plan_network_update(
        old_networks, after[s.NETWORKS], helper.interfaces(server_id), helper.internal_port_ids(), helper.network_of_subnet
    )
    for port_id, body in plan.update_ports:
        helper.update_internal_port(port_id, body)
    for floating_ip in plan.disassociate:
        helper.disassociate_floating_ip(floating_ip)
    steps: list[dict[str, Any]] = [{"op": "detach", "port": port} for port in plan.detach]
    for port in plan.delete_internal:
        helper.delete_internal_port(port)
    for index, entry in enumerate(plan.attach):
        request: dict[str, Any]
        if entry.get(s.ALLOCATE_NETWORK) == s.NETWORK_AUTO and server.client_plugin().is_version_supported(s.MICROVERSION_STR_NETWORK):
            request = {"port_id": None, "net_id": None, "fixed_ip": None, "security_groups": []}
        else:
            request = helper.attach_request(entry, index, after[s.SECURITY_GROUPS])
        steps.append({"op": "attach", "request": request})
    return steps


def advance(server: Server, token: dict[str, Any]) -> bool:
    """Push the steps on: call the first step not called, or check the one called;
    True when every step is done."""
    saved = server.data().get(UPDATE_PROGRESS)
    if isinstance(saved, dict) and saved.get("id") == token.get("id"):
        token["steps"] = saved["steps"]
    for step in token["steps"]:
        if step["state"] == DONE:
            continue
        if step["state"] == NEW:
            step["state"] = DONE if _call(server, step) else CALLED
            server.data_set(UPDATE_PROGRESS, token)
            if step["state"] == CALLED:
                return False
            continue
        if not _check(server, step):
            return False
        step["state"] = DONE
        server.data_set(UPDATE_PROGRESS, token)
    server.data_delete(UPDATE_PROGRESS)
    return True


def flavor_name(live: Any) -> str | None:
    """The name of a server's flavor (embedded since compute 2.47 as ``original_name``)."""
    flavor = live.flavor
    if flavor is None:
        return None
    return getattr(flavor, "original_name", None) or getattr(flavor, "name", None)


def _server(server: Server) -> Any:
    return server.client().get_server(server.resource_id)


def _call(server: Server, step: dict[str, Any]) -> bool:
    """Start a step; True when nothing is left to wait for."""
    op, server_id, compute = step["op"], str(server.resource_id), server.client()
    if op == "detach":
        server.networks_helper().detach(server_id, step["port"])
    elif op == "attach":
        step["port"] = server.networks_helper().attach(server_id, step["request"])
    elif op == "resize":
        live = _server(server)
        if live.status in ("RESIZE", "VERIFY_RESIZE"):
            return False  # resumed after the call
        if flavor_name(live) == step["flavor_name"]:
            return True
        compute.resize_server(server_id, step["flavor"])
    elif op == "confirm_resize":
        live = _server(server)
        if live.status == "ACTIVE":
            return True
        if live.status != "VERIFY_RESIZE":
            raise ResourceFailure(f"Could not confirm resize of server {server_id} - Unknown status {live.status} due to \"Unknown\"")
        compute.confirm_server_resize(server_id)
    elif op == "rebuild":
        compute.rebuild_server(server_id, step["image"], **step["attrs"])
    return False


def _check(server: Server, step: dict[str, Any]) -> bool:
    op, server_id = step["op"], str(server.resource_id)
    if op == "detach":
        return not server.networks_helper().is_attached(server_id, step["port"])
    if op == "attach":
        return server.networks_helper().is_attached(server_id, step["port"])
    live = server.fetch_server(server_id)
    if live is None:
        return False
    status, task_state = live.status, live.task_state
    if op == "resize":
        if status == "VERIFY_RESIZE":
            return True
        if status == "RESIZE" or task_state is not None:
            return False
        if status == "ACTIVE":
            # Nova set a resize task state before it answered: ACTIVE with none left means
            # the resize ended without a VERIFY_RESIZE, done (confirmed for us) or refused.
            if flavor_name(live) == step["flavor_name"]:
                return True
            raise ResourceFailure(f"Resizing to '{step['flavor']}' failed: {_last_action_error(server, 'resize')}")
        raise ResourceFailure(f"Resizing to '{step['flavor']}' failed, status '{status}'")
    if op == "confirm_resize":
        if status == "ACTIVE":
            return True
        if status == "VERIFY_RESIZE" or (task_state or "").startswith(_RESIZE_TASK_PREFIX):
            return False
        raise ResourceFailure(f"Confirm resize for server {server_id} failed - Unknown status {status} due to \"Unknown\"")
    # rebuild
    if status == "REBUILD" or task_state is not None:
        return False
    if status == "ERROR":
        raise ResourceFailure(f"Rebuilding server failed, status '{status}'")
    return True


def _last_action_error(server: Server, action: str) -> str:
    """What Nova says went wrong with the server's last ``action`` (its instance action's
    failed event, e.g. "No valid host was found")."""
    compute = server.client()
    try:
        actions = [found for found in compute.server_actions(server.resource_id) if found.action == action]
        if not actions:
            return "Nova gave no reason"
        latest = compute.get_server_action(actions[0].request_id, server.resource_id)
        for event in latest.events or []:
            event = event if isinstance(event, Mapping) else event.to_dict()
            if event.get("result") == "Error":
                # "details" (compute 2.84) is the fault's message; else the traceback's
                # last "module.Exception: message" line (administrators see it).
                if event.get("details"):
                    return str(event["details"])
                raised = [line.strip() for line in str(event.get("traceback") or "").splitlines() if _RAISED.match(line.strip())]
                if raised:
                    return raised[-1]
        return str(latest.message or "Error")
    except Exception as error:  # noqa: BLE001 - only the reason is lost
        return f"the server stayed ACTIVE with its old flavor ({error})"
