"""Walk a graph concurrently: a node starts when every requirement has succeeded.

The concurrency limit (``limit``: nodes in flight at once) is enforced here and nowhere
else. Every node task is owned by one ``asyncio.TaskGroup``, so cancelling the walk
cancels the nodes in flight. A failed node is reported once; nodes that needed it (or,
with ``stop_on_failure``, every node not yet started) are reported as skipped.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from stoker.graph.dag import Graph

N = TypeVar("N", bound=Hashable)


@dataclass
class WalkOutcome(Generic[N]):
    completed: list[N] = field(default_factory=list)
    failed: dict[N, BaseException] = field(default_factory=dict)
    skipped: set[N] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.skipped


async def walk(
    graph: Graph[N],
    visit: Callable[[N], Awaitable[None]],
    *,
    limit: int = 1000,
    stop_on_failure: bool = True,
) -> WalkOutcome[N]:
    if limit < 1:
        raise ValueError("limit must be at least 1")
    graph.check_acyclic()
    outcome: WalkOutcome[N] = WalkOutcome()
    waiting = {node: len(graph.requires(node)) for node in graph}
    dependents = graph.required_by()
    ready: deque[N] = deque(node for node, count in waiting.items() if count == 0)
    finished: asyncio.Queue[tuple[N, BaseException | None]] = asyncio.Queue()
    in_flight = 0
    stopping = False

    async def run(node: N) -> None:
        try:
            await visit(node)
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # noqa: BLE001 - reported through the outcome
            finished.put_nowait((node, error))
            return
        finished.put_nowait((node, None))

    def skip_dependents(node: N) -> None:
        pending = [node]
        while pending:
            for dependent in dependents[pending.pop()]:
                if dependent not in outcome.skipped:
                    outcome.skipped.add(dependent)
                    pending.append(dependent)

    async with asyncio.TaskGroup() as group:
        while True:
            while ready and in_flight < limit and not stopping:
                node = ready.popleft()
                in_flight += 1
                group.create_task(run(node))
            if in_flight == 0:
                break
            node, error = await finished.get()
            in_flight -= 1
            if error is None:
                outcome.completed.append(node)
                for dependent in dependents[node]:
                    waiting[dependent] -= 1
                    if waiting[dependent] == 0 and dependent not in outcome.skipped:
                        ready.append(dependent)
            else:
                outcome.failed[node] = error
                skip_dependents(node)
                if stop_on_failure:
                    stopping = True
    if stopping:
        done = set(outcome.completed) | set(outcome.failed)
        outcome.skipped.update(node for node in graph if node not in done)
    return outcome
