"""Hooks (breakpoints): a resource pauses before or after an action until a user clears
the hook with a signal.

Hooks are set in the environment, as in Heat:

    resource_registry:
      resources:
        my_server:              # or a pattern: "*_server", "web_*"
          hooks: [pre-create, post-update]

While a resource waits, its dependents wait too; independent resources go on. The wait
is persisted (``resources.hook``), so a restarted engine waits for the same hook.

As in Heat (``Resource._break_if_required``), waiting is not a state: the resource keeps
the state it had (INIT_COMPLETE before its create, its last state before an update) and
the pause is an event in that state. Create hooks stop only a stack create and delete
hooks only a stack delete: a replacement or a resource added by an update is created
without its pre-create hook (its pre-update hook, which fires for every resource an
update visits, changed or not, was the stop), and the cleanup of an update deletes
without delete hooks.
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Mapping
from typing import Any

from stoker.engine.states import Action
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


# The stack action during which each resource action's hooks stop (Heat checks
# ``self.stack.action`` in create and delete; update hooks stop every update and rollback).
_STACK_ACTIONS = {Action.CREATE: (Action.CREATE,), Action.DELETE: (Action.DELETE,)}


async def pause(context: Any, record: ResourceRecord, action: Action, when: str) -> None:
    """Wait at hook ``<when>-<action>`` if the environment sets it on this resource."""
    hook = f"{when}-{str(action).lower()}"
    stack_actions = _STACK_ACTIONS.get(action)
    if stack_actions is not None and context.recorder.stack.action not in stack_actions:
        return
    if hook not in hooks_for(context.runtime.environment.resource_registry, record.name):
        return
    if record.hook != hook:
        # The event says where the stack waits; the column makes the wait survive a restart.
        await context.recorder.resource_event(record, f"{action} paused until Hook {hook} is cleared", hook=hook)
    try:
        while context.store.resource_hook(record) == hook:
            await asyncio.sleep(context.hook_poll_s)
    except asyncio.CancelledError:
        if context.stop.reason is not None:
            # The action was stopped (cancel, timeout, delete): the wait ends with it.
            await context.recorder.resource_event(record, "Failure occurred while waiting.", hook=None)
        raise
    record.hook = None
