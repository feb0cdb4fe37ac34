"""The live progress of an action (``--wait``): each event as it is recorded, a nested
stack's resources named by their path from the stack acted on (``members.0.secret``, as
``stoker stack event list -n`` names them), and, on a terminal, a status line that
counts the resources done and failed and the time gone by.

Piped (stderr not a terminal), it writes plain lines and nothing else: no colours, no
cursor movement. ``json_lines``: one event object a line (the row ``stoker stack event
list -f json`` gives), flushed, for machines.

Must not: talk to the engine other than through ``Paths``'s one question (who owns a
nested stack), or print to stdout (the action's result goes there).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from stoker.cli.backend import link, stack_of_link

# (the parent stack's id, the parent's resource the stack is) of a stack id; None: top.
OwnerLookup = Callable[[str], "tuple[str, str] | None"]


def owner_id(event: Mapping[str, Any]) -> str | None:
    """The id of the stack an event (Heat's event body) is of."""
    owner = stack_of_link(link(event, "stack"))
    return owner[1] if owner else None


class Paths:
    """The path (``members.0.``) from the stack acted on to the nested stack an event
    is of, found by asking who owns each nested stack once (``owner_of``)."""

    def __init__(self, owner_of: OwnerLookup | None):
        self.owner_of = owner_of
        self.known: dict[str, str] = {}
        # Learnt from the events: the stack a resource's physical id names is its
        # nested stack (what a deleted nested stack can no longer be asked).
        self.owners: dict[str, tuple[str, str]] = {}

    def learn(self, event: Mapping[str, Any], stack_id: str | None) -> None:
        physical = event.get("physical_resource_id")
        if stack_id and physical and physical != stack_id:
            self.owners.setdefault(physical, (stack_id, event["resource_name"]))

    def prefix(self, stack_id: str | None) -> str:
        if stack_id is None or self.owner_of is None:
            return ""
        chain: list[tuple[str, str]] = []
        current = stack_id
        # Up to a stack whose path is known, or the top (depth-limited, as stacks are).
        while current not in self.known and len(chain) < 64:
            owner = self.owners.get(current)
            if owner is None:
                try:
                    owner = self.owner_of(current)
                except Exception:  # noqa: BLE001 - a path is a nicety: a failed lookup shows the bare name
                    owner = None
            if owner is None:
                self.known[current] = ""
                break
            chain.append((current, owner[1]))
            current = owner[0]
        for child, resource_name in reversed(chain):
            self.known[child] = f"{self.known.get(current, '')}{resource_name}."
            current = child
        return self.known.get(stack_id, "")


class Progress:
    """Called with each event (Heat's event body) of an action; a context manager
    around the action (the status line lives while it runs)."""

    def __init__(
        self,
        quiet: bool = False,
        json_lines: bool = False,
        owner_of: OwnerLookup | None = None,
        stream: Any = None,
    ):
        self.quiet = quiet
        self.json_lines = json_lines
        self.paths = Paths(owner_of)
        self.stream = stream if stream is not None else sys.stderr
        self.states: dict[str, str] = {}  # resource path -> its last status
        self.stack_state: str | None = None  # the acted-on stack's last state, from its events
        self.started = time.monotonic()
        self.interactive = not quiet and not json_lines and is_terminal(self.stream)
        self._live: Any = None
        self._lock = threading.Lock()

    # -- counting --------------------------------------------------------------------

    @property
    def done(self) -> int:
        return sum(1 for status in self.states.values() if status == "COMPLETE")

    @property
    def failed(self) -> int:
        return sum(1 for status in self.states.values() if status == "FAILED")

    def status_line(self) -> str:
        elapsed = int(time.monotonic() - self.started)
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{self.done}/{len(self.states)} resources done{failed} - {elapsed // 60}:{elapsed % 60:02d} elapsed"

    # -- events ----------------------------------------------------------------------

    def __call__(self, event: Mapping[str, Any]) -> None:
        stack_id = owner_id(event)
        self.paths.learn(event, stack_id)
        # The event stream names the path itself (its stack_path), a nested stack deleted
        # since included; events read from the events API are placed by asking.
        streamed = event.get("stack_path")
        path = (f"{streamed}." if streamed else "") if isinstance(streamed, str) else self.paths.prefix(stack_id)
        state = str(event.get("resource_status") or "")
        status = "IN_PROGRESS" if state.endswith("_IN_PROGRESS") else state.rpartition("_")[2]
        if event.get("physical_resource_id") != stack_id:  # not a stack's own event
            self.states[f"{path}{event['resource_name']}"] = status
        elif not path:
            self.stack_state = state
        if self.quiet:
            return
        if self.json_lines:
            from stoker.cli.render import event_row

            self._write(json.dumps(event_row(event, path), default=str))
            return
        when = (event.get("event_time") or "").replace("T", " ")
        line = f"{when} [{path}{event['resource_name']}]: {state}  {event.get('resource_status_reason')}"
        if self._live is None:
            self._write(line)
            return
        with self._lock:
            self._live.console.print(
                line,
                style=_STATUS_STYLE.get(status, ""),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            # The count changed: redraw it now, not at the next tick.
            self._live.refresh()

    def note(self, text: str) -> None:
        """A message of the command's own (not an event), printed among the events
        (``{"note": text}`` among JSON lines)."""
        if self.json_lines:
            self._write(json.dumps({"note": text}))
            return
        if self._live is not None:
            with self._lock:
                self._live.console.print(text, highlight=False, markup=False, soft_wrap=True)
        else:
            self._write(text)

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    # -- the status line -------------------------------------------------------------

    def __enter__(self) -> Progress:
        self.started = time.monotonic()
        if self.interactive:
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            console = Console(file=self.stream, force_terminal=True, soft_wrap=True)
            self._live = Live(
                get_renderable=lambda: Text(self.status_line(), style="bold"),
                console=console,
                refresh_per_second=2,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the status line; its last state stays on screen."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()


_STATUS_STYLE = {"COMPLETE": "green", "FAILED": "bold red", "IN_PROGRESS": "yellow"}


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
