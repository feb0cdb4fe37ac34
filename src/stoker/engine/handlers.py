"""The one table through which the engine calls plugin handlers, and the runner that
calls them off the event loop and polls ``check_<action>_complete``.

Heat found handlers with ``getattr(self, 'check_%s_complete' % action)``; a misspelt or
missing method then failed only at run time. Here every handler pair is named once, in
``HANDLERS``, and the conformance tests call each pair of each built-in plugin.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from stoker.engine.clock import Clock
from stoker.engine.states import Action
from stoker.sdk.resource import Resource


@dataclass(frozen=True)
class HandlerPair:
    handle: str
    check: str | None


# Deletion with deletion_policy Snapshot: back up, then delete (seed 001).
SNAPSHOT_DELETE = "SNAPSHOT_DELETE"
# Deleting one stored snapshot of a resource.
DELETE_SNAPSHOT = "DELETE_SNAPSHOT"

HANDLERS: Mapping[str, HandlerPair] = MappingProxyType(
    {
        SNAPSHOT_DELETE: HandlerPair("handle_snapshot_delete", "check_delete_complete"),
        DELETE_SNAPSHOT: HandlerPair("handle_delete_snapshot", "check_delete_snapshot_complete"),
        Action.CREATE: HandlerPair("handle_create", "check_create_complete"),
        Action.UPDATE: HandlerPair("handle_update", "check_update_complete"),
        Action.DELETE: HandlerPair("handle_delete", "check_delete_complete"),
        Action.SUSPEND: HandlerPair("handle_suspend", "check_suspend_complete"),
        Action.RESUME: HandlerPair("handle_resume", "check_resume_complete"),
        Action.SNAPSHOT: HandlerPair("handle_snapshot", "check_snapshot_complete"),
        Action.CHECK: HandlerPair("handle_check", "check_check_complete"),
        Action.ADOPT: HandlerPair("handle_adopt", None),
    }
)


def handler_pair(resource: Resource | type[Resource], action: str) -> tuple[Callable[..., Any] | None, Callable[[Any], bool] | None]:
    """The bound handler and check methods for ``action`` (None when not implemented)."""
    pair = HANDLERS[action]
    handle = getattr(resource, pair.handle, None)
    check = getattr(resource, pair.check, None) if pair.check else None
    return handle, check


@dataclass
class Outcome:
    token: Any
    done: bool
    extra: Any = None


class HandlerRunner:
    """Runs blocking plugin code in a bounded thread pool and polls for completion.

    ``threads`` bounds how many handler calls run at once (the only limit on plugin
    code); waiting between polls takes no thread. Polls back off from
    ``poll_initial_s`` growing by half each time up to ``poll_max_s`` (both in
    seconds): quick resources finish quickly, slow ones cost few polls.
    """

    def __init__(self, clock: Clock, threads: int = 8, poll_initial_s: float = 0.01, poll_max_s: float = 2.0):
        self.clock = clock
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="stoker-handler")
        self.poll_initial_s = poll_initial_s
        self.poll_max_s = poll_max_s

    def close(self) -> None:
        self.executor.shutdown(wait=True)

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        self.clock.work_started()
        try:
            return await loop.run_in_executor(self.executor, functools.partial(function, *args))
        finally:
            self.clock.work_finished()

    async def run(
        self,
        resource: Resource,
        action: str,
        args: tuple = (),
        *,
        before: Callable[[], None] | None = None,
        after: Callable[[], Any] | None = None,
        on_token: Callable[[Any], Awaitable[None]] | None = None,
    ) -> Any:
        """Run ``before``, the handler, the first check and ``after`` in one thread hop;
        then, if not done, record the token and poll. Returns what ``after`` returned."""
        handle, check = handler_pair(resource, action)

        def start() -> Outcome:
            if before is not None:
                before()
            token = handle(*args) if handle is not None else None
            done = check is None or bool(check(token))
            return Outcome(token, done, after() if done and after is not None else None)

        outcome: Outcome = await self.call(start)
        if outcome.done:
            return outcome.extra
        if on_token is not None:
            await on_token(outcome.token)
        assert check is not None
        return await self._poll(check, outcome.token, after)

    async def resume(self, resource: Resource, action: str, token: Any, *, after: Callable[[], Any] | None = None) -> Any:
        """Carry on polling a handler whose token was persisted before an engine restart."""
        _, check = handler_pair(resource, action)
        if check is None:
            return await self.call(after) if after is not None else None
        return await self._poll(check, token, after, first_delay=0.0)

    async def _poll(self, check: Callable[[Any], bool], token: Any, after: Callable[[], Any] | None, first_delay: float | None = None) -> Any:
        def poll() -> Outcome:
            done = bool(check(token))
            return Outcome(token, done, after() if done and after is not None else None)

        delay = self.poll_initial_s if first_delay is None else first_delay
        while True:
            if delay:
                await self.clock.sleep(delay)
            outcome = await self.call(poll)
            if outcome.done:
                return outcome.extra
            delay = min(max(delay, self.poll_initial_s) * 1.5, self.poll_max_s)
