"""Fault injection: the engine process is SIGKILLed at many points of create, update
and delete; after a restart no stack or resource is IN_PROGRESS, every physical
resource that exists is recorded in the stack, and a retry of the action completes.

The crash points are the store's commits (the process dies right after the N-th one,
for N = 1, 2, ... until the action finishes first) and a handler killed between making
a physical resource and recording its id.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stoker.sdk.resource import physical_resource_name
from stoker.service import Service, Source
from stoker.settings import Settings

PLUGINS = str(Path(__file__).resolve().parents[1] / "support" / "plugins")

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  root:
    type: Test::Recorded
    properties: {value: {get_param: word}}
  left:
    type: Test::Recorded
    properties: {value: {get_attr: [root, value]}}
  right:
    type: Test::Recorded
    properties: {value: {get_attr: [root, value]}, delay_s: 0.2}
  sink:
    type: Test::Recorded
    depends_on: [left, right]
    properties: {value: {get_param: word}}
"""

# The same shape through nested stacks: a group of two (a nested stack) and a template
# resource (another), so every crash point of the children is covered too.
NESTED_TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  root:
    type: Test::Recorded
    properties: {value: {get_param: word}}
  pair:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: Test::Recorded
        properties: {value: {get_attr: [root, value]}}
  sink:
    type: recorded.yaml
    properties: {value: {get_attr: [pair, resource.0, value]}}
"""

RECORDED = """
heat_template_version: 2021-04-16
parameters:
  value: {type: string}
resources:
  inner:
    type: Test::Recorded
    properties: {value: {get_param: value}}
"""

CHILD = textwrap.dedent(
    """
    import sys
    from stoker.service import Service, Source
    from stoker.settings import Settings
    url, plugins, action, word = sys.argv[1:5]
    service = Service(Settings(database_url=url, plugin_dirs=[plugins]))
    template = Source(open(sys.argv[5]).read(), "crash.yaml")
    files = {"recorded.yaml": sys.argv[6]}
    if action == "create":
        service.create_stack("crash", template, parameters={"word": word}, files=files)
    elif action == "update":
        service.update_stack("crash", template, parameters={"word": word}, files=files)
    elif action == "signal":
        service.signal_resource("crash", "up", {})
    else:
        service.delete_stack("crash")
    """
)


class World:
    def __init__(self, tmp_path: Path, text: str = TEMPLATE, resources: int = 4):
        self.url = f"sqlite:///{tmp_path / 'crash.sqlite'}"
        self.side = tmp_path / "side"
        self.side.mkdir()
        self.text = text
        # physical resources the stack has when complete
        self.resources = resources
        self.files = {"recorded.yaml": RECORDED}
        self.template = tmp_path / "crash.yaml"
        self.template.write_text(text)
        os.environ["STOKER_TEST_SIDE_EFFECTS"] = str(self.side)

    def service(self) -> Service:
        return Service(Settings(database_url=self.url, plugin_dirs=[PLUGINS]))

    def child(self, action: str, word: str, env: dict[str, str]) -> int:
        full = {**os.environ, "STOKER_TEST_SIDE_EFFECTS": str(self.side), **env}
        result = subprocess.run(
            [sys.executable, "-c", CHILD, self.url, PLUGINS, action, word, str(self.template), RECORDED],
            env=full,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode in (0, -signal.SIGKILL), result.stderr
        return result.returncode

    def source(self) -> Source:
        return Source(self.text, "crash.yaml")

    def physical_files(self) -> set[str]:
        return {path.name for path in self.side.iterdir()}


def check_invariants(service: Service) -> None:
    """Nothing IN_PROGRESS; every physical resource is recorded in the stack."""
    stacks = service.store.list_stacks(include_deleted=True, include_nested=True)
    recorded: set[str] = set()
    for stack in stacks:
        assert stack.status != "IN_PROGRESS", (stack.name, stack.state, stack.status_reason)
        for record in service.store.list_resources(stack.id):
            assert record.status != "IN_PROGRESS", (record.name, record.state)
            if record.physical_resource_id:
                recorded.add(record.physical_resource_id)
            # An id never recorded is still findable: the name derives from the record.
            recorded.add(physical_resource_name(stack.name, record.name, record.uuid))
    side = Path(os.environ["STOKER_TEST_SIDE_EFFECTS"])
    for name in (p.name for p in side.iterdir()):
        assert name in recorded, f"physical resource {name} is not known to any stack"


def settle(world: World) -> Service:
    service = world.service()
    service.recover()
    check_invariants(service)
    return service


def crash_points(world_factory, action: str, prepare, retry, limit: int = 150):
    """Run ``action`` killed after commit 1, 2, ... until it completes unkilled."""
    for commits in range(1, limit):
        world = world_factory(commits)
        prepare(world)
        code = world.child(action, "two" if action == "update" else "one", {"STOKER_FAULT_KILL_AFTER_COMMITS": str(commits)})
        service = settle(world)
        retry(world, service)
        check_invariants(service)
        service.delete_stack("crash") if service.store.find_stack("crash") else None
        assert world.physical_files() == set(), f"leaked after crash at commit {commits}"
        service.close()
        if code == 0:
            return commits
    pytest.fail("the action never completed")


@pytest.fixture(params=["flat", "nested"])
def worlds(tmp_path, request):
    """Worlds of the flat stack, and of the same stack through nested stacks."""

    def make(index: int) -> World:
        directory = tmp_path / f"run{index}"
        directory.mkdir()
        if request.param == "nested":
            return World(directory, NESTED_TEMPLATE, resources=4)
        return World(directory)

    return make


def test_crash_during_create_then_retry(worlds):
    def prepare(world):
        pass

    def retry(world, service):
        stack = service.store.find_stack("crash")
        if stack is None:
            return
        if stack.state != "CREATE_COMPLETE":
            stack = service.update_stack("crash", world.source(), parameters={"word": "one"}, files=world.files)
            assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert len(world.physical_files()) == world.resources

    points = crash_points(worlds, "create", prepare, retry)
    assert points > 5


def test_crash_during_update_then_retry(worlds):
    def prepare(world):
        service = world.service()
        assert service.create_stack("crash", world.source(), parameters={"word": "one"}, files=world.files).state == "CREATE_COMPLETE"
        service.close()

    def retry(world, service):
        stack = service.store.find_stack("crash")
        if stack.state != "UPDATE_COMPLETE":
            stack = service.update_stack("crash", world.source(), parameters={"word": "two"}, files=world.files)
            assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert len(world.physical_files()) == world.resources
        assert {p.read_text() for p in world.side.iterdir()} == {"two"}

    points = crash_points(worlds, "update", prepare, retry)
    assert points > 5


def test_crash_during_delete_then_retry(worlds):
    def prepare(world):
        service = world.service()
        assert service.create_stack("crash", world.source(), parameters={"word": "one"}, files=world.files).state == "CREATE_COMPLETE"
        service.close()

    def retry(world, service):
        stack = service.store.find_stack("crash")
        if stack is not None:
            assert service.delete_stack("crash").state == "DELETE_COMPLETE"
        assert world.physical_files() == set()

    points = crash_points(worlds, "delete", prepare, retry)
    assert points > 3


@pytest.mark.parametrize("victim", ["root", "right", "sink"])
def test_crash_between_physical_create_and_recording_its_id(worlds, victim):
    world = worlds(0)
    if world.text == NESTED_TEMPLATE:  # the same places, inside the nested stacks
        victim = {"root": "root", "right": "1", "sink": "inner"}[victim]
    code = world.child("create", "one", {"STOKER_TEST_KILL_IN_HANDLER": victim})
    assert code == -signal.SIGKILL
    service = settle(world)
    stack = service.store.find_stack("crash")
    assert stack.state == "CREATE_FAILED"
    assert "Engine restarted during CREATE" in stack.status_reason
    if world.text != NESTED_TEMPLATE:
        # The file was made, its id never recorded: the resumed engine found it by its
        # name (find_created), so the stack owns it before any retry.
        record = next(r for r in service.list_resources("crash") if r.name == victim)
        assert record.physical_resource_id in world.physical_files()
        assert "found by its name belongs to the stack" in record.status_reason
    assert service.update_stack("crash", world.source(), parameters={"word": "one"}, files=world.files).state == "UPDATE_COMPLETE"
    assert service.delete_stack("crash").state == "DELETE_COMPLETE"
    assert world.physical_files() == set()


# A group scaled by its policy: a signal resizes the group's nested stack.
SCALING_TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      resource:
        type: Test::Recorded
        properties: {value: {get_param: word}}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
      cooldown: 0
"""


def test_crash_during_a_scaling_signal_then_retry(tmp_path):
    """The engine dies at each commit of a scale-out: afterwards nothing is IN_PROGRESS,
    every member made is recorded, the group is not left refusing signals ("scaling in
    progress"), and a retried signal brings it to the size asked for."""

    def make(index: int) -> World:
        directory = tmp_path / f"run{index}"
        directory.mkdir()
        return World(directory, SCALING_TEMPLATE, resources=1)

    def prepare(world):
        service = world.service()
        assert service.create_stack("crash", world.source(), files=world.files).state == "CREATE_COMPLETE"
        assert len(world.physical_files()) == 1
        service.close()

    def retry(world, service):
        if len(world.physical_files()) != 2:
            service.signal_resource("crash", "up", {})
        stack = service.store.find_stack("crash")
        assert stack.status == "COMPLETE", (stack.state, stack.status_reason)
        assert len(world.physical_files()) == 2, "the group is not at the size the signal asked for"

    points = crash_points(make, "signal", prepare, retry)
    assert points > 3


DELAY_TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  root:
    type: Test::Recorded
    properties: {value: {get_param: word}}
  pause:
    type: OS::Heat::Delay
    depends_on: root
    properties: {min_wait: 0.3, max_jitter: 0}
  sink:
    type: Test::Recorded
    depends_on: pause
    properties: {value: {get_param: word}}
"""


def test_crash_during_a_delay_then_retry(tmp_path):
    """A create killed while OS::Heat::Delay waits (or at any other commit) leaves nothing
    IN_PROGRESS, and its retry completes with every resource made once."""

    def make(index: int) -> World:
        directory = tmp_path / f"run{index}"
        directory.mkdir()
        return World(directory, DELAY_TEMPLATE, resources=2)

    def retry(world, service):
        stack = service.store.find_stack("crash")
        if stack is None:
            return
        if stack.state != "CREATE_COMPLETE":
            stack = service.update_stack("crash", world.source(), parameters={"word": "one"}, files=world.files)
            assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert len(world.physical_files()) == world.resources

    points = crash_points(make, "create", lambda world: None, retry)
    assert points > 3


def test_a_delete_killed_after_delete_complete_is_finished_by_recovery(tmp_path):
    """A delete killed between DELETE_COMPLETE and marking the stack deleted (issue 26)
    kept the stack's name and lock; the next recovery finishes the delete."""
    world = World(tmp_path)
    service = world.service()
    service.create_stack("crash", world.source(), parameters={"word": "one"}, files=world.files)
    service.close()
    assert world.child("delete", "one", {"STOKER_FAULT_AT": "delete-complete"}) == -signal.SIGKILL
    service = world.service()
    stack = service.store.find_stack("crash")
    assert stack is not None and stack.state == "DELETE_COMPLETE"
    assert service.store.lock_holder(stack.id) is not None
    assert [recovered.id for recovered in service.recover()] == [stack.id]
    assert service.store.find_stack("crash") is None
    assert service.store.lock_holder(stack.id) is None
    assert service.store.list_resources(stack.id) == []
    assert world.physical_files() == set()
    check_invariants(service)
    service.close()
