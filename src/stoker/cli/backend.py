"""What a ``stoker`` command asks of the engine it talks to: the ``Backend`` interface,
and the request it sends to make or change a stack.

Two implementations: ``cli.embedded.EmbeddedBackend`` runs the engine in this process
(``stoker.service.Service`` on the local store) and ``cli.remote.RemoteBackend`` talks to
a ``stoker serve`` (or any Heat-compatible Orchestration API v1) over HTTP. Every method
answers plain data in the shapes of Heat's v1 API (the bodies ``stoker.api.views``
makes), so a command renders the same output whichever backend it has and never knows
which one it is. This module must not import either implementation.

Actions (create, update, delete, snapshot, ...) return when the action has ended, as
the embedded engine always has: ``on_event`` is called with each event (Heat's event
body) as it is recorded, for live progress.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine is imported only by the embedded backend that runs it
    from stoker.template import loader

EventCallback = Callable[[dict[str, Any]], None]


@dataclass
class Source:
    """A template or environment file as the command read it: its text (bytes, or the
    document ``cli.files`` parsed) and its path, for messages. Plain data: the embedded
    backend hands it to the engine as ``stoker.service.Source``, the remote one sends it."""

    text: Any
    name: str | None = None


def _ignore(event: dict[str, Any]) -> None:
    return None


@dataclass
class StackRequest:
    """A create, update, preview or validate, as the command line gives it.

    ``template``: the template as the CLI read and parsed it (``cli.files``), with its
    path as ``name``; ``template_text``: the text it was parsed from, which a server is
    sent (so its problems are placed by line and column, as the embedded engine places
    them). ``environments``: each environment file's text with its path. ``files``: the
    files map (get_file targets, nested templates)."""

    template: Source | None = None
    template_text: str | None = None
    environments: list[Source] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] | None = None
    disable_rollback: bool | None = None
    timeout_mins: int | None = None
    tags: list[str] | None = None
    clear_parameters: list[str] = field(default_factory=list)
    converge: bool = False  # an update from the live objects (docs/drift.md)


def link(body: Mapping[str, Any], rel: str) -> str | None:
    """The href of ``body``'s link ``rel`` (``self``, ``stack``, ``nested``, ...)."""
    for item in body.get("links") or ():
        if item.get("rel") == rel:
            return item.get("href")
    return None


def stack_of_link(href: str | None) -> tuple[str, str] | None:
    """(name, id) of the stack a Heat URL ``.../stacks/{name}/{id}[/...]`` names."""
    from urllib.parse import unquote

    if not href:
        return None
    parts = href.split("/stacks/", 1)
    if len(parts) != 2:
        return None
    pieces = parts[1].split("?", 1)[0].split("/")
    if len(pieces) < 2:
        return None
    return unquote(pieces[0]), unquote(pieces[1])


def close_names(name: str, names: Sequence[str]) -> str | None:
    """A "Did you mean ...?" for a stack ``name`` that is not there, from the names of the
    caller's stacks (None when none is close)."""
    from difflib import get_close_matches

    close = get_close_matches(name, list(dict.fromkeys(names)), n=3, cutoff=0.6)
    if not close:
        return None
    return "Did you mean " + " or ".join(repr(found) for found in close) + "?"


class Backend(abc.ABC):
    """The engine a command talks to. Names of stacks may be a name or an id."""

    where: str  # for messages: "the embedded engine" or the server's URL

    # -- limits ----------------------------------------------------------------------

    @abc.abstractmethod
    def limits(self) -> loader.Limits:
        """The template limits files are read with before they are sent."""

    # -- stacks ----------------------------------------------------------------------

    @abc.abstractmethod
    def list_stacks(self, nested: bool = False, hidden: bool = False, deleted: bool = False, all_projects: bool = False) -> list[dict[str, Any]]:
        """Stack summaries, oldest first (``parent`` set for nested ones; ``deleted``:
        deleted ones too, with their ``deletion_time``; ``all_projects``: every
        project's, each with its ``project``)."""

    @abc.abstractmethod
    def identify_stack(self, name: str) -> tuple[str, str]:
        """(name, id) of the stack named by name or id (Heat's identify_stack)."""

    @abc.abstractmethod
    def get_stack(self, name: str) -> dict[str, Any]:
        """Heat's stack detail, outputs resolved (a deleted stack found by id too)."""

    def stack_owner(self, stack_id: str) -> tuple[str, str] | None:
        """(the parent stack's id, the parent's resource that is it) of a nested stack;
        None for a top-level one. For naming nested stacks' events by their path."""
        parent = self.get_stack(stack_id).get("parent")
        if not parent:
            return None
        for found in self.list_resources(parent):
            if found.get("physical_resource_id") == stack_id:
                return parent, found["resource_name"]
        return None

    @abc.abstractmethod
    def create_stack(self, name: str, request: StackRequest, on_event: EventCallback = _ignore) -> dict[str, Any]:
        """Create and run to the end; the stack's detail then."""

    @abc.abstractmethod
    def update_stack(self, name: str, request: StackRequest, existing: bool, on_event: EventCallback = _ignore) -> dict[str, Any]:
        """Update (``existing``: PATCH, keep what is not given) and run to the end."""

    @abc.abstractmethod
    def preview_create(self, name: str, request: StackRequest) -> dict[str, Any]:
        """``{"resource_changes": {"added": [...], ...}}`` of a create, in the order the
        create makes them, with ``implementations`` where the environment lists candidates,
        and the ``plan`` document (stoker's; a Heat that is not stoker makes none)."""

    @abc.abstractmethod
    def preview_update(self, name: str, request: StackRequest, existing: bool, show_nested: bool = False) -> dict[str, Any]:
        """Heat's update preview (``resource_changes``) with stoker's property changes;
        ``show_nested``: nested stacks' resources too (Heat's show_nested); and the
        ``plan`` document (stoker's)."""

    @abc.abstractmethod
    def apply_plan(self, plan: dict[str, Any], on_event: EventCallback = _ignore) -> dict[str, Any]:
        """Apply a saved plan (docs/plans.md: refused when stale) and run it to the end;
        the stack's detail then."""

    @abc.abstractmethod
    def delete_stack(self, name: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        """Delete and run to the end; the stack's summary then (``DELETE_COMPLETE``)."""

    @abc.abstractmethod
    def stack_action(self, name: str, action: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        """suspend, resume or check, run to the end; the stack's summary then."""

    @abc.abstractmethod
    def cancel_stack(self, name: str, rollback: bool) -> dict[str, Any]:
        """Ask the engine running the stack's action to stop; the stack's summary."""

    @abc.abstractmethod
    def export_stack(self, name: str) -> dict[str, Any]: ...

    @abc.abstractmethod
    def abandon_stack(self, name: str) -> dict[str, Any]: ...

    @abc.abstractmethod
    def adopt_stack(self, name: str, data: dict[str, Any], request: StackRequest, on_event: EventCallback = _ignore) -> dict[str, Any]: ...

    @abc.abstractmethod
    def import_stack(
        self, name: str, request: StackRequest, imports: dict[str, str], accept_differences: bool, on_event: EventCallback = _ignore
    ) -> dict[str, Any]:
        """Make a stack whose resources in ``imports`` (name -> id) take over objects
        that exist already (docs/import.md); the stack when its ADOPT ends."""

    @abc.abstractmethod
    def preview_import(self, name: str, request: StackRequest, imports: dict[str, str], accept_differences: bool) -> dict[str, Any]:
        """``{"plan": ...}``: what ``import_stack`` would take over and make (docs/import.md)."""

    @abc.abstractmethod
    def detect_drift(self, name: str) -> dict[str, Any]:
        """Compare every resource with its live object now (docs/drift.md): the drift
        body (``summary``, ``resources``), kept as the stack's last."""

    @abc.abstractmethod
    def last_drift(self, name: str) -> dict[str, Any] | None:
        """The stack's last drift detection; None before the first."""

    @abc.abstractmethod
    def plan_action(self, name: str, action: str, snapshot_id: str | None = None) -> dict[str, Any]:
        """``{"plan": ...}``: what a suspend, resume, check, delete or snapshot would do
        to each resource, or a restore to ``snapshot_id`` (docs/plans.md)."""

    @abc.abstractmethod
    def refresh_stack(self, name: str, dry_run: bool) -> dict[str, Any]:
        """``{"plan": ...}``: what the stack would take (``dry_run``), or took, from its
        live objects, the cloud not changed (docs/drift.md)."""

    @abc.abstractmethod
    def template_of(self, name: str) -> Any: ...

    @abc.abstractmethod
    def environment_of(self, name: str) -> Any: ...

    @abc.abstractmethod
    def files_of(self, name: str) -> dict[str, str]: ...

    # -- resources -------------------------------------------------------------------

    @abc.abstractmethod
    def list_resources(self, name: str, nested_depth: int = 0, filters: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
        """Heat's resource list bodies (each with its ``stack`` link, and ``nested``
        for a resource that owns a nested stack), passing Heat's resource ``filters``
        (``api.resources.RESOURCE_FILTER_KEYS``)."""

    @abc.abstractmethod
    def get_resource(self, name: str, resource_name: str) -> dict[str, Any]:
        """Heat's resource show body, with ``attributes``."""

    @abc.abstractmethod
    def resource_metadata(self, name: str, resource_name: str) -> Any: ...

    @abc.abstractmethod
    def mark_unhealthy(self, name: str, resource_name: str, unhealthy: bool, reason: str) -> None: ...

    @abc.abstractmethod
    def signal_resource(self, name: str, resource_name: str, details: Mapping[str, Any]) -> None: ...

    @abc.abstractmethod
    def clear_hook(self, name: str, resource_name: str, hook: str | None) -> None:
        """``hook`` None: whichever hook the resource waits at."""

    # -- events and outputs ----------------------------------------------------------

    @abc.abstractmethod
    def list_events(self, name: str, resource_name: str | None = None, nested_depth: int = 0) -> list[dict[str, Any]]:
        """Heat's event bodies, oldest first (each with its ``stack`` link)."""

    # Seconds between two looks for new events where nothing says when one comes.
    follow_interval_s = 1.0

    def follow_events(self, name: str, resource_name: str | None, nested_depth: int, seen: set[str]) -> Iterator[dict[str, Any]]:
        """Each event recorded from now on whose id is not in ``seen`` (which it adds
        to), as it comes, for ever (the caller stops on KeyboardInterrupt). This one
        looks every ``follow_interval_s``."""
        import time

        while True:
            time.sleep(self.follow_interval_s)
            for item in self.list_events(name, resource_name, nested_depth):
                if item["id"] not in seen:
                    seen.add(item["id"])
                    yield item

    @abc.abstractmethod
    def get_event(self, name: str, resource_name: str, event_id: str) -> dict[str, Any] | None:
        """One event with its ``resource_type``; None when there is no such event."""

    @abc.abstractmethod
    def list_outputs(self, name: str) -> list[dict[str, Any]]:
        """Output keys and descriptions (not resolved)."""

    @abc.abstractmethod
    def get_output(self, name: str, output_key: str) -> dict[str, Any] | None:
        """One output resolved; None when the stack has no such output."""

    # -- snapshots -------------------------------------------------------------------

    @abc.abstractmethod
    def create_snapshot(self, name: str, snapshot_name: str | None, on_event: EventCallback = _ignore) -> dict[str, Any]: ...

    @abc.abstractmethod
    def list_snapshots(self, name: str) -> list[dict[str, Any]]: ...

    @abc.abstractmethod
    def get_snapshot(self, name: str, snapshot_id: str) -> dict[str, Any]: ...

    @abc.abstractmethod
    def delete_snapshot(self, name: str, snapshot_id: str) -> None: ...

    @abc.abstractmethod
    def restore_snapshot(self, name: str, snapshot_id: str, on_event: EventCallback = _ignore) -> dict[str, Any]: ...

    # -- the catalog -----------------------------------------------------------------

    @abc.abstractmethod
    def validate_template(self, request: StackRequest, show_nested: bool) -> dict[str, Any]:
        """Heat's validate result (``Warnings`` when a deprecated thing is in use), with
        stoker's ``Notes``: what a create would still need (none from a server that is
        not stoker)."""

    @abc.abstractmethod
    def template_versions(self) -> list[dict[str, Any]]: ...

    @abc.abstractmethod
    def template_functions(self, version: str, with_conditions: bool) -> list[dict[str, Any]] | None:
        """None when the version is not known."""

    @abc.abstractmethod
    def resource_types(self, filters: Mapping[str, str] | None = None, with_description: bool = False) -> list[Any]:
        """Type names (with ``with_description``, objects with the description too),
        passing Heat's ``filters``: name (a regular expression), version, support_status."""

    @abc.abstractmethod
    def resource_type(self, type_name: str) -> dict[str, Any]: ...

    @abc.abstractmethod
    def resource_type_template(self, type_name: str, template_type: str) -> dict[str, Any]:
        """Heat's generated template of one resource of the type (hot or cfn)."""

    @abc.abstractmethod
    def find_capabilities(self, files: dict[str, str], requirements: list[tuple[str, str]]) -> dict[str, Any]:
        """``{"templates": [...], "skipped": [...]}`` (``POST /capabilities/find``)."""

    @abc.abstractmethod
    def template_capabilities(self, files: dict[str, str], templates: list[str], environments: list[Source]) -> dict[str, Any]:
        """``POST /template_capabilities``'s document."""
