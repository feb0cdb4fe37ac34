"""The plugin author's kit: run a plugin's whole lifecycle in a unit test.

No server, no database: the plugin runs through the engine's own handler table and
runner (the same threads and polling), on a ``FakeClock`` so a plugin that waits or polls
costs no real time. Physical ids and data the plugin stores are recorded on the harness.

    harness = PluginHarness(MyResource, {"size": 3})
    harness.create()
    assert harness.resource.resource_id == "..."
    harness.update({"size": 4})          # in place, or raises UpdateReplace
    assert harness.attribute("status") == "ACTIVE"
    harness.delete()

A plugin that stores software configs or deployments, or issues signal credentials,
gets in-memory ones: ``harness.software_configs``, ``harness.software_deployments`` and
``harness.signals``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from stoker.engine.clock import FakeClock
from stoker.engine.handlers import HANDLERS, SNAPSHOT_DELETE, HandlerRunner, handler_pair
from stoker.engine.states import Action
from stoker.sdk.exceptions import StokerError
from stoker.sdk.resource import Resource
from stoker.sdk.signals import MemorySignals
from stoker.sdk.software_config import MemorySoftwareConfigs, MemorySoftwareDeployments
from stoker.template.definitions import ResourceDefinition

__all__ = ["FakeClock", "PluginHarness"]


class _Stack:
    def __init__(self, name: str, stack_id: str):
        self.name = name
        self.id = stack_id
        # Heat's stack_user_project_id: the stack user domain's project a plugin made for
        # the stack's users (keystone.stack_user), recorded here as the engine records it.
        self.stack_user_project_id: str | None = None
        self.stack_user_project_name = f"test-project-{stack_id}"[:64]

    def set_stack_user_project_id(self, project_id: str) -> None:
        self.stack_user_project_id = project_id


class _Hooks:
    def __init__(self, harness: PluginHarness):
        self.harness = harness

    def resource_id_set(self, resource: Resource, physical_id: str | None) -> None:
        self.harness.physical_ids.append(physical_id)

    def data_changed(self, resource: Resource) -> None:
        self.harness.data = resource.data()

    def warn(self, resource: Resource, message: str) -> None:
        self.harness.warnings.append(message)

    def client_plugin(self, resource: Resource, name: str | None) -> Any:
        """The harness's ``clients`` map names to ClientPlugin instances or classes."""
        clients = self.harness.clients
        if name not in clients:
            raise StokerError(f"No client plugin {name!r} given to the harness", hint="pass clients={name!r: FakeClientPlugin()}")
        plugin = clients[name]
        if isinstance(plugin, type):
            plugin = clients[name] = plugin()
        return plugin

    def now(self) -> float:
        return self.harness.clock.now()

    def software_configs(self, resource: Resource) -> MemorySoftwareConfigs:
        return self.harness.software_configs

    def software_deployments(self, resource: Resource) -> MemorySoftwareDeployments:
        return self.harness.software_deployments

    def signals(self, resource: Resource) -> MemorySignals:
        return self.harness.signals


class PluginHarness:
    """Drives one instance of a resource plugin class through its lifecycle."""

    def __init__(
        self,
        plugin: type[Resource],
        properties: Mapping[str, Any] | None = None,
        *,
        name: str = "resource",
        stack_name: str = "test-stack",
        clients: Mapping[str, Any] | None = None,
        clock: FakeClock | None = None,
        resolver: Callable[[Any], Any] | None = None,
        constraints: Mapping[str, Any] | None = None,
    ):
        self.plugin = plugin
        self.name = name
        self.clock = clock or FakeClock()
        self.clients = dict(clients or {})
        self.constraints = dict(constraints or {})
        self.physical_ids: list[str | None] = []
        self.warnings: list[str] = []
        self.data: dict[str, Any] = {}
        # The engine's stores a plugin may use, kept in memory (sdk.software_config, sdk.signals).
        self.software_configs = MemorySoftwareConfigs()
        self.software_deployments = MemorySoftwareDeployments(self.software_configs)
        self.signals = MemorySignals()
        self._resolver = resolver or (lambda value: value)
        self.stack = _Stack(stack_name, str(uuid.uuid4()))
        self.resource = self._build(properties or {})

    # Properties' context: custom constraints and clients a plugin asks for.
    def custom_constraint(self, name: str) -> Any:
        return self.constraints.get(name)

    def client(self, name: str) -> Any:
        return _Hooks(self).client_plugin(self.resource, name).client()

    def definition(self, properties: Mapping[str, Any]) -> ResourceDefinition:
        return ResourceDefinition(self.name, "Test::Plugin", dict(properties)).bind(self._resolver)

    def _build(self, properties: Mapping[str, Any]) -> Resource:
        return self.plugin(self.name, self.definition(properties), self.stack, uuid=str(uuid.uuid4()), hooks=_Hooks(self), context=self)

    def _run(self, action: str, args: tuple = ()) -> Any:
        if action not in HANDLERS:
            raise ValueError(f"Unknown action {action}; the engine knows {', '.join(HANDLERS)}")

        async def go() -> Any:
            runner = HandlerRunner(self.clock, threads=1)
            try:
                return await runner.run(self.resource, action, args)
            finally:
                runner.close()

        self.resource.action = str(action).split("_")[0] if action != SNAPSHOT_DELETE else Action.DELETE
        result = asyncio.run(go())
        self.resource.status = "COMPLETE"
        return result

    def implements(self, action: str) -> bool:
        handle, _ = handler_pair(self.resource, action)
        return handle is not None

    def validate(self) -> None:
        self.resource.validate()

    def create(self) -> None:
        self.resource.validate()
        self._run(Action.CREATE)

    def update(self, properties: Mapping[str, Any]) -> None:
        """Update in place with new properties (raises UpdateReplace when the plugin, or a
        property that is not update_allowed, demands a replacement)."""
        from stoker.sdk.exceptions import UpdateReplace

        old = self.resource.properties.resolved()
        new_definition = self.definition(properties)
        new_values = new_definition.properties(self.plugin.properties_schema, self, accept_any=self.plugin.accepts_any_property)
        new_values.validate()
        resolved = new_values.resolved()
        prop_diff = {key: value for key, value in resolved.items() if old.get(key) != value}
        schema = self.plugin.properties_schema
        immutable = [key for key in prop_diff if key in schema and schema[key].immutable]
        if immutable:
            raise StokerError(f"Update of immutable property {', '.join(sorted(immutable))} is not allowed")
        if any(key in schema and not schema[key].update_allowed for key in prop_diff):
            raise UpdateReplace(self.name)
        if not prop_diff:
            return
        self._run(Action.UPDATE, (new_definition, {"Properties": dict(properties)}, prop_diff))
        self.resource.properties = new_values

    def delete(self) -> None:
        self._run(Action.DELETE)

    def snapshot_delete(self) -> None:
        self._run(SNAPSHOT_DELETE, ((self.resource.action, self.resource.status),))

    def suspend(self) -> None:
        self._run(Action.SUSPEND)

    def resume(self) -> None:
        self._run(Action.RESUME)

    def snapshot(self) -> None:
        self._run(Action.SNAPSHOT)

    def check(self) -> None:
        self._run(Action.CHECK)

    def attribute(self, name: str, *path: Any) -> Any:
        return self.resource.FnGetAtt(name, *path)

    def reference(self) -> Any:
        return self.resource.get_reference_id()
