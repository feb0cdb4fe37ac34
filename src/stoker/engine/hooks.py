"""Hooks (breakpoints): a resource pauses before or after an action until a user clears
the hook with a signal.

Hooks are set in the environment, as in Heat:

    resource_registry:
      resources:
        my_server:              # or a pattern: "*_server", "web_*"
          hooks: [pre-create, post-update]

While a resource waits, its dependents wait too; independent resources go on. The wait
is persisted (``resources.hook``), so a restarted engine waits for the same hook.
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Mapping
from typing import Any

from stoker.engine.states import Action, Status
from stoker.store import ResourceRecord

HOOK_TYPES = ("pre-create", "pre-update", "pre-delete", "post-create", "post-update", "post-delete")


def hooks_for(registry: Mapping[str, Any], name: str) -> set[str]:
    """The hooks the environment sets on resource ``name`` (exact names and patterns)."""
    entries = registry.get("resources") if isinstance(registry, Mapping) else None
    found: set[str] = set()
    if not isinstance(entries, Mapping):
        return found
    for pattern, entry in entries.items():
        if not isinstance(entry, Mapping) or not fnmatch.fnmatchcase(name, str(pattern)):
            continue
        hooks = entry.get("hooks") or []
        if isinstance(hooks, str):
            hooks = [hooks]
        found.update(hook for hook in hooks if hook in HOOK_TYPES)
    return found


async def pause(context: Any, record: ResourceRecord, action: Action, when: str) -> None:
    """Wait at hook ``<when>-<action>`` if the environment sets it on this resource."""
    hook = f"{when}-{str(action).lower()}"
    if hook not in hooks_for(context.runtime.environment.resource_registry, record.name):
        return
    if record.hook != hook:
        # The event says where the stack waits; the column makes the wait survive a restart.
        await context.recorder.resource_state(
            record, action, Status.IN_PROGRESS if when == "pre" else Status.COMPLETE, f"{action} paused until Hook {hook} is cleared", hook=hook
        )
    while context.store.resource_hook(record) == hook:
        await asyncio.sleep(context.hook_poll_s)
    record.hook = None
