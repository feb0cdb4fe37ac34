"""Implicit dependencies through the engine: a plugin's rule orders create and delete like
a stated dependency, a failing rule is ignored, and ``warn`` writes an event; an update
rule orders updates only."""

from __future__ import annotations

import textwrap

from tests.support.stacks import template

PLUGIN = '''
import time
from pathlib import Path

from stoker.sdk import properties, resource
from stoker.sdk.dependencies import known


class Door(resource.Resource):
    """A door in a house."""

    properties_schema = {"house": properties.Schema(properties.Schema.STRING, "The house.")}

    def handle_create(self):
        time.sleep(0.2)  # a slow door: a key that did not wait would be done first
        self.resource_id_set("door-" + self.name)

    def handle_delete(self):
        with open(Path(__file__).with_suffix(".deleted"), "a") as log:
            log.write(self.name + "\\n")


class Key(resource.Resource):
    """A key for every door of its house, never referenced in the template."""

    properties_schema = {"house": properties.Schema(properties.Schema.STRING, "The house.")}

    @classmethod
    def implicit_dependencies(cls, me, stack):
        house = me.get("house")
        if not known(house):
            return []
        return [door.name for door in stack.of_type("Demo::Door") if door.get("house") == house]

    def handle_create(self):
        self.warn("cut on an old machine")
        self.resource_id_set("key-" + self.name)

    def handle_delete(self):
        time.sleep(0.2)  # a slow key: doors that did not wait would be gone first
        with open(Path(__file__).with_suffix(".deleted"), "a") as log:
            log.write(self.name + "\\n")


class Broken(resource.Resource):
    """A type whose rule fails."""

    @classmethod
    def implicit_dependencies(cls, me, stack):
        raise RuntimeError("a bug in a plugin")

    def handle_create(self):
        self.resource_id_set("broken")


class Paint(resource.Resource):
    """The paint of a house: slow to change."""

    properties_schema = {"colour": properties.Schema(properties.Schema.STRING, "The colour.", update_allowed=True)}

    def handle_create(self):
        time.sleep(0.3)
        self.resource_id_set("paint-" + self.name)

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        time.sleep(0.3)


class Curtain(resource.Resource):
    """A curtain, changed once the paint of the stack is dry (not before its create)."""

    properties_schema = {"colour": properties.Schema(properties.Schema.STRING, "The colour.", update_allowed=True)}

    @classmethod
    def update_dependencies(cls, me, stack):
        return [paint.name for paint in stack.of_type("Demo::Paint")]

    def handle_create(self):
        self.resource_id_set("curtain-" + self.name)

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        pass


def resource_mapping():
    return {"Demo::Door": Door, "Demo::Key": Key, "Demo::Broken": Broken, "Demo::Paint": Paint, "Demo::Curtain": Curtain}
'''

STACK = """
heat_template_version: 2021-04-16
parameters:
  house: {type: string, default: "12 Main St"}
resources:
  front: {type: Demo::Door, properties: {house: {get_param: house}}}
  back: {type: Demo::Door, properties: {house: {get_param: house}}}
  shed: {type: Demo::Door, properties: {house: "the shed"}}
  key: {type: Demo::Key, properties: {house: "12 Main St"}}
  broken: {type: Demo::Broken}
"""


def _service(make_service, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "house.py").write_text(textwrap.dedent(PLUGIN))
    return make_service(plugin_dirs=[str(plugins)])


def _order(service, stack_name: str, action: str) -> list[str]:
    return [
        event.resource_name
        for event in service.list_events(stack_name)
        if event.resource_action == action and event.resource_status == "COMPLETE" and event.resource_name != stack_name
    ]


def test_implicit_dependency_orders_create_and_delete(make_service, tmp_path):
    service = _service(make_service, tmp_path)

    stack = service.create_stack("house", template(STACK))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    created = _order(service, "house", "CREATE")
    assert created.index("key") > max(created.index("front"), created.index("back"))
    assert service.delete_stack("house").state == "DELETE_COMPLETE"
    deleted = (tmp_path / "plugins" / "house.deleted").read_text().split()
    assert deleted.index("key") < min(deleted.index("front"), deleted.index("back"))


def test_resource_warning_is_an_event_of_its_action(make_service, tmp_path):
    service = _service(make_service, tmp_path)

    service.create_stack("house", template(STACK))

    warnings = [
        (event.resource_action, event.resource_status, event.resource_status_reason)
        for event in service.list_events("house", "key")
        if event.resource_status_reason.startswith("Warning")
    ]
    assert warnings == [("CREATE", "IN_PROGRESS", "Warning: cut on an old machine")]


def test_implicit_dependency_orders_the_create_plan(make_service, tmp_path):
    service = _service(make_service, tmp_path)

    # Without the rule's edges the key, a root of the stated graph, would come first.
    plan = service.preview_create("house", template(STACK))

    planned = [change["resource_name"] for change in plan["resource_changes"]["added"]]
    assert planned.index("key") > max(planned.index("front"), planned.index("back"))


ROOM = """
heat_template_version: 2021-04-16
parameters:
  colour: {type: string}
resources:
  paint: {type: Demo::Paint, properties: {colour: {get_param: colour}}}
  curtain: {type: Demo::Curtain, properties: {colour: {get_param: colour}}}
"""


def test_update_dependency_orders_updates_and_not_the_create(make_service, tmp_path):
    service = _service(make_service, tmp_path)

    stack = service.create_stack("room", template(ROOM), parameters={"colour": "white"})

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    # The create ignores the rule: the quick curtain is done before the slow paint.
    assert _order(service, "room", "CREATE") == ["curtain", "paint"]

    stack = service.update_stack("room", template(ROOM), parameters={"colour": "blue"})

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    events = [(e.resource_name, e.resource_status) for e in service.list_events("room") if e.resource_action == "UPDATE" and e.resource_name != "room"]
    assert events.index(("paint", "COMPLETE")) < events.index(("curtain", "IN_PROGRESS")), events
