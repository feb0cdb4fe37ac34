"""Drives OpenStack Heat's engine in-process on one generated stack and prints JSON.

Run by bench/.heat-venv's python (see heat_env.py), never by stoker's: it imports
heat and the bench's shapes module only. One process per (shape, N, mode), so the peak
RSS it reports is that run's own.

    bench/.heat-venv/bin/python bench/heat_runner.py chain 100
    bench/.heat-venv/bin/python bench/heat_runner.py fan 10 --mode production

The set-up is the one of Heat's unit tests (heat/tests/common.py HeatTestCase.setUp
and heat/tests/utils.py setup_dummy_db / dummy_context): oslo.service's threading
backend, the fake:// messaging transport (in memory, no broker), Keystone's client
replaced by Heat's own FakeKeystoneClient, the resource policy enforcer switched off,
and the schema made with ``models.BASE.metadata.create_all`` on an SQLite database.
The phases go through Heat's EngineService methods (validate_template, create_stack,
update_stack, delete_stack) on the legacy (non-convergence) path, which is the one
that runs a whole stack action inside one engine. Two things differ from a deployed
heat-engine and are stated here because they shape the numbers:

- stack actions run to completion in the calling thread (InlineThreadGroupManager)
  instead of a worker thread, so a call returns when its action has finished;
- nested stacks (OS::Heat::ResourceGroup) reach the same EngineService through a
  direct-call EngineClient instead of RPC (InProcessEngineClient).

Modes: "fast" sets ``heat.engine.scheduler.ENABLE_SLEEP = False`` as HeatTestCase
does, so the scheduler never sleeps between steps and the time is Heat's CPU and
database cost; "production" keeps Heat's real sleeps (TaskRunner sleeps 1 s between
the steps of a stack action).

Output: {"engine": "heat", "shape", "count", "mode", "baseline_rss_mib",
"phases": {phase: {"seconds", "peak_rss_mib"}}, "error": null or "phase: reason"}.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import shapes  # noqa: E402

PHASES = ("validate", "create", "update", "delete")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class PhaseError(Exception):
    """A phase ended in a state other than the one it must reach."""


def configure_heat(database_url: str, production: bool):
    """Sets Heat up as HeatTestCase.setUp does and returns an EngineService."""
    from oslo_service import backend

    # heat/tests/common.py selects this backend before anything imports oslo.service.
    backend.init_backend(backend.BackendType.THREADING)

    from heat.common import messaging, policy
    from heat.engine import scheduler, service
    from heat.engine.clients.os import keystone
    from heat.engine.clients.os.keystone import fake_keystoneclient
    from heat.engine.resources import stack_resource
    from heat.rpc import client as rpc_client
    from heat.tests import utils
    from oslo_config import cfg
    from oslo_context import context as oslo_context

    # Heat's own resource-type deprecation notices go to this logger; the tests set
    # it to ERROR (TEST_DEFAULT_LOGLEVELS). Everything else stays at Python's default
    # (WARNING), so Heat's per-resource INFO lines are not formatted.
    logging.getLogger("heat.engine.environment").setLevel(logging.ERROR)

    cfg.CONF([], project="heat", default_config_files=[])
    cfg.CONF.set_override("error_wait_time", None)
    # The benchmark measures the engine, not the API's quotas: Heat refuses more than
    # 1000 resources per stack tree and templates over 512 KiB by default.
    cfg.CONF.set_override("max_resources_per_stack", -1)
    cfg.CONF.set_override("max_template_size", 1 << 30)
    cfg.CONF.set_override("convergence_engine", False)
    cfg.CONF.set_override("connection", database_url, group="database")
    scheduler.ENABLE_SLEEP = production

    messaging.setup("fake://", optional=True)
    mock.patch.object(
        keystone.KeystoneClientPlugin, "_create", return_value=fake_keystoneclient.FakeKeystoneClient()
    ).start()
    mock.patch.object(policy.ResourceEnforcer, "enforce").start()
    utils.setup_dummy_db()

    class InlineThreadGroupManager(service.ThreadGroupManager):
        """Runs a stack task to completion in the caller's thread, then its callbacks
        (lock release, state persistence) exactly as a finished thread would."""

        def start(self, stack_id, func, *args, **kwargs):
            caller_context = oslo_context.get_current()
            thread = service.ThreadWithCallback(
                self._start_with_trace, (caller_context, None, func, *args), kwargs
            )
            thread.run()
            if caller_context is not None:
                caller_context.update_store()
            return thread

    class InProcessEngineClient(rpc_client.EngineClient):
        """EngineClient whose calls go straight to one EngineService."""

        def __init__(self, engine):
            self._engine = engine

        def call(self, ctxt, msg, version=None, timeout=None):
            method, kwargs = msg
            return getattr(self._engine, method)(ctxt, **kwargs)

        cast = call

    engine = service.EngineService("bench-host", "engine")
    engine.engine_id = "bench-engine"
    engine.thread_group_mgr = InlineThreadGroupManager()
    # As EngineService.start() does; making the client also registers oslo.messaging's
    # rpc_response_timeout, which update_stack and delete_stack read.
    engine._client = messaging.get_rpc_client(version=engine.RPC_API_VERSION)
    client = InProcessEngineClient(engine)
    mock.patch.object(stack_resource.StackResource, "rpc_client", return_value=client).start()
    return engine


def check_stacks(stack_id: str, expected: str, resources: int | None = None) -> None:
    """The stack and every nested stack must be in state ``expected`` and, when
    ``resources`` is given, hold that many resources, all COMPLETE."""
    from heat.objects import resource as resource_object
    from heat.objects import stack as stack_object
    from heat.tests import utils

    context = utils.dummy_context()  # a fresh one: a context caches resources
    stack = stack_object.Stack.get_by_id(context, stack_id, show_deleted=True)
    stacks = [stack]
    if expected != "DELETE_COMPLETE":  # deleted nested stacks are no longer listed
        stacks += stack_object.Stack.get_all_by_root_owner_id(context, stack_id)
    for each in stacks:
        state = f"{each.action}_{each.status}"
        if state != expected:
            raise PhaseError(f"stack {each.name} is {state}: {each.status_reason}")
    if resources is None:
        return
    found = [r for each in stacks for r in resource_object.Resource.get_all_by_stack(context, each.id).values()]
    incomplete = [f"{r.name} {r.action}_{r.status}" for r in found if r.status != "COMPLETE"]
    if len(found) != resources or incomplete:
        raise PhaseError(f"{len(found)} resources, {resources} expected; not COMPLETE: {incomplete[:5]}")


def run(shape: str, count: int, production: bool, database_url: str) -> dict:
    engine = configure_heat(database_url, production)

    from heat.common import template_format
    from heat.tests import utils

    context = utils.dummy_context()
    resources = shapes.resource_count(shape, count)
    first = shapes.template(shape, count, 0)
    second = shapes.template(shape, count, 1)
    results: dict = {"baseline_rss_mib": peak_rss_mib(), "phases": {}, "error": None}
    identity: dict = {}

    def validate():
        # Parsing the YAML is the API's part in Heat and is timed here because
        # stoker's validate phase parses too.
        answer = engine.validate_template(context, template_format.parse(first), {})
        if "Error" in answer:
            raise PhaseError(answer["Error"])

    def create():
        identity.update(engine.create_stack(context, "bench", template_format.parse(first), {}, {}, {}))

    def update():
        engine.update_stack(context, identity, template_format.parse(second), {}, {}, {})

    def delete():
        engine.delete_stack(context, identity)

    checks = {
        "validate": lambda: None,
        "create": lambda: check_stacks(identity["stack_id"], "CREATE_COMPLETE", resources),
        "update": lambda: check_stacks(identity["stack_id"], "UPDATE_COMPLETE", resources),
        "delete": lambda: check_stacks(identity["stack_id"], "DELETE_COMPLETE"),
    }
    for name, action in zip(PHASES, (validate, create, update, delete), strict=True):
        try:
            start = time.perf_counter()
            action()
            seconds = time.perf_counter() - start
            results["phases"][name] = {"seconds": seconds, "peak_rss_mib": peak_rss_mib()}
            checks[name]()  # not timed
        except Exception as error:
            results["phases"].pop(name, None)
            results["error"] = f"{name}: {type(error).__name__}: {error}"
            break
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shape", choices=shapes.SHAPES)
    parser.add_argument("count", type=int)
    parser.add_argument("--mode", choices=["fast", "production"], default="fast")
    parser.add_argument(
        "--database",
        choices=["file", "memory"],
        default="file",
        help="an SQLite file in a temporary directory (as stoker's embedded store), or "
        "sqlite:// in memory (as Heat's unit tests)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{Path(directory) / 'heat.sqlite'}" if args.database == "file" else "sqlite://"
        results = run(args.shape, args.count, args.mode == "production", url)
    results = {"engine": "heat", "shape": args.shape, "count": args.count, "mode": args.mode, **results}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
