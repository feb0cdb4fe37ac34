"""Software configs for plugins: Heat's input/output schemas and the config store a
plugin reaches through the engine.

What it owns:

* the schemas of a config's ``inputs`` and ``outputs`` (Heat's ``software_config_io``),
  for plugins' property schemas, and ``config_body``, which checks and normalises a
  config as Heat's ``create_software_config`` does before it stores one: every input
  and output gets its declared keys only, its ``type`` (default ``String``), a
  ``default`` converted to that type, ``replace_on_change`` only when true, and an
  output's ``error_output``;
* ``SoftwareConfigs``, what the engine offers a plugin (the hooks' ``software_configs``):
  create, show and delete stored configs, each answered in Heat's shape
  (``format_software_config``); and ``software_configs(resource)``, how a plugin asks;
* ``MemorySoftwareConfigs``, the same contract kept in a dict, for plugin tests;
* software deployments (Heat's ``software_deployment``: one config applied to one
  server): their shape (``format_deployment``), Heat's rules as pure functions that
  every implementation shares (``new_deployment`` for a create, ``deployment_changes``
  for an update, ``signal_outcome`` for the outputs a server signals back), the
  ``SoftwareDeployments`` contract a plugin reaches through ``software_deployments(resource)``
  (all defined in ``software_deployment.py`` and offered here), and
  ``MemorySoftwareDeployments`` for plugin tests.

What it must not do: touch the store (the engine's ``engine.software_configs`` and
``engine.software_deployments`` do).
"""

from __future__ import annotations

import builtins
import json
import math
import threading
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from stoker.sdk import constraints, properties
from stoker.sdk.exceptions import EntityNotFound, StokerError, ValidationError
from stoker.sdk.software_deployment import (  # noqa: F401 - this module's names before deployments had a module
    COMPLETE,
    DEPLOY_OUTPUTS,
    DEPLOY_STATUS_CODE,
    DEPLOY_STDERR,
    DEPLOY_STDOUT,
    DEPLOYMENT_STATUSES,
    FAILED,
    IN_PROGRESS,
    DeploymentConfigNotFoundError,
    SignalOutcome,
    SoftwareDeploymentNotFoundError,
    SoftwareDeployments,
    _isotime,
    deployment_changes,
    deployment_metadata,
    deployment_view,
    format_deployment,
    new_deployment,
    signal_outcome,
    software_deployments,
)

if TYPE_CHECKING:
    from stoker.sdk.resource import Resource

__all__ = [
    "DEPLOYMENT_STATUSES",
    "DeploymentConfigNotFoundError",
    "INPUT_SCHEMA",
    "IO_TYPES",
    "OUTPUT_SCHEMA",
    "MemorySoftwareConfigs",
    "MemorySoftwareDeployments",
    "SignalOutcome",
    "SoftwareConfigNotFoundError",
    "SoftwareConfigs",
    "SoftwareDeploymentNotFoundError",
    "SoftwareDeployments",
    "config_body",
    "deployment_changes",
    "deployment_metadata",
    "format_config",
    "format_deployment",
    "new_deployment",
    "signal_outcome",
    "software_configs",
    "software_deployments",
]

IO_TYPES = (STRING, NUMBER, LIST, JSON, BOOLEAN) = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")

# Heat's input_config_schema and output_config_schema.
INPUT_SCHEMA = {
    "name": properties.Schema(properties.Schema.STRING, "The input's name.", required=True),
    "description": properties.Schema(properties.Schema.STRING, "What the input is for."),
    "type": properties.Schema(
        properties.Schema.STRING,
        "The type of the input's value.",
        default=STRING,
        constraints=[constraints.AllowedValues(list(IO_TYPES))],
    ),
    "default": properties.Schema(properties.Schema.ANY, "The value when a deployment gives none."),
    "replace_on_change": properties.Schema(
        properties.Schema.BOOLEAN,
        "A change of the value replaces the deployment instead of updating it.",
        default=False,
    ),
}

OUTPUT_SCHEMA = {
    "name": properties.Schema(properties.Schema.STRING, "The output's name.", required=True),
    "description": properties.Schema(properties.Schema.STRING, "What the output holds."),
    "type": properties.Schema(
        properties.Schema.STRING,
        "The type of the output's value.",
        default=STRING,
        constraints=[constraints.AllowedValues(list(IO_TYPES))],
    ),
    "error_output": properties.Schema(
        properties.Schema.BOOLEAN,
        "A value in this output means the deployment failed.",
        default=False,
    ),
}


class SoftwareConfigNotFoundError(EntityNotFound):
    """No software config has this id (Heat's NotFound)."""

    def __init__(self, config_id: str):
        StokerError.__init__(self, f"Software config with id {config_id} not found")
        self.entity = "Software config"
        self.name = config_id


# -- normalising a config, as Heat's create_software_config does -------------------------


def _string(value: Any, where: str) -> str:
    # Heat's Property._get_string: a bool or an integer becomes its str() ("True").
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int):
        return str(value)
    raise ValidationError(f"{where}: Value must be a string; got {json.dumps(value, default=str)}")


def _boolean(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValidationError(f'{where}: "{value}" is not a valid boolean')


def _number(value: Any, where: str) -> int | float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            # NaN and infinity are no JSON numbers: no database or client could read them back.
            if math.isfinite(number):
                return number
    raise ValidationError(f"{where}: Value '{value}' is not a number")


def _typed(kind: str, value: Any, where: str) -> Any:
    """An input's ``default`` as its ``type`` reads it (Heat converts it through the
    property type of a parameter of that type; a list or a map accept text too)."""
    if kind == STRING:
        return "" if value is None else _string(value, where)
    if kind == NUMBER:
        return 0 if value is None else _number(value, where)
    if kind == BOOLEAN:
        return False if value is None else _boolean(value, where)
    if kind == LIST:
        if value is None:
            return []
        if isinstance(value, str):
            return value.split(",") if value else []
        if isinstance(value, Sequence):
            return list(value)
        raise ValidationError(f"{where}: {value!r} is not a list")
    # Json: a map; text is kept as given, a list is sent on as JSON text.
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return json.dumps(value)
    raise ValidationError(f'{where}: "{value}" is not a map')


def _io_item(item: Mapping[str, Any], schema: Mapping[str, properties.Schema], where: str, is_input: bool) -> dict[str, Any]:
    """One input or output as Heat stores it. A key given as null takes the empty value
    of its type (Heat reads an explicit null that way); a key not given is left out
    unless it has a default."""
    extra = {"value"} if is_input else set()
    for key in item:
        if key not in schema and key not in extra:
            raise ValidationError(f"{where}: Unknown Property {key}")
    if "name" not in item:
        raise ValidationError(f"{where}: Property name not assigned")
    result: dict[str, Any] = {}
    kind = item.get("type")
    kind = STRING if kind is None else _string(kind, f"{where}.type")
    if kind not in IO_TYPES:
        raise ValidationError(f'{where}.type: "{kind}" is not an allowed value [{", ".join(IO_TYPES)}]')
    result["name"] = _string("" if item["name"] is None else item["name"], f"{where}.name")
    if "description" in item:
        result["description"] = _string("" if item["description"] is None else item["description"], f"{where}.description")
    result["type"] = kind
    if is_input:
        if "default" in item:
            default = item["default"]
            if "type" in item and not (default == "" and kind != STRING):
                # ("" for a non-string type is Heat's legacy default, stored as given.)
                default = _typed(kind, default, f"{where}.default")
            if default is not None:
                result["default"] = default
        replace = item.get("replace_on_change")
        if replace is not None and _boolean(replace, f"{where}.replace_on_change"):
            result["replace_on_change"] = True
        if "value" in item:
            result["value"] = item["value"]
    else:
        error_output = item.get("error_output")
        result["error_output"] = False if error_output is None else _boolean(error_output, f"{where}.error_output")
    return result


def _io_list(items: Any, what: str, is_input: bool) -> list[dict[str, Any]]:
    if items is None:
        return []
    if isinstance(items, str | Mapping) or not isinstance(items, Sequence):
        raise ValidationError(f"{what}: Software Config I/O Schema must be in a list")
    if not all(isinstance(item, Mapping) for item in items):
        raise ValidationError(f"{what}: Software Config I/O Schema must be a dict")
    schema = INPUT_SCHEMA if is_input else OUTPUT_SCHEMA
    return [_io_item(item, schema, f"{what}[{index}]", is_input) for index, item in enumerate(items)]


def config_body(config: Any = None, inputs: Any = None, outputs: Any = None, options: Any = None) -> dict[str, Any]:
    """The stored body of a config, {"config", "inputs", "outputs", "options"}, checked
    and normalised as Heat stores it (missing inputs and outputs are empty lists, missing
    options an empty map). Raises ValidationError naming the faulty entry."""
    return {
        "inputs": _io_list(inputs, "inputs", True),
        "outputs": _io_list(outputs, "outputs", False),
        "options": options or {},
        "config": config,
    }


def format_config(
    config_id: str,
    name: str | None,
    group: str | None,
    body: Mapping[str, Any] | None,
    created_at: datetime | None,
    detail: bool = True,
) -> dict[str, Any]:
    """A config in Heat's shape (``format_software_config``): id, name, group and
    creation_time; with ``detail``, also config, inputs, outputs and options."""
    result: dict[str, Any] = {"id": config_id, "name": name, "group": group, "creation_time": _isotime(created_at)}
    if detail:
        body = body or {}
        for key in ("config", "inputs", "outputs", "options"):
            result[key] = body.get(key)
    return result


# -- what the engine offers a plugin -----------------------------------------------------


class SoftwareConfigs(Protocol):
    """The stored software configs of the stack's project (called from handler threads).

    Every answer is a config in Heat's detailed shape (``format_config``)."""

    def create(
        self,
        *,
        name: str | None,
        group: str | None,
        config: Any,
        inputs: Any = None,
        outputs: Any = None,
        options: Any = None,
    ) -> dict[str, Any]:
        """Check, normalise (``config_body``) and store a new config; returns it, with its id."""
        ...

    def show(self, config_id: str) -> dict[str, Any]:
        """The config; raises SoftwareConfigNotFoundError."""
        ...

    def find_by_name(self, name: str) -> str | None:
        """The id of the newest config named ``name`` (None: there is none): how a plugin
        finds the config an interrupted create stored under its physical name."""
        ...

    def delete(self, config_id: str) -> None:
        """Delete the config; raises SoftwareConfigNotFoundError."""
        ...


def software_configs(resource: Resource, required: bool = True) -> SoftwareConfigs | None:
    """The config store the engine gives ``resource`` (the hooks' ``software_configs``).
    Without one (outside an engine, a preview): an error, or None when not ``required``."""
    offer = getattr(resource._hooks, "software_configs", None)
    if offer is None:
        if not required:
            return None
        raise StokerError(f"{resource.type} needs the engine's software config store", path=f"resources.{resource.name}")
    return offer(resource)


class MemorySoftwareConfigs:
    """``SoftwareConfigs`` in a dict: for plugin tests without a database. Hooks offer it
    as ``software_configs = lambda resource: memory``."""

    def __init__(self) -> None:
        self.configs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def create(
        self,
        *,
        name: str | None,
        group: str | None,
        config: Any,
        inputs: Any = None,
        outputs: Any = None,
        options: Any = None,
    ) -> dict[str, Any]:
        body = config_body(config, inputs, outputs, options)
        config_id = str(uuid.uuid4())
        created = format_config(config_id, name, group, body, datetime.now(UTC))
        with self._lock:
            self.configs[config_id] = created
        return dict(created)

    def show(self, config_id: str) -> dict[str, Any]:
        with self._lock:
            found = self.configs.get(config_id)
        if found is None:
            raise SoftwareConfigNotFoundError(config_id)
        return dict(found)

    def find_by_name(self, name: str) -> str | None:
        with self._lock:
            found = [config for config in self.configs.values() if config["name"] == name]
        return found[-1]["id"] if found else None

    def delete(self, config_id: str) -> None:
        with self._lock:
            if self.configs.pop(config_id, None) is None:
                raise SoftwareConfigNotFoundError(config_id)


# -- software deployments, in memory (their rules: software_deployment.py) ---------------


class MemorySoftwareDeployments:
    """``SoftwareDeployments`` in a dict, over the configs of ``configs``: for plugin
    tests without a database. Hooks offer it as ``software_deployments = lambda
    resource: memory``."""

    def __init__(self, configs: MemorySoftwareConfigs):
        self.configs = configs
        self.deployments: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _config(self, config_id: str) -> dict[str, Any] | None:
        try:
            return self.configs.show(config_id)
        except SoftwareConfigNotFoundError:
            return None

    def _stored(self, deployment_id: str) -> dict[str, Any]:
        found = self.deployments.get(deployment_id)
        if found is None:
            raise SoftwareDeploymentNotFoundError(deployment_id)
        return found

    def create(
        self,
        *,
        server_id: str,
        config_id: str,
        input_values: Any = None,
        action: str = "INIT",
        status: str = "COMPLETE",
        status_reason: str = "",
        deployment_id: str | None = None,
        stack_user_project_id: str | None = None,
    ) -> dict[str, Any]:
        fields = new_deployment(
            server_id=server_id, config_id=config_id, input_values=input_values, action=action, status=status,
            status_reason=status_reason, deployment_id=deployment_id, stack_user_project_id=stack_user_project_id,
        )  # fmt: skip
        if self._config(config_id) is None:
            raise DeploymentConfigNotFoundError(config_id)
        stored = {**fields, "output_values": None, "created_at": datetime.now(UTC).replace(tzinfo=None), "updated_at": None}
        with self._lock:
            if stored["id"] in self.deployments:
                raise ValidationError(f'"id": a software deployment with id {stored["id"]} exists already')
            self.deployments[stored["id"]] = stored
        return deployment_view(stored)

    def show(self, deployment_id: str) -> dict[str, Any]:
        with self._lock:
            return deployment_view(self._stored(deployment_id))

    def list(self, server_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [deployment_view(stored) for stored in self.deployments.values() if not server_id or stored["server_id"] == server_id]

    def update(
        self,
        deployment_id: str,
        *,
        config_id: str | None = None,
        input_values: Any = None,
        output_values: Any = None,
        action: str | None = None,
        status: str | None = None,
        status_reason: str | None = None,
        updated_at: datetime | str | None = None,
    ) -> dict[str, Any]:
        changes = deployment_changes(
            config_id=config_id, input_values=input_values, output_values=output_values, action=action, status=status,
            status_reason=status_reason, updated_at=updated_at,
        )  # fmt: skip
        if "config_id" in changes and self._config(changes["config_id"]) is None:
            raise DeploymentConfigNotFoundError(changes["config_id"])
        with self._lock:
            stored = self._stored(deployment_id)
            stored.update(changes)
            return deployment_view(stored)

    def delete(self, deployment_id: str) -> None:
        with self._lock:
            if self.deployments.pop(deployment_id, None) is None:
                raise SoftwareDeploymentNotFoundError(deployment_id)

    def signal(self, deployment_id: str, details: Any, updated_at: datetime | str | None = None) -> str | None:
        with self._lock:
            stored = dict(self._stored(deployment_id))
        outcome = signal_outcome(deployment_id, stored["status"], stored["output_values"], self._config(stored["config_id"]), details)
        if outcome is None:
            return None
        changes = deployment_changes(output_values=outcome.output_values, status=outcome.status, status_reason=outcome.status_reason, updated_at=updated_at)
        with self._lock:
            current = self._stored(deployment_id)
            if current["status"] != IN_PROGRESS:
                return None  # another signal finished it meanwhile
            current.update(changes)
        return outcome.event_reason

    def metadata(self, server_id: str) -> builtins.list[dict[str, Any]]:  # ``list`` here is the method above
        if not server_id:
            raise ValidationError("server_id must be specified")
        return deployment_metadata([self._config(deployment["config_id"]) for deployment in self.list(server_id)])
