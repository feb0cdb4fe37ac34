"""The remote backend: a ``stoker serve`` (or any Orchestration API v1) over HTTP.

Requests are Heat's v1 API as python-heatclient sends them: the template and the local
files it names travel in the body (``template``, ``files``, ``environment_files``), a
stack is reached at its canonical ``/stacks/{name}/{id}`` (looked up once per name, as
heatclient follows the 302), and actions are started and then watched until they end,
each new event shown as it is recorded, so that ``--wait`` reads as it does on the
embedded engine: on the server's event stream (``GET .../events/stream``, resumed with
``Last-Event-ID`` when the connection drops), or, on a server without one, the events
API polled.

The requests go through a transport (``cli.transport``: httpx, or keystoneauth1's
session with Keystone). A server's error (Heat's fault body) becomes one ``RemoteError``
with the server's message (stoker's ``error.details`` where given, which places every
problem); a server that cannot be reached, one naming its URL. Never a traceback.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

from stoker.cli.backend import (
    Backend,
    EventCallback,
    Source,
    StackRequest,
    _ignore,
    close_names,
    stack_of_link,
)
from stoker.cli.transport import (
    STREAM_RETRIES,
    RemoteError,
    Response,
    StreamBrokenError,
    StreamRefusedError,
    error_of,
    server_sent,
)
from stoker.sdk.exceptions import StokerError
from stoker.template import loader

# How long to wait between two looks at an action in progress: short at first (most
# test and small stacks end within a second), growing to at most this.
POLL_FIRST_S = 0.05
POLL_MAX_S = 1.0
# Nested stacks' events are shown as the embedded engine shows them, every level down
# (the server caps the depth at the deepest a stack can nest).
ALL_LEVELS = 100
# A plan's kinds of change, in the order the engine's previews give them (engine.preview).
CHANGE_KINDS = ("added", "deleted", "replaced", "updated", "unchanged")


class RemoteBackend(Backend):
    def __init__(self, endpoint: str, transport: Any, limits: loader.Limits):
        """``endpoint``: ``http://HOST:PORT/v1/{project}``."""
        self.endpoint = endpoint.rstrip("/")
        self.where = self.endpoint
        self.transport = transport
        self._limits = limits
        self._paths: dict[str, str] = {}

    def close(self) -> None:
        self.transport.close()

    # -- requests --------------------------------------------------------------------

    def _call(self, method: str, path: str, body: Any = None, params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None, ok: tuple[int, ...] = (200, 201, 202, 204)) -> Response:
        url = path if path.startswith(("http://", "https://")) else f"{self.endpoint}/{path.lstrip('/')}"
        reply = self.transport.request(method, url, body, params)
        if reply.status not in ok:
            error = error_of(reply.status, reply.json(), reply.content.decode("utf-8", "replace")[:500])
            if error.status == 404 and error.message.strip() in ("Not Found", "HTTP 404", "404 page not found"):
                # No route answered (a missing stack has a message of its own): --url does
                # not point at the Orchestration API.
                error.message = f"Nothing answers at {url} (HTTP 404 Not Found): the Orchestration API is not there"
                error.args = (error.message,)
                error.hint = "its path is /v1/PROJECT: give --url http://HOST:PORT or http://HOST:PORT/v1/PROJECT"
            raise error
        return reply

    def _get(self, path: str, params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None) -> Any:
        return self._call("GET", path, params=params).json()

    def _stack_path(self, name: str) -> str:
        """``stacks/{name}/{id}`` of a stack named by name or id (the server's 302)."""
        if name not in self._paths:
            try:
                reply = self._call("GET", f"stacks/{quote(name, safe='')}", ok=(302, 301, 303, 307))
            except RemoteError as error:
                if error.status == 404 and error.heat_type != "HTTPNotFound":  # no such stack, not no such route
                    try:
                        suggestion = close_names(name, [stack["stack_name"] for stack in self.list_stacks()])
                    except Exception:  # noqa: BLE001 - a suggestion must never hide the error it adds to
                        suggestion = None
                    if suggestion:
                        # A stoker server's message ends with the hint this one replaces.
                        error.message = error.message.removesuffix(" (see 'stoker stack list')")
                        error.args = (error.message,)
                        error.hint = f"{suggestion} See 'stoker stack list'"
                raise
            found = stack_of_link(reply.headers.get("location"))
            if found is None:
                raise StokerError(f"The server did not say where stack {name} is (no Location)")
            self._paths[name] = f"stacks/{quote(found[0], safe='')}/{quote(found[1], safe='')}"
        return self._paths[name]

    def _forget(self, name: str) -> None:
        self._paths.pop(name, None)

    def _body(self, request: StackRequest, name: str | None = None) -> dict[str, Any]:
        """A create/update/preview/validate body, as heatclient makes it from local files."""
        body: dict[str, Any] = {}
        if name is not None:
            body["stack_name"] = name
        files = dict(request.files or {})
        if request.template is not None:
            body["template"] = request.template_text if request.template_text is not None else _text(request.template)
            if request.template.name:
                body["template_name"] = request.template.name
        if request.environments:
            names = []
            for number, source in enumerate(request.environments, 1):
                key = source.name or f"environment-{number}.yaml"
                files[key] = _text(source)
                names.append(key)
            body["environment_files"] = names
        if request.files is not None or request.environments:
            body["files"] = files
        if request.parameters:
            body["parameters"] = request.parameters
        if request.disable_rollback is not None:
            body["disable_rollback"] = request.disable_rollback
        if request.timeout_mins is not None:
            body["timeout_mins"] = request.timeout_mins
        if request.tags is not None:
            body["tags"] = ",".join(request.tags)
        if request.clear_parameters:
            body["clear_parameters"] = list(request.clear_parameters)
        if request.converge:
            body["converge"] = True
        return body

    # -- watching an action ----------------------------------------------------------

    def _last_event(self, path: str) -> str | None:
        try:
            events = self._get(f"{path}/events", {"nested_depth": ALL_LEVELS, "sort_dir": "desc", "limit": 1})["events"]
        except RemoteError as error:
            if error.status == 404:
                return None
            raise
        return events[0]["id"] if events else None

    def _new_events(self, path: str, marker: str | None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"nested_depth": ALL_LEVELS}
        if marker:
            params["marker"] = marker
        try:
            return self._get(f"{path}/events", params)["events"]
        except RemoteError as error:
            if error.status == 404:  # the stack is gone (its delete ended)
                return []
            raise

    def _watch(self, path: str, marker: str | None, on_event: EventCallback, finished: Callable[[], Any]) -> Any:
        """Print each new event until ``finished()`` answers something (not None).
        The state is read before the events, so the events up to the end are all shown."""
        delay = POLL_FIRST_S
        while True:
            result = finished()
            for event in self._new_events(path, marker):
                marker = event["id"]
                on_event(event)
            if result is not None:
                return result
            time.sleep(delay)
            delay = min(delay * 1.5, POLL_MAX_S)

    def _stream(self, path: str, params: dict[str, Any], catch_up: Callable[[], list[dict[str, Any]]] | None) -> Iterator[dict[str, Any]]:
        """The stack's event stream (``GET .../events/stream``): each event (Heat's event
        body) once, then ``{"stack": ...}`` when the stream ends with the stack's state.
        A dropped connection is resumed where it stopped (``Last-Event-ID``). ``catch_up``:
        events to give first, once the stream is open (those recorded before it, which a
        ``from=now`` stream does not send); an event in both is given once.

        Raises StreamBrokenError at once when the server has no stream (an older one, or
        another Heat), and StreamRefusedError when it refuses one (429: the project has
        as many open as the server allows): the caller polls instead."""
        seen: set[str] = set()
        last: str | None = None
        failures = 0
        while True:
            headers = {"Last-Event-ID": last} if last else {}
            try:
                with self.transport.stream(f"{self.endpoint}/{path}/events/stream", params, headers) as (status, lines):
                    if status == 429:
                        raise StreamRefusedError(_refusal(status, lines))
                    if status != 200:
                        raise StreamBrokenError(f"HTTP {status}")
                    if catch_up is not None:
                        for event in catch_up():
                            if event["id"] not in seen:
                                seen.add(event["id"])
                                yield event
                        catch_up = None
                    for kind, ident, data in server_sent(lines):
                        if kind == "event":
                            last, failures = ident or last, 0
                            event = json.loads(data)
                            if event["id"] not in seen:
                                seen.add(event["id"])
                                yield event
                        elif kind == "stack":
                            yield {"stack": json.loads(data).get("stack")}
                            return
                        elif kind == "error":
                            break
            except StreamRefusedError:
                raise  # asking again would be refused again: poll
            except StreamBrokenError:
                if last is None and catch_up is not None:
                    raise  # never opened: no stream here
                failures += 1
                if failures > STREAM_RETRIES:
                    raise
                time.sleep(min(POLL_MAX_S * failures, 5.0))
            # The stream ended without the stack's state (the server stopping): resume.

    def _wait_streamed(self, path: str, marker: str | None, on_event: EventCallback, start: Callable[[], Any] | None = None) -> tuple[bool, str | None]:
        """Watch an action to its end on the event stream: (ended, the last event
        shown). Not ended when the server has no stream or it broke for good: the caller
        then polls for the events after the last one shown (``marker``). Without
        ``start``, the stack is new: its stream from its start. With it, the stream of
        what is recorded from now on is opened first, then ``start`` starts the action:
        every event of the action comes on the stream, a nested stack's too, however
        soon the action ends (a nested stack deleted before the client could ask for
        its events included). ``start`` is not called when the stream did not open."""
        params: dict[str, Any] = {"until": "terminal"}
        catch_up: Callable[[], list[dict[str, Any]]] = lambda: []  # noqa: E731
        if start is not None:
            params.update({"until": "next_action", "from": "now"})

            def catch_up() -> list[dict[str, Any]]:
                start()  # once the stream is open: its events are all on it
                return []

        try:
            for item in self._stream(path, params, catch_up):
                if "stack" in item:
                    return True, marker
                on_event(item)
                marker = item["id"]
        except StreamBrokenError as error:
            _note_polling(error)
            return False, marker
        return True, marker

    def _stack_when_done(self, path: str) -> Callable[[], dict[str, Any] | None]:
        def finished() -> dict[str, Any] | None:
            stack = self._get(path, {"resolve_outputs": "false"})["stack"]
            return None if stack["stack_status"].endswith("_IN_PROGRESS") else stack

        return finished

    def _run(self, path: str, start: Callable[[], Any], on_event: EventCallback, created: bool = False) -> dict[str, Any]:
        """Start an action (``start``), show its events until it ends; the stack then.
        The event stream where the server has one, else the events API, polled."""
        if created:
            start()
            ended, marker = self._wait_streamed(path, None, on_event)
        else:
            marker, started = self._last_event(path), []
            ended, marker = self._wait_streamed(path, marker, on_event, lambda: started.append(start()))
            if not started:  # no stream: started now, its events polled
                start()
        if not ended:
            self._watch(path, marker, on_event, self._stack_when_done(path))
        return self._get(path)["stack"]

    # -- limits and stacks -----------------------------------------------------------

    def limits(self) -> loader.Limits:
        return self._limits

    def list_stacks(self, nested: bool = False, hidden: bool = False, deleted: bool = False, all_projects: bool = False) -> list[dict[str, Any]]:
        params = {
            "sort_keys": "creation_time", "sort_dir": "asc",
            "show_nested": str(nested).lower(), "show_hidden": str(hidden).lower(), "show_deleted": str(deleted).lower(),
            **({"global_tenant": "true"} if all_projects else {}),
        }  # fmt: skip
        return self._get("stacks", params)["stacks"]

    def identify_stack(self, name: str) -> tuple[str, str]:
        _, stack_name, stack_id = self._stack_path(name).split("/")
        return unquote(stack_name), unquote(stack_id)

    def get_stack(self, name: str) -> dict[str, Any]:
        return self._get(self._stack_path(name))["stack"]

    def create_stack(self, name: str, request: StackRequest, on_event: EventCallback = _ignore) -> dict[str, Any]:
        return self._create(name, self._body(request, name), on_event)

    def _create(self, name: str, body: dict[str, Any], on_event: EventCallback, route: str = "stacks") -> dict[str, Any]:
        path = ""

        def start() -> None:
            nonlocal path
            created = self._call("POST", route, body).json()["stack"]
            path = self._paths[name] = f"stacks/{quote(name, safe='')}/{quote(created['id'], safe='')}"

        start()
        ended, marker = self._wait_streamed(path, None, on_event)
        if not ended:
            self._watch(path, marker, on_event, self._stack_when_done(path))
        return self._get(path)["stack"]

    def update_stack(self, name: str, request: StackRequest, existing: bool, on_event: EventCallback = _ignore) -> dict[str, Any]:
        path = self._stack_path(name)
        return self._run(path, lambda: self._call("PATCH" if existing else "PUT", path, self._body(request)), on_event)

    def preview_create(self, name: str, request: StackRequest) -> dict[str, Any]:
        """The plan a stoker server makes as the embedded engine does (``with_plan``:
        ``resource_changes`` in the create's order, ``implementations``); from another
        Heat's preview, the stack it would make, each resource added."""
        answer = self._call("POST", "stacks/preview", self._body(request, name), {"with_plan": "true", "plan": "true"}).json()
        if "resource_changes" in answer:
            return {key: value for key, value in answer.items() if key != "stack"}
        return _plan_of_preview(answer["stack"], request)

    def preview_update(self, name: str, request: StackRequest, existing: bool, show_nested: bool = False) -> dict[str, Any]:
        path = self._stack_path(name)
        params = {"show_nested": "True"} if show_nested else {}  # as python-heatclient asks
        params["plan"] = "true"  # stoker's plan document; a Heat that is not stoker ignores it
        return self._call("PATCH" if existing else "PUT", f"{path}/preview", self._body(request), params=params).json()

    def plan_action(self, name: str, action: str, snapshot_id: str | None = None) -> dict[str, Any]:
        body = {"restore": snapshot_id} if action == "restore" else {action.lower(): None}
        return self._call("POST", f"{self._stack_path(name)}/actions/preview", body).json()

    def refresh_stack(self, name: str, dry_run: bool) -> dict[str, Any]:
        path = self._stack_path(name)
        body = {"refresh_only": True}
        if dry_run:
            return self._call("PATCH", f"{path}/preview", body, params={"plan": "true"}).json()
        return self._call("PATCH", path, body).json()

    def apply_plan(self, plan: dict[str, Any], on_event: EventCallback = _ignore) -> dict[str, Any]:
        """``POST /plans/apply`` (stoker's), then the action's events until it ends (a
        refresh's is done when answered)."""
        found = plan.get("stack")
        stack: dict[str, Any] = found if isinstance(found, dict) else {}
        if plan.get("operation") == "refresh" and isinstance(stack.get("id"), str) and isinstance(stack.get("name"), str):
            self._call("POST", "plans/apply", plan)
            return self._get(f"stacks/{quote(stack['name'], safe='')}/{quote(stack['id'], safe='')}")["stack"]
        if plan.get("operation") == "update" and isinstance(stack.get("id"), str) and isinstance(stack.get("name"), str):
            path = f"stacks/{quote(stack['name'], safe='')}/{quote(stack['id'], safe='')}"
            return self._run(path, lambda: self._call("POST", "plans/apply", plan), on_event)
        created = self._call("POST", "plans/apply", plan).json()["stack"]
        name = str(stack.get("name"))
        path = self._paths[name] = f"stacks/{quote(name, safe='')}/{quote(created['id'], safe='')}"
        ended, marker = self._wait_streamed(path, None, on_event)
        if not ended:
            self._watch(path, marker, on_event, self._stack_when_done(path))
        return self._get(path)["stack"]

    def delete_stack(self, name: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        path = self._stack_path(name)
        result = self._run(path, lambda: self._call("DELETE", path), on_event)
        self._forget(name)
        return result

    def stack_action(self, name: str, action: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        path = self._stack_path(name)
        return self._run(path, lambda: self._call("POST", f"{path}/actions", {action.lower(): None}), on_event)

    def cancel_stack(self, name: str, rollback: bool) -> dict[str, Any]:
        path = self._stack_path(name)
        self._call("POST", f"{path}/actions", {"cancel_update" if rollback else "cancel_without_rollback": None})
        return self._get(path, {"resolve_outputs": "false"})["stack"]

    def export_stack(self, name: str) -> dict[str, Any]:
        return self._get(f"{self._stack_path(name)}/export")

    def detect_drift(self, name: str) -> dict[str, Any]:
        return self._call("POST", f"{self._stack_path(name)}/drift").json()["drift"]

    def last_drift(self, name: str) -> dict[str, Any] | None:
        try:
            return self._get(f"{self._stack_path(name)}/drift")["drift"]
        except RemoteError as error:
            if error.status == 404 and error.heat_type == "HTTPNotFound":  # the stack is there, no detection yet
                return None
            raise

    def abandon_stack(self, name: str) -> dict[str, Any]:
        path = self._stack_path(name)
        data = self._call("DELETE", f"{path}/abandon").json()
        self._forget(name)
        return data

    def adopt_stack(self, name: str, data: dict[str, Any], request: StackRequest, on_event: EventCallback = _ignore) -> dict[str, Any]:
        body = self._body(request, name)
        body["adopt_stack_data"] = data
        return self._create(name, body, on_event)

    def preview_import(self, name: str, request: StackRequest, imports: dict[str, str], accept_differences: bool) -> dict[str, Any]:
        body = self._body(request, name)
        body["resources"] = dict(imports)
        body["accept_differences"] = accept_differences
        return self._call("POST", "imports/preview", body).json()

    def import_stack(
        self, name: str, request: StackRequest, imports: dict[str, str], accept_differences: bool, on_event: EventCallback = _ignore
    ) -> dict[str, Any]:
        body = self._body(request, name)
        body["resources"] = dict(imports)
        body["accept_differences"] = accept_differences
        return self._create(name, body, on_event, route="imports")

    def template_of(self, name: str) -> Any:
        return self._get(f"{self._stack_path(name)}/template")

    def environment_of(self, name: str) -> Any:
        return self._get(f"{self._stack_path(name)}/environment")

    def files_of(self, name: str) -> dict[str, str]:
        return dict(self._get(f"{self._stack_path(name)}/files") or {})

    # -- resources -------------------------------------------------------------------

    def list_resources(self, name: str, nested_depth: int = 0, filters: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
        params: list[tuple[str, Any]] = [("nested_depth", nested_depth)] if nested_depth else []
        params += [(key, value) for key, values in (filters or {}).items() for value in values]
        return self._get(f"{self._stack_path(name)}/resources", params or None)["resources"]

    def _resource_path(self, name: str, resource_name: str) -> str:
        return f"{self._stack_path(name)}/resources/{quote(resource_name, safe='')}"

    def _resource_get(self, name: str, resource_name: str, subpath: str = "") -> Any:
        path = self._resource_path(name, resource_name)
        try:
            return self._get(path + subpath)
        except RemoteError as error:
            if error.status == 404 and error.heat_type == "HTTPNotFound":  # the stack is there, not the resource
                stack_name = path.split("/")[1]
                raise StokerError(error.message, hint=f"see 'stoker stack resource list {unquote(stack_name)}'")
            raise

    def get_resource(self, name: str, resource_name: str) -> dict[str, Any]:
        return self._resource_get(name, resource_name)["resource"]

    def resource_metadata(self, name: str, resource_name: str) -> Any:
        return self._resource_get(name, resource_name, "/metadata")["metadata"]

    def mark_unhealthy(self, name: str, resource_name: str, unhealthy: bool, reason: str) -> None:
        self._call("PATCH", self._resource_path(name, resource_name), {"mark_unhealthy": unhealthy, "resource_status_reason": reason})

    def signal_resource(self, name: str, resource_name: str, details: Mapping[str, Any]) -> None:
        self._call("POST", f"{self._resource_path(name, resource_name)}/signal", dict(details))

    def clear_hook(self, name: str, resource_name: str, hook: str | None) -> None:
        # Heat's hook clear is a signal; a null hook clears whichever the resource waits at.
        self.signal_resource(name, resource_name, {"unset_hook": hook})

    # -- events and outputs ----------------------------------------------------------

    def list_events(self, name: str, resource_name: str | None = None, nested_depth: int = 0) -> list[dict[str, Any]]:
        path = self._stack_path(name)
        params = {"nested_depth": nested_depth} if nested_depth else None
        if resource_name is None:
            return self._get(f"{path}/events", params)["events"]
        try:
            return self._get(f"{path}/resources/{quote(resource_name, safe='')}/events", params)["events"]
        except RemoteError as error:
            if error.status == 404 and error.heat_type == "HTTPNotFound":  # Heat: "No events found for resource"
                return []
            raise

    def follow_events(self, name: str, resource_name: str | None, nested_depth: int, seen: set[str]) -> Iterator[dict[str, Any]]:
        """On the event stream from now (after the events recorded so far, which are
        listed again once it is open, so none falls between); polled where the server
        has no stream."""
        path = self._stack_path(name)

        def catch_up() -> list[dict[str, Any]]:
            return self.list_events(name, None, nested_depth)

        try:
            for item in self._stream(path, {"from": "now", "nested_depth": nested_depth}, catch_up):
                if "stack" in item:
                    return  # the stack is gone
                if item["id"] not in seen and (resource_name is None or item["resource_name"] == resource_name):
                    seen.add(item["id"])
                    yield item
        except StreamBrokenError as error:
            _note_polling(error)
            yield from super().follow_events(name, resource_name, nested_depth, seen)

    def get_event(self, name: str, resource_name: str, event_id: str) -> dict[str, Any] | None:
        path = self._stack_path(name)
        try:
            return self._get(f"{path}/resources/{quote(resource_name, safe='')}/events/{quote(event_id, safe='')}")["event"]
        except RemoteError as error:
            if error.status == 404 and error.heat_type == "HTTPNotFound":
                return None
            raise

    def list_outputs(self, name: str) -> list[dict[str, Any]]:
        return self._get(f"{self._stack_path(name)}/outputs")["outputs"]

    def get_output(self, name: str, output_key: str) -> dict[str, Any] | None:
        path = self._stack_path(name)
        try:
            return self._get(f"{path}/outputs/{quote(output_key, safe='')}")["output"]
        except RemoteError as error:
            if error.status == 404 and error.heat_type == "HTTPNotFound":
                return None
            raise

    # -- snapshots -------------------------------------------------------------------

    def create_snapshot(self, name: str, snapshot_name: str | None, on_event: EventCallback = _ignore) -> dict[str, Any]:
        path = self._stack_path(name)
        marker = self._last_event(path)
        snapshot = self._call("POST", f"{path}/snapshots", {"name": snapshot_name}).json()
        snapshot_path = f"{path}/snapshots/{quote(snapshot['id'], safe='')}"

        def finished() -> dict[str, Any] | None:
            current = self._get(snapshot_path)["snapshot"]
            return None if current["status"] == "IN_PROGRESS" else current

        return self._watch(path, marker, on_event, finished)

    def list_snapshots(self, name: str) -> list[dict[str, Any]]:
        return self._get(f"{self._stack_path(name)}/snapshots")["snapshots"]

    def get_snapshot(self, name: str, snapshot_id: str) -> dict[str, Any]:
        return self._get(f"{self._stack_path(name)}/snapshots/{quote(snapshot_id, safe='')}")["snapshot"]

    def delete_snapshot(self, name: str, snapshot_id: str) -> None:
        self._call("DELETE", f"{self._stack_path(name)}/snapshots/{quote(snapshot_id, safe='')}")

    def restore_snapshot(self, name: str, snapshot_id: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        path = self._stack_path(name)
        return self._run(path, lambda: self._call("POST", f"{path}/snapshots/{quote(snapshot_id, safe='')}/restore"), on_event)

    # -- the catalog -----------------------------------------------------------------

    def validate_template(self, request: StackRequest, show_nested: bool) -> dict[str, Any]:
        # ``with_notes``: what a create would still need, as the embedded engine says it
        # (a stoker server's; another Heat ignores the parameter and answers no Notes).
        params = {"with_notes": "true", **({"show_nested": "true"} if show_nested else {})}
        return self._call("POST", "validate", self._body(request), params).json()

    def template_versions(self) -> list[dict[str, Any]]:
        return self._get("template_versions")["template_versions"]

    def template_functions(self, version: str, with_conditions: bool) -> list[dict[str, Any]] | None:
        params = {"with_condition_func": "true"} if with_conditions else None
        try:
            return self._get(f"template_versions/{quote(version, safe='')}/functions", params)["template_functions"]
        except RemoteError as error:
            if error.status == 404:
                return None
            raise

    def resource_types(self, filters: Mapping[str, str] | None = None, with_description: bool = False) -> list[Any]:
        params = {**(filters or {}), **({"with_description": "true"} if with_description else {})}
        return self._get("resource_types", params or None)["resource_types"]

    def resource_type(self, type_name: str) -> dict[str, Any]:
        return self._get(f"resource_types/{quote(type_name, safe='')}")

    def resource_type_template(self, type_name: str, template_type: str) -> dict[str, Any]:
        return self._get(f"resource_types/{quote(type_name, safe='')}/template", {"template_type": template_type})

    def find_capabilities(self, files: dict[str, str], requirements: list[tuple[str, str]]) -> dict[str, Any]:
        wanted: dict[str, Any] = {}
        for key, value in requirements:
            wanted[key] = value
        return self._call("POST", "capabilities/find", {"files": files, "capabilities": wanted}).json()

    def template_capabilities(self, files: dict[str, str], templates: list[str], environments: list[Source]) -> dict[str, Any]:
        sent = dict(files)
        names = []
        for number, source in enumerate(environments, 1):
            key = source.name or f"environment-{number}.yaml"
            sent[key] = _text(source)
            names.append(key)
        body: dict[str, Any] = {"files": sent, "templates": templates}
        if names:
            body["environment_files"] = names
        return self._call("POST", "template_capabilities", body).json()


def _text(source: Source) -> Any:
    text = source.text
    if isinstance(text, bytes):
        return text.decode("utf-8", errors="replace")
    if isinstance(text, loader.Document):
        return text.data
    return text


def _plan_of_preview(preview: Mapping[str, Any], request: StackRequest) -> dict[str, Any]:
    """A create's plan made from Heat's preview (a server that is not stoker): every
    resource added, requirements first as far as the preview's ``required_by`` tell (a
    nested stack's resource comes as its children's list, without its own)."""
    from stoker.graph.dag import Graph

    written = _resources_of(request)
    types: dict[str, str] = {}
    graph: Graph[str] = Graph()
    required_by: dict[str, list[str]] = {}
    for item in preview.get("resources") or []:
        if isinstance(item, list):  # a nested stack: its resources, each naming it as parent
            parent = next((r.get("parent_resource") for r in item if isinstance(r, Mapping) and r.get("parent_resource")), None)
            if parent is not None:
                types[parent] = written.get(parent, "")
                graph.add_node(parent)
        elif isinstance(item, Mapping) and item.get("resource_name"):
            types[item["resource_name"]] = item.get("resource_type") or ""
            graph.add_node(item["resource_name"])
            required_by[item["resource_name"]] = list(item.get("required_by") or [])
    for name in types:
        for needed, dependents in required_by.items():
            if name in dependents and needed in types:
                graph.add_edge(name, needed)
    added = [{"resource_name": name, "resource_type": types[name], "reason": "new resource"} for name in graph.topological_order()]
    return {"resource_changes": {kind: added if kind == "added" else [] for kind in CHANGE_KINDS}}


def _resources_of(request: StackRequest) -> dict[str, str]:
    """Resource name -> type as the request's template writes it (HOT or CFN)."""
    data = _text(request.template) if request.template is not None else None
    data = data.data if isinstance(data, loader.Document) else data
    if isinstance(request.template.text if request.template else None, loader.Document):
        data = request.template.text.data  # type: ignore[union-attr]
    resources = (data.get("resources") or data.get("Resources") or {}) if isinstance(data, Mapping) else {}
    return {
        str(name): str(body.get("type") or body.get("Type") or "")
        for name, body in resources.items()
        if isinstance(body, Mapping)
    }


def _refusal(status: int, lines: Iterator[str]) -> str:
    """The server's message of a refused stream (Heat's fault body)."""
    text = "\n".join(lines)
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    return str(error_of(status, body, text))


def _note_polling(error: StreamBrokenError) -> None:
    """Say why the events are polled, when the server refused its stream (a server
    without one, or a stream that broke for good, is polled without a word)."""
    if isinstance(error, StreamRefusedError):
        from stoker.cli.invocation import message

        message("note", f"NOTE: the server refused an event stream: {error}; polling the events API instead")
