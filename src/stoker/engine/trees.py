"""Stack trees: a root stack and every nested stack under it, held as one thing.

Heat's ``max_resources_per_stack`` counts every resource of the tree under one root
(Heat's ``Stack.total_resources``, checked in ``StackResource._validate_nested_resources``),
the nested stack resources themselves included, not the resources of each stack alone.
This module owns that count and the message that refuses a tree over it, at the three
moments a tree can grow past it:

* validation, where the counts are known: ``tree_size`` multiplies a group's member by
  the group's count (a literal or a resolved parameter), through nested templates and
  template resources, over the ``ValidationResult`` tree (a group is validated with one
  member standing for ``count``); ``check_tree`` names the place and the fix;
* a nested stack's create or update (``engine.nested``), for counts known only at run
  time: what the store holds for the tree, less the child being replaced, plus what the
  child's validated template would make (``check_child``), before the child is made;
* recovery (``engine.recovery``): a tree the store already holds over the limit (made
  before this check existed, or the limit lowered since) is failed, not resumed.

The run-time count reads the store: nested stacks checked at the same moment, or made
but whose jobs have not yet written their rows, do not see each other. What a tree can
grow past the limit that way is bounded by what those few checks each let in (each one
alone fits), never a multiplication like the one validation refuses.

It also owns the tree's share of the engine's handler threads (``TreeShares``): one
tree may have at most ``max_tree_handler_calls`` plugin calls running at once (in each
engine process), so the rest of the pool always serves other stacks. A tree's nested
stacks are asked for by its handler calls, so the share also paces how fast a tree
makes them.

What it must not do: write anything (its callers record what it decides) or run
handlers itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

from stoker.sdk.exceptions import ValidationError
from stoker.store import StackRecord, Store
from stoker.template.errors import TemplateError

if TYPE_CHECKING:
    from stoker.engine.validation import ValidationResult

SETTING = "max_resources_per_stack (STOKER_MAX_RESOURCES_PER_STACK)"

# The root stack id of the job running in this context (set by ``Engine.run``; read by
# the handler runner to charge a call to its tree's share).
current_tree: ContextVar[str | None] = ContextVar("stoker_current_tree", default=None)


def _multiplied(result: ValidationResult) -> int | None:
    """The number of members a validated nested stack stands for, when its template
    holds fewer (a group's one member of ``count``); None when not known or not one."""
    count = result.resource_count
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        return count
    return None


def tree_size(result: ValidationResult) -> int:
    """Resources of the validated stack and of every nested stack it will make, as
    Heat counts them (a nested stack's resource counts, and so does each of its
    members). A count not known at validation counts the members validated."""
    own = len(result.template.resources)
    below = sum(tree_size(child) for child in result.nested.values())
    count = _multiplied(result)
    if count is None or own == 0:
        return own + below
    # The template holds ``own`` members standing for ``count`` (their average size).
    return math.ceil(count * (own + below) / own)


def _resources(number: int) -> str:
    return f"{number} resource" + ("" if number == 1 else "s")


def _place(result: ValidationResult, prefix: str) -> tuple[str, str]:
    """Where a tree over the limit grows, and how: down the biggest part, level by
    level, the first count that multiplies it; else the stack whose resources add up."""
    sizes = {name: 1 + (tree_size(result.nested[name]) if name in result.nested else 0) for name in result.template.resources}
    if sizes:
        name = max(sizes, key=lambda key: sizes[key])
        child = result.nested.get(name)
        if child is not None:
            count = _multiplied(child)
            if count is not None:
                member = tree_size(child) // count if count else 0
                where = f"{prefix}resources.{name}.properties.{child.count_property or 'count'}"
                return where, f"{count} members of {_resources(member)} each"
            return _place(child, f"{prefix}resources.{name}.")
    own, size = len(result.template.resources), tree_size(result)
    return f"{prefix}resources", _resources(own) + (" here" if own == size else f" here, {size} with their nested stacks")


def check_tree(result: ValidationResult, limit: int) -> None:
    """Refuse a validated stack whose tree would have more than ``limit`` resources
    (-1: no limit), naming the count (or stack) that makes it so and the fix."""
    if limit < 0:
        return
    size = tree_size(result)
    if size <= limit:
        return
    where, how = _place(result, "")
    error = TemplateError(
        f"The stack would have {size} resources with its nested stacks ({how}); "
        f"a stack and all its nested stacks may have at most {limit} together",
        path=where,
        hint=f"make the count smaller or split the stack, or raise {SETTING}, which counts the whole tree under one root stack",
    )
    result.template.place(error)
    raise error


def root_of(store: Store, stack: StackRecord) -> StackRecord:
    """The top-level stack of ``stack``'s tree (the stack itself when it is one)."""
    current = stack
    seen = {current.id}
    while current.owner_id is not None:
        owner = store.get_stack(current.owner_id)
        if owner is None or owner.id in seen:
            break
        seen.add(owner.id)
        current = owner
    return current


def check_child(store: Store, parent: StackRecord, resource_name: str, child_size: int, replaced: str | None, limit: int) -> None:
    """Refuse a nested stack about to be made (or updated) when the tree would then hold
    more than ``limit`` resources: those the store holds for the tree now, less those of
    the child ``replaced`` (an update's old nested stack, with its own nested stacks),
    plus ``child_size``, what the child's validated template would make."""
    if limit < 0:
        return
    root = root_of(store, parent)
    held = store.count_tree_resources(root.id)
    if replaced is not None:
        held -= store.count_tree_resources(replaced)
    total = held + child_size
    if total > limit:
        raise ValidationError(
            f"The nested stack would bring the stack tree of {root.name} to {total} resources "
            f"({held} in the rest of the tree, {child_size} in this nested stack with its own); "
            f"a stack and all its nested stacks may have at most {limit} together",
            path=f"resources.{resource_name}",
            hint=f"make the count smaller or split the stack, or raise {SETTING}, which counts the whole tree under one root stack",
        )


def over_limit_reason(size: int, limit: int, action: str) -> str:
    """Why recovery finishes a tree over the limit instead of resuming it."""
    return (
        f"Engine restarted during {action}: not resumed, the stack tree has {size} resources; "
        f"a stack and all its nested stacks may have at most {limit} together ({SETTING}); delete the stack"
    )


class TreeShares:
    """Each stack tree's share of the handler threads: at most ``limit`` plugin calls of
    one tree run at once (0 or less: no share, every call may run), so one tree with
    thousands of resources in flight cannot take every thread and keep other projects'
    stacks waiting. Calls beyond the share wait on the event loop, holding no thread.

    A share is held only while one call runs, never while a resource waits between
    polls or for its nested stack, so a tree's calls never wait on each other (no
    deadlock, however deep the tree)."""

    def __init__(self, limit: int):
        self.limit = limit
        # (loop, root stack id) -> (semaphore, callers holding or waiting for it); an
        # asyncio semaphore belongs to one loop, and the CLI runs one loop per job.
        self._shares: dict[tuple[asyncio.AbstractEventLoop, str], tuple[asyncio.Semaphore, int]] = {}

    @contextlib.asynccontextmanager
    async def held(self, tree: str | None) -> AsyncIterator[None]:
        if tree is None or self.limit <= 0:
            yield
            return
        key = (asyncio.get_running_loop(), tree)
        semaphore, users = self._shares.get(key) or (asyncio.Semaphore(self.limit), 0)
        self._shares[key] = (semaphore, users + 1)
        try:
            async with semaphore:
                yield
        finally:
            semaphore, users = self._shares[key]
            if users == 1:
                del self._shares[key]
            else:
                self._shares[key] = (semaphore, users - 1)
