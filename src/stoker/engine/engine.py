"""The engine's front door: run one stack action as a job.

A job names a stack and an action; the engine loads everything it needs from the store,
so any process with the same store can run it (one process by default; several workers
over PostgreSQL later). Nothing outside this package drives an action.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker import faults
from stoker.engine import actions, admission, collector, maintenance, trees
from stoker.engine import adopt as adopt_action
from stoker.engine import create as create_action
from stoker.engine import delete as delete_action
from stoker.engine import imports as imports_action
from stoker.engine import snapshot as snapshot_action
from stoker.engine import update as update_action
from stoker.engine.cancels import CancelWatch
from stoker.engine.clock import Clock
from stoker.engine.errors import ActionInProgressError, ActionStartedError, NothingToResumeError
from stoker.engine.events import Listener, Recorder
from stoker.engine.handlers import HandlerRunner
from stoker.engine.lifecycle import ActionContext, Stop
from stoker.engine.nested_jobs import NestedJobs
from stoker.engine.stack import StackRuntime, parameter_values
from stoker.engine.states import Action, Status
from stoker.environment.environment import Environment
from stoker.environment.registry import ResourceRegistry
from stoker.masking import HiddenValues
from stoker.store import StackRecord, Store, connection_loss
from stoker.store.connection_loss import database_text
from stoker.store.locks import Fence, LockLostError, current_fence
from stoker.store.records import TemplateRecord
from stoker.template.hot import Template

LOG = logging.getLogger(__name__)
# Stacks whose hidden values an engine keeps (Engine.hidden_values_of): the owners of the
# nested stacks it runs, a few per tree.
HIDDEN_VALUES_KEPT = 1024


@dataclass(frozen=True)
class Job:
    stack_id: str
    action: Action
    # For UPDATE: the stored new template and the user's parameters for it.
    template_id: int | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    # Finish the action the stack row says was interrupted by an engine restart.
    resume: bool = False
    # For ADOPT: the exported stack data whose physical resources are taken over.
    adopt_data: Mapping[str, Any] = field(default_factory=dict)
    # For SNAPSHOT and RESTORE: the snapshot.
    snapshot_id: str | None = None
    # The requester already moved the stack row to this action IN_PROGRESS (a nested
    # stack's parent does, before it waits on the child): run it as a resume, quietly.
    queued: bool = False
    # For UPDATE: stack settings the request changes (disable_rollback, timeout_mins,
    # tags), written with the stack's UPDATE IN_PROGRESS once the job holds the lock.
    stack_fields: Mapping[str, Any] = field(default_factory=dict)
    # With workers: the id of the action the API accepted (tables.accepted_actions),
    # whose row the enqueue committed with the job. The job starts the action only while
    # that row exists, and its write that records the stack IN_PROGRESS deletes it, so
    # however often the job is delivered (a dead worker's job is handed back to the
    # queue), the action starts once.
    accepted: str | None = None


@dataclass
class EngineSettings:
    handler_threads: int = 8
    # Resources in flight at once per stack action (the walk's only limit).
    max_in_flight: int = 1000
    # Handler calls of one stack tree running at once (engine/trees.TreeShares; -1: any).
    max_tree_handler_calls: int = -1
    poll_initial_s: float = 0.01
    poll_max_s: float = 2.0
    # Seconds a stack lock stays held without a heartbeat.
    lock_lease_s: float = 30.0
    # Seconds a job waits for the lock of a stack whose action has ended (its job is
    # releasing the lock), and a delete for the action it stops.
    lock_finish_wait_s: float = 10.0
    delete_stop_wait_s: float = 60.0
    # Seconds between looks for a user's cancel request.
    cancel_poll_s: float = 0.5
    # Events kept per stack after each action (-1: all).
    max_events_per_stack: int = -1
    # Nested stacks: how deep they may go, and how many resources each may have (-1: any).
    max_nested_depth: int = 5
    max_resources_per_stack: int = -1
    # Where agents reach the API: the base of signal URLs (Settings.public_url).
    public_url: str = "http://127.0.0.1:8004"


class Engine(NestedJobs):
    def __init__(
        self,
        store: Store,
        registry: ResourceRegistry,
        settings: EngineSettings | None = None,
        clock: Clock | None = None,
    ):
        self.store = store
        self.registry = registry
        self.settings = settings or EngineSettings()
        self.clock = clock or Clock()
        self.clock.watch(lambda: store.writes.pending > 0)
        self.listeners: list[Listener] = []
        self._runner: HandlerRunner | None = None
        self.engine_id = str(uuid.uuid4())
        # raw template id -> (row, parsed template); see remember_template
        self._templates: dict[int, tuple[TemplateRecord, Template]] = {}
        # (stack id, raw template id, digest of its parameters) -> its hidden values; see
        # hidden_values_of
        self._hidden: dict[tuple[str, int, str], HiddenValues] = {}
        # Nested stacks' jobs run as tasks on the loop of the job that asked for them.
        # child stack id -> (owner stack id, task); ids enter ``_submitted`` (under
        # ``_submit_lock``, from handler threads) before their task exists, so a child is
        # never started twice.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._children: dict[str, tuple[str, asyncio.Task[Any]]] = {}
        self._submitted: set[str] = set()
        self._submit_lock = threading.Lock()
        # With workers (workers.ChildJobs): nested stacks' jobs go on the queue, for any
        # worker to take, instead of onto this loop.
        self.child_jobs: Any = None
        # stack id -> future a parent completes to stop that stack's action
        self._stop_requests: dict[str, asyncio.Future[tuple[str, bool | None]]] = {}
        # The cancel requests of this engine's jobs, read for all of them at once.
        self.cancels = CancelWatch(store.cancel_requests, self.settings.cancel_poll_s)
        # Called with a top-level stack whose delete completed (its resources are gone):
        # what stoker held for it elsewhere goes too (a trust, in keystone mode).
        self.stack_deleted: list[Callable[[StackRecord], Awaitable[None]]] = []

    @property
    def runner(self) -> HandlerRunner:
        if self._runner is None:
            s = self.settings
            self._runner = HandlerRunner(self.clock, s.handler_threads, s.poll_initial_s, s.poll_max_s, s.max_tree_handler_calls)
            self._runner.running_here = lambda stack_id: stack_id in self._children
        return self._runner

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def remember_template(self, stored: TemplateRecord, template: Template) -> None:
        """Keep a template the service has just parsed and stored, so the job that
        follows in this process does not parse it again (stored templates never change;
        another worker simply parses the row)."""
        self._templates[stored.id] = (stored, template)
        while len(self._templates) > 16:
            self._templates.pop(next(iter(self._templates)))

    def _template(self, template_id: int) -> tuple[TemplateRecord, Template]:
        cached = self._templates.get(template_id)
        if cached is None:
            stored = self.store.get_template(template_id)
            cached = (stored, Template.from_data(stored.template, stored.files))
            self.remember_template(stored, cached[1])
        return cached

    def hidden_values_of(self, stack: StackRecord) -> HiddenValues:
        """``stack``'s hidden values (``StackRuntime.hidden_values``, its owners' included),
        kept per stack, template and parameters, from which alone they follow: every nested
        stack of a tree asks for its owners' when its action starts, and loading a group's
        stack again for each of its 1000 members made a big tree's create quadratic."""
        digest = hashlib.sha256(json.dumps(stack.parameters, sort_keys=True, default=str).encode()).hexdigest()
        key = (stack.id, stack.raw_template_id, digest)
        found = self._hidden.get(key)
        if found is None:
            found = self.load_runtime(stack).hidden_values()
            self._hidden[key] = found
            while len(self._hidden) > HIDDEN_VALUES_KEPT:
                self._hidden.pop(next(iter(self._hidden)), None)
        return found

    def conditioned_template(self, stack: StackRecord, template_id: int | None = None, user_params: Mapping[str, Any] | None = None) -> tuple[Template, Environment, dict[str, Any]]:
        """The stack's template with only the resources and outputs whose conditions hold
        (every `if` decided), its environment and parameter values: what a read of the
        template alone needs, without the stack's resources (decrypting their rows is
        most of what a runtime of a thousand resources costs to load)."""
        stored, template = self._template(template_id or stack.raw_template_id)
        environment = Environment.from_dict(stored.environment)
        params = parameter_values(template, environment, stack.parameters if user_params is None else user_params, stack.name, stack.id, stack.project_id)
        return template.with_conditions(params), environment, params

    def load_runtime(self, stack: StackRecord, template_id: int | None = None, user_params: Mapping[str, Any] | None = None) -> StackRuntime:
        template, environment, params = self.conditioned_template(stack, template_id, user_params)
        runtime = StackRuntime(
            stack,
            template,
            environment,
            params,
            self.registry,
            self.store,
            self.clock,
            self.store.list_resources(stack.id),
        )
        from stoker.engine.nested import ChildStacks

        runtime.nested = ChildStacks(self, runtime)
        runtime.public_url = self.settings.public_url
        return runtime

    async def _watch_stop(self, stack_id: str) -> tuple[str, bool | None]:
        request: asyncio.Future[tuple[str, bool | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self._stop_requests[stack_id] = request
        try:
            return await request
        finally:
            if self._stop_requests.get(stack_id) is request:
                del self._stop_requests[stack_id]

    async def run(self, job: Job) -> StackRecord:
        """Run one job while holding the stack's lock (renewed by a heartbeat).

        Every write of the job carries its fence: once the lock is lost (a takeover, a
        heartbeat that found the lock gone), the store refuses the job's writes and the
        job stops without writing anything more."""
        loop = asyncio.get_running_loop()
        lost: asyncio.Future[tuple[str, bool | None]] = loop.create_future()

        def on_lost() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nothing to stop
                loop.call_soon_threadsafe(_settle, lost, ("Lock lost", False))

        fence = Fence(job.stack_id, str(uuid.uuid4()), on_lost, accepted=job.accepted)
        try:
            stack = await self._take_lock(job, fence)
        except (NothingToResumeError, ActionStartedError):
            # Nothing to do: above all, what the request stored stays (the action that
            # started already uses it).
            current = self.store.get_stack(job.stack_id)
            assert current is not None
            return current
        except Exception:
            # What the request stored for a job that never ran goes again.
            if job.template_id is not None:
                self.store.prune_template(job.template_id)
            if job.action == Action.SNAPSHOT and job.snapshot_id is not None and not job.resume:
                self.store.delete_snapshot(job.snapshot_id)
            raise
        faults.point("lock-taken")
        for key, value in job.stack_fields.items():
            setattr(stack, key, value)
        lease = self.settings.lock_lease_s
        previous_fence = current_fence.set(fence)
        # Every handler call of the job is charged to its tree's share (trees.TreeShares).
        previous_tree = trees.current_tree.set(trees.root_of(self.store, stack).id)
        heartbeat = asyncio.create_task(self._heartbeat(fence, lease, lost))
        if self._loop is None or self._loop.is_closed() or not self._children:
            self._loop = asyncio.get_running_loop()
        try:
            with collector.relaxed():
                await self._run_with_timeout(job, stack, lost)
                await self._wait_children(stack.id)
        except LockLostError:
            _settle(lost, ("Lock lost", False))
        except Exception as error:
            # The store must show the end, written while the lock is still held (after
            # the release another job may already own the stack).
            if not lost.done():
                await self._record_engine_error(stack.id, error)
            raise
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await heartbeat
            self.store.release_lock(fence)
            current_fence.reset(previous_fence)
            trees.current_tree.reset(previous_tree)
        if lost.done():
            LOG.warning("stack %s: the %s job lost the stack's lock and stopped; its later writes were refused", stack.id, job.action)
        elif self.settings.max_events_per_stack >= 0:
            self.store.events.prune_events(stack.id, self.settings.max_events_per_stack)
        result = self.store.get_stack(stack.id)
        assert result is not None
        return result

    async def _take_lock(self, job: Job, fence: Fence) -> StackRecord:
        """Take the stack's lock for the job, deciding under it whether the job may
        start (engine/admission). A lock still held by a job whose action has ended is
        waited for; a delete stops the action in progress and then takes the lock."""
        admitted: list[StackRecord] = []

        def admit(stack: StackRecord | None, accepted_pending: bool = True) -> None:
            admission.admit(job, stack, accepted_pending)
            assert stack is not None
            admitted[:] = [stack]

        lease = self.settings.lock_lease_s
        deleting = job.action == Action.DELETE and not job.resume
        started = time.monotonic()
        asked_to_stop: set[str] = set()
        while True:
            holder = self.store.acquire_lock(job.stack_id, fence.token, self.engine_id, lease, admit, accepted=job.accepted)
            if holder is None:
                return admitted[0]
            stack = admitted[0]
            waited = time.monotonic() - started
            if deleting:
                # Every holder is asked, once: a job that took the lock while the one
                # asked first was stopping is stopped too.
                if holder.token not in asked_to_stop:
                    self._ask_to_stop(stack.id, "delete")
                    asked_to_stop.add(holder.token)
                if waited > self.settings.delete_stop_wait_s:
                    raise ActionInProgressError(stack.name, f"{stack.state}: the action in progress did not stop within {self.settings.delete_stop_wait_s:g} s for the delete (pid {holder.pid} on {holder.host} holds its lock)")
            elif stack.status == Status.IN_PROGRESS or waited > self.settings.lock_finish_wait_s:
                raise ActionInProgressError(stack.name, f"{stack.state}, engine {holder.engine_id} (pid {holder.pid} on {holder.host}) holds its lock")
            await asyncio.sleep(0.05)

    def _ask_to_stop(self, stack_id: str, mode: str) -> None:
        """Ask the job holding a stack's lock to stop: through the store (any process
        polls it), and at once when that job runs in this engine."""
        self.store.request_cancel(stack_id, mode)
        request = self._stop_requests.get(stack_id)
        if request is not None:
            _settle(request, (_DELETE_STOP_REASON, False))

    async def _run_with_timeout(self, job: Job, stack: StackRecord, lost: asyncio.Future[tuple[str, bool | None]]) -> None:
        """Run the job under supervision: the stack's timeout_mins (create and update) and
        a user's cancel request both stop it. In-flight resources then become FAILED
        "... aborted", the stack FAILED with the reason, and the action is rolled back
        when rollback is enabled (or, for a cancel, when the user asked for it)."""
        stop = Stop()
        action = Action(stack.action) if job.resume else job.action
        task = asyncio.create_task(self._dispatch(job, stack, stop))
        guards = [
            asyncio.create_task(self._watch_cancel(current_fence.get())),
            asyncio.create_task(self._watch_stop(stack.id)),
        ]
        if stack.timeout_mins and action in (Action.CREATE, Action.UPDATE):
            guards.append(asyncio.create_task(self._watch_timeout(stack.timeout_mins)))
        try:
            waiting: set[asyncio.Future[Any]] = {task, lost, *guards}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for guard in guards:
                guard.cancel()
        if lost.done():
            # Nothing more may be written: stop everything, record nothing.
            stop.reason = "the job lost the stack's lock"
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            await self.stop_children(stack.id, "the parent stack's job lost its lock")
            return
        if task in done:
            task.result()
            return
        failed = next((guard for guard in guards if guard in done and not guard.cancelled() and guard.exception() is not None), None)
        if failed is not None:
            # A guard's own failure ends the job, and its action with it: never left running.
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise failed.exception()  # type: ignore[misc]
        reason, roll_back = next(guard.result() for guard in guards if guard in done)
        stop.reason = reason
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        # Children first: nothing may act on a child while its own job still runs.
        await self.stop_children(stack.id, f"the parent stack's action stopped: {reason}")
        current = self.store.get_stack(stack.id)
        assert current is not None
        action = Action(current.action)
        context = self._context(self.load_runtime(current), stop)
        await context.recorder.stack_state(action, Status.FAILED, reason)
        if roll_back is None:
            roll_back = not current.disable_rollback
        if roll_back and action == Action.CREATE:
            await create_action.rollback_create(context, self.settings.max_in_flight)
        elif roll_back and action == Action.UPDATE:
            await self._rollback_update(current, stop)

    async def _watch_timeout(self, timeout_mins: int) -> tuple[str, bool | None]:
        await self.clock.sleep(timeout_mins * 60)
        return f"Timed out: the action took longer than timeout_mins ({timeout_mins} minutes)", None

    async def _watch_cancel(self, fence: Fence | None) -> tuple[str, bool | None]:
        # Polled, not pushed: the request may come from another process (stoker stack
        # cancel, or a delete of the stack); one read polls every job of the loop.
        assert fence is not None
        mode = await self.cancels.requested(fence)
        if mode == "delete":
            return _DELETE_STOP_REASON, False
        if mode == "parent":  # a parent on another worker stops (stop_children)
            return "the parent stack's action stopped", False
        return "Cancelled by the user" + (" (rolling back)" if mode == "rollback" else ""), mode == "rollback"

    async def _restore(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        """Restore: an update to the snapshot's template and parameters (action RESTORE)."""
        limit = self.settings.max_in_flight
        if job.resume:
            old_template = self.load_runtime(stack, stack.prev_raw_template_id or stack.raw_template_id).template
            context = self._context(self.load_runtime(stack), stop)
            await self._resuming(context, Action.RESTORE)
            await update_action.update(context, old_template, limit, action=Action.RESTORE)
            return
        snapshot = next(s for s in self.store.list_snapshots(stack.id) if s.id == job.snapshot_id)
        data = snapshot.data or {}
        template_id = self.store.store_template(data["template"], data.get("files") or {}, data.get("environment") or {})
        old_template = self.load_runtime(stack).template
        params = dict(data.get("parameters") or {})
        context = self._context(self.load_runtime(stack, template_id, params), stop)
        snapshot_action.restored_definitions(context.runtime, data)
        await actions.stack_started(
            context,
            Action.RESTORE,
            raw_template_id=template_id,
            prev_raw_template_id=stack.raw_template_id,
            parameters=params,
            prev_parameters=dict(stack.parameters),
        )
        await update_action.update(context, old_template, limit, action=Action.RESTORE)

    @contextlib.asynccontextmanager
    async def holding(self, stack_id: str, accepted: str | None = None, action: str = "SIGNAL") -> AsyncIterator[StackRecord]:
        """Hold an idle top-level stack's lock for a short change that is no action of
        its own (deleting a snapshot, abandoning, marking a resource unhealthy, a
        scaling signal); the stack, as it is under the lock, is yielded and the changes
        are fenced. ``accepted``: the accepted action (with workers, a signal's) that
        the change runs; when its row is gone it ran already (ActionStartedError)."""
        fence = Fence(stack_id, str(uuid.uuid4()))
        admitted: list[StackRecord] = []

        def admit(stack: StackRecord | None, accepted_pending: bool = True) -> None:
            if not accepted_pending:
                raise ActionStartedError(stack.name if stack is not None else stack_id, action)
            admission.admit_idle(stack, stack_id)
            assert stack is not None
            admitted[:] = [stack]

        holder = self.store.acquire_lock(stack_id, fence.token, self.engine_id, self.settings.lock_lease_s, admit, accepted=accepted)
        if holder is not None:
            stack = admitted[0]
            raise ActionInProgressError(stack.name, f"{stack.state}, engine {holder.engine_id} (pid {holder.pid} on {holder.host}) holds its lock")
        previous_fence = current_fence.set(fence)
        try:
            yield admitted[0]
        finally:
            self.store.release_lock(fence)
            current_fence.reset(previous_fence)

    async def delete_snapshot(self, stack: StackRecord, snapshot_id: str) -> None:
        """Delete one snapshot (plugins drop what they kept for it) under the stack's lock."""
        async with self.holding(stack.id) as current:
            record = next(s for s in self.store.list_snapshots(current.id) if s.id == snapshot_id)
            await snapshot_action.delete_snapshot(self._context(self.load_runtime(current), Stop()), record)

    async def _rollback_update(self, stack: StackRecord, stop: Stop) -> None:
        failed = self.load_runtime(stack).template
        previous = self.load_runtime(stack, stack.prev_raw_template_id, stack.prev_parameters or {})
        context = self._context(previous, stop)
        await actions.stack_started(
            context, Action.ROLLBACK, raw_template_id=stack.prev_raw_template_id, parameters=dict(stack.prev_parameters or {})
        )
        await update_action.rollback(context, failed, self.settings.max_in_flight, resume=True)

    async def _heartbeat(self, fence: Fence, lease_s: float, lost: asyncio.Future[tuple[str, bool | None]]) -> None:
        # Renew at a third of the lease so two missed beats still leave it held. A lock
        # that is gone (taken over, released by a delete) stops the job; so does a lease
        # that could not be renewed before it ran out (the database unreachable).
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(lease_s / 3)
            try:
                held = await self.store.renew_lock_async(fence, lease_s)
            except Exception as error:  # noqa: BLE001 - retried at the next beat
                told = database_text(error) if connection_loss.lost(error) else None
                LOG.warning("stack %s: could not renew the lock's lease (%s); retrying", fence.stack_id, told or "see below", exc_info=told is None)
                if time.monotonic() - renewed >= lease_s:
                    _settle(lost, ("Lock lost", False))
                    return
                continue
            if not held:
                _settle(lost, ("Lock lost", False))
                return
            renewed = time.monotonic()

    async def _record_engine_error(self, stack_id: str, error: Exception) -> None:
        """An unexpected error ended the job: the stack leaves IN_PROGRESS, FAILED with
        the error (fenced like every write of the job)."""
        if connection_loss.lost(error):  # the database stayed out of reach: one line
            LOG.error("stack %s: the job failed: the database could not answer (%s)", stack_id, database_text(error) or error)
        else:
            LOG.error("stack %s: the job failed", stack_id, exc_info=error)
        stack = self.store.get_stack(stack_id)
        if stack is None or stack.status != Status.IN_PROGRESS:
            return
        reason = f"Engine error during {stack.action}: {type(error).__name__}: {database_text(error) or error}"
        with contextlib.suppress(Exception):  # the original error is what the caller must see
            await Recorder(self.store, stack).stack_state(Action(stack.action), Status.FAILED, reason)

    async def _dispatch(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        """Run ``job``'s action through ``ACTIONS``; a resumed job (recovery) runs the
        action the stack row says was interrupted, with the template it names."""
        action = Action(stack.action) if job.resume and not job.queued else job.action
        run = ACTIONS.get(action)
        if run is None:
            raise ValueError(f"Action {action} is not supported yet")
        await run(self, job, stack, stop)

    async def _resumable_context(self, job: Job, stack: StackRecord, stop: Stop) -> ActionContext:
        """The action's context on the stack's current template; an action an engine
        restart interrupted says so first, in one event."""
        context = self._context(self.load_runtime(stack), stop)
        if job.resume and not job.queued:
            await self._resuming(context, Action(stack.action))
        return context

    @staticmethod
    async def _resuming(context: ActionContext, action: Action) -> None:
        await context.recorder.stack_event(action, Status.IN_PROGRESS, f"Engine restarted during {action}: resuming")

    async def _run_create(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        context = await self._resumable_context(job, stack, stop)
        await create_action.create(context, self.settings.max_in_flight, resume=job.resume)

    async def _run_rollback(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        """Only ever resumed: an interrupted rollback of an update carries on returning to
        the previous template; one of a create deletes what the create made."""
        limit = self.settings.max_in_flight
        if stack.prev_raw_template_id is not None and any(
            record.replaces is not None or record.action == Action.UPDATE for record in self.store.list_resources(stack.id)
        ):
            failed = self.load_runtime(stack, stack.prev_raw_template_id).template
            context = self._context(self.load_runtime(stack), stop)
            await self._resuming(context, Action.ROLLBACK)
            await update_action.rollback(context, failed, limit, resume=True)
            return
        context = await self._resumable_context(job, stack, stop)
        await create_action.rollback_create(context, limit, resume=True)

    async def _run_delete(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        if admission.half_deleted(stack):
            # The delete's process died after DELETE_COMPLETE: finish what it left.
            context = self._context(self.load_runtime(stack), stop)
            await context.recorder.stack_event(Action.DELETE, Status.COMPLETE, "Engine restarted after DELETE completed: finishing the delete")
            await self._finish_delete(context)
            return
        context = await self._resumable_context(job, stack, stop)
        for record in self.store.list_snapshots(stack.id):
            await snapshot_action.delete_snapshot(context, record)
        if await delete_action.delete(context, self.settings.max_in_flight, resume=job.resume):
            await self._finish_delete(context)

    async def _run_update(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        if job.resume:
            # The stack row holds the new template; the previous one is what it replaces.
            old_template = self.load_runtime(stack, stack.prev_raw_template_id or stack.raw_template_id).template
            context = await self._resumable_context(job, stack, stop)
        else:
            old_template = self.load_runtime(stack).template
            context = self._context(self.load_runtime(stack, job.template_id, job.parameters), stop)
            await actions.stack_started(
                context,
                Action.UPDATE,
                raw_template_id=job.template_id,
                prev_raw_template_id=stack.raw_template_id,
                parameters=dict(job.parameters),
                prev_parameters=dict(stack.parameters),
                **job.stack_fields,
            )
        if not await update_action.update(context, old_template, self.settings.max_in_flight) and not stack.disable_rollback:
            current = self.store.get_stack(stack.id)
            assert current is not None
            await self._rollback_update(current, stop)

    async def _run_adopt(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        context = self._context(self.load_runtime(stack), stop)
        if job.resume:
            # The adopt data is not kept; finish cleanly instead of guessing.
            await context.recorder.stack_state(Action.ADOPT, Status.FAILED, "Engine restarted during ADOPT: adopt again or delete the stack")
            return
        if "import" in job.adopt_data:  # stoker stack import (engine/imports.py)
            await imports_action.import_stack(context, job.adopt_data["import"], self.settings.max_in_flight)
            return
        await adopt_action.adopt(context, job.adopt_data, self.settings.max_in_flight)

    async def _run_snapshot(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        limit = self.settings.max_in_flight
        context = await self._resumable_context(job, stack, stop)
        if job.resume and not job.queued:
            record = next((snapshot for snapshot in self.store.list_snapshots(stack.id) if snapshot.status == Status.IN_PROGRESS), None)
            if record is None:
                await maintenance.run(context, Action.SNAPSHOT, limit, resume=True)
                return
        else:
            record = next(snapshot for snapshot in self.store.list_snapshots(stack.id) if snapshot.id == job.snapshot_id)
        await snapshot_action.snapshot(context, record, limit)

    async def _run_maintenance(self, job: Job, stack: StackRecord, stop: Stop) -> None:
        """SUSPEND, RESUME and CHECK: one walk each, on every resource."""
        action = Action(stack.action) if job.resume and not job.queued else job.action
        context = await self._resumable_context(job, stack, stop)
        await maintenance.run(context, action, self.settings.max_in_flight, resume=job.resume)

    async def _finish_delete(self, context: ActionContext) -> None:
        """After DELETE_COMPLETE: the stack's rows go and it is marked deleted (its name
        free again), then what stoker held for it elsewhere (``stack_deleted``). Run
        again by recovery when the delete's process died in between."""
        stack = context.runtime.stack
        await delete_action.finish(context)
        if stack.owner_id is None:
            for hook in self.stack_deleted:
                await hook(stack)

    def store_now(self) -> Any:
        from stoker.store.repository import utcnow

        return utcnow()

    def _context(self, runtime: StackRuntime, stop: Stop) -> ActionContext:
        recorder = Recorder(self.store, runtime.stack, list(self.listeners), runtime.hidden_values())
        runtime.listeners = recorder.listeners
        return ActionContext(runtime, recorder, self.runner, self.store, stop)


_DELETE_STOP_REASON = "Stopped: the stack is being deleted"


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


# What runs each stack action (``Engine._dispatch``): one entry per action, beside the
# resource handlers' table (engine/handlers.py HANDLERS).
ACTIONS: dict[Action, Callable[[Engine, Job, StackRecord, Stop], Awaitable[None]]] = {
    Action.CREATE: Engine._run_create,
    Action.ROLLBACK: Engine._run_rollback,
    Action.DELETE: Engine._run_delete,
    Action.UPDATE: Engine._run_update,
    Action.ADOPT: Engine._run_adopt,
    Action.SNAPSHOT: Engine._run_snapshot,
    Action.RESTORE: Engine._restore,
    Action.SUSPEND: Engine._run_maintenance,
    Action.RESUME: Engine._run_maintenance,
    Action.CHECK: Engine._run_maintenance,
}
