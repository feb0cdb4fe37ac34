"""Reads of stacks for the CLI and the API: stacks, resources (their attributes and
who needs them), events, outputs, templates, and the registry's resource types.

Nothing here changes anything; it is a part of ``Service`` (service.py), whose other
parts make the requests that do, finding their stacks and resources here. Needs the
store, the engine, the registry and the settings (hidden stack tags). The values a custom
constraint lists (``constraint_values``) are read here too: the caller's cloud, no stack.

Projects are kept apart here: a stack is found for a ``Project`` (the API's caller)
only if it is that project's (a nested stack is its root's project's, as the engine
makes it), by ``get_stack`` and ``identified_stack``, which every API route goes
through before it reads or changes a stack; another project's stack is not found, as a
missing one is not (never a refusal that would confirm it exists). Without a
``Project`` (the embedded CLI, one user's), every stack is found.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stoker.engine.engine import Engine
from stoker.engine.errors import InvalidValueError, NotSupportedError, StackNotFoundError
from stoker.engine.outputs import resolve_outputs
from stoker.environment.registry import ResourceRegistry
from stoker.masking import MASK, HiddenValues
from stoker.sdk import properties_group, support
from stoker.sdk.exceptions import ResourceNotFoundError, StokerError, ValidationError
from stoker.settings import Settings
from stoker.store import EventRecord, ResourceRecord, StackRecord, Store
from stoker.template.hot import Template


@dataclass(frozen=True)
class Project:
    """Whose stacks a request reaches: project ``id``'s. ``admin`` (Heat's context
    ``is_admin``): any stack by its id too, and every project's in a list that asks for
    them (``global_tenant``); by name, still only its own project's, as in Heat."""

    id: str
    admin: bool = False

    def reaches(self, stack: StackRecord) -> bool:
        # "" is nobody's project (a caller the API let in without one, as a signal
        # bearing only a handle's token): it reaches no stack, not even those the
        # embedded CLI made without a project (which passes no Project at all). The
        # project of a stack's users reaches the stack too (Heat's _get_stack: the
        # tenant or the stack_user_project_id); what they may do there is the policy's
        # (the heat_stack_user role: its resources' metadata and signals, no more).
        return self.admin or (self.id != "" and self.id in (stack.project_id, stack.stack_user_project_id))


class _ListingContext:
    """What a constraint's listing acts in: no stack, the caller's cloud (the request's
    user in Keystone mode, the configured cloud otherwise)."""

    stack = None


class StackReads:
    """Stacks, resources, events, outputs and resource types, read for the CLI and the
    API and for the other parts of ``Service``."""

    def __init__(self, settings: Settings, store: Store, engine: Engine, registry: ResourceRegistry):
        self.settings = settings
        self.store = store
        self.engine = engine
        self.registry = registry

    def current_resource(self, stack: StackRecord, resource_name: str) -> ResourceRecord:
        for record in self.store.list_resources(stack.id):
            if record.current and record.name == resource_name:
                return record
        raise ResourceNotFoundError(f"The Resource ({resource_name}) could not be found in Stack {stack.name}.")

    # -- resource types -------------------------------------------------------------

    def resource_types(self, include_hidden: bool = False, support_status: str | None = None, version: str | None = None) -> list[str]:
        """Registered types; HIDDEN ones only when asked (seed 000); with
        ``support_status``, those in that status (a status Heat does not know is refused,
        as its ``get_types`` does; any case is accepted); with ``version``, those whose
        support status names that version (Heat's ``version_matches``)."""
        if support_status is not None:
            support_status = support_status.upper()
            if support_status not in support.SUPPORT_STATUSES:
                raise InvalidValueError(f"Invalid support status and should be one of {support.SUPPORT_STATUSES}")
        listed = self.registry.listed_types()
        return [
            name
            for name, cls in listed.items()
            if (include_hidden or cls.support_status.status != support.HIDDEN)
            and support_status in (None, cls.support_status.status)
            and version in (None, cls.support_status.version)
        ]

    def resource_type_schema(self, type_name: str) -> dict[str, Any]:
        """Heat's resource-type-show: the plugin's schemas, support status and docstring."""
        cls = self.registry.get_class(type_name)
        if cls.support_status.status == support.HIDDEN:
            # Heat's resource_schema (and generate_template): NotSupported, 400.
            raise NotSupportedError(type_name, hint="the type is HIDDEN: kept for old stacks only")
        return {
            "resource_type": type_name,
            "description": inspect.getdoc(cls) or "",
            "properties": {
                # As Heat's: a HIDDEN property, or one marked not implemented (the AWS
                # types' CFN properties Heat accepts and ignores), is left out.
                name: schema.to_dict()
                for name, schema in cls.properties_schema.items()
                if schema.support_status.status != support.HIDDEN and schema.implemented
            },
            "attributes": {
                name: schema.to_dict() for name, schema in cls.all_attributes_schema().items() if schema.support_status.status != support.HIDDEN
            },
            "properties_groups": properties_group.describe(cls.declared_properties_groups()),
            "support_status": cls.support_status.to_dict(),
        }

    def constraint_values(self, name: str) -> dict[str, Any]:
        """The values the custom constraint ``name`` accepts in the caller's cloud (a
        launch form's list, docs/api.md): ``{"constraint", "values": [{value, id,
        label}], "truncated"}``. Refused for a constraint not registered, or one that
        does not list (a constraint lists when it has ``values(context, limit)``)."""
        found = self.registry.constraints.get(name)
        if found is None:
            known = ", ".join(sorted(self.registry.constraints))
            raise ResourceNotFoundError(f"No custom constraint named {name}", hint=f"one of: {known}")
        constraint = found() if isinstance(found, type) else found
        if getattr(constraint, "values", None) is None or getattr(constraint, "listing", "") is None:
            raise ValidationError(f"The custom constraint {name} does not list its values", hint="type the value")
        try:
            values, truncated = constraint.values(_ListingContext())
        except StokerError:
            raise
        except Exception as error:  # noqa: BLE001 - the cloud's own failure, said in words
            raise StokerError(
                f"Listing the values of {name} in the cloud failed: {type(error).__name__}: {error}",
                hint="type the value, or try again once the cloud answers",
            ) from None
        return {"constraint": name, "values": values, "truncated": truncated}

    # -- reads ------------------------------------------------------------------

    def get_stack(self, name_or_id: str, project: Project | None = None) -> StackRecord:
        """A live stack by id or name; with ``project``, only one it reaches (Heat's
        stack_get and stack_get_by_name): another project's is not found."""
        if project is None:
            stack = self.store.find_stack(name_or_id)
        else:
            stack = self.store.find_stack(name_or_id, project.id, stack_users=True) if project.id else None
            if stack is None and project.admin:
                found = self.store.get_stack(name_or_id)  # by id only
                stack = found if found is not None and found.deleted_at is None else None
        if stack is None:
            raise StackNotFoundError(name_or_id)
        return stack

    def identified_stack(self, name: str, stack_id: str, project: Project | None, deleted: bool = False) -> StackRecord:
        """The stack of ``/stacks/{name}/{id}`` (Heat's ``_get_stack``): found by id,
        reached by ``project``, and named ``name``; else not found, alike whether there
        is no such stack, it is another project's or it has another name. ``deleted``:
        a deleted stack is found too (Heat's show uses show_deleted)."""
        stack = self.store.get_stack(stack_id)
        if (
            stack is None
            or (stack.deleted_at is not None and not deleted)
            or (project is not None and not project.reaches(stack))
            or stack.name != name
        ):
            raise StackNotFoundError(f"{name}/{stack_id}")
        return stack

    def hidden_values(self, stack: StackRecord) -> HiddenValues:
        """The stack's hidden parameters and their values (given and resolved; a nested
        stack's owners' too), for masking what is shown of the stack."""
        return self.engine.load_runtime(stack).hidden_values()

    def stack_parameters(self, stack: StackRecord) -> dict[str, Any]:
        """Every parameter's value as ``stack show`` gives it: hidden ones as '******'."""
        template, _, params = self.engine.conditioned_template(stack)
        if template.version.kind != "cfn":
            # Only a CFN stack's pseudo parameters need a runtime (with the resources).
            return shown_parameters(template, params, None)
        runtime = self.engine.load_runtime(stack)
        return shown_parameters(runtime.template, runtime.params, runtime)

    def list_stacks(
        self, nested: bool = False, hidden: bool = False, project: Project | None = None, deleted: bool = False, all_projects: bool = False
    ) -> list[StackRecord]:
        """Top-level stacks; with ``nested``, nested stacks too (their parent is owner_id).
        Stacks with a hidden tag (``hidden_stack_tags``) only with ``hidden``, as in Heat.
        With ``project``, only its stacks; every project's only for an admin that asks
        (``all_projects``, Heat's ``global_tenant``)."""
        hidden_tags = () if hidden else self.settings.hidden_stack_tags
        project_id = None if project is None or (all_projects and project.admin) else project.id
        if project_id == "":
            return []  # nobody's project (see Project.reaches)
        return self.store.list_stacks(include_deleted=deleted, include_nested=nested, hidden_tags=hidden_tags, project_id=project_id)

    def list_resources(self, name_or_id: str, sealed: bool = True) -> list[ResourceRecord]:
        """A stack's current resources; without ``sealed``, their sealed columns are None
        (``Store.list_resources``)."""
        stack = self.get_stack(name_or_id)
        return [r for r in self.store.list_resources(stack.id, sealed=sealed) if r.current]

    def list_resources_nested(self, name_or_id: str, depth: int) -> list[tuple[StackRecord, ResourceRecord]]:
        """A stack's resources and, ``depth`` levels down, its nested stacks' (each with
        the stack it belongs to), as ``openstack stack resource list --nested-depth``."""
        stacks = self._stacks_down(self.get_stack(name_or_id), depth)
        return [(stack, record) for stack in stacks for record in self.store.list_resources(stack.id) if record.current]

    def required_by(self, stack: StackRecord) -> dict[str, list[str]]:
        """Per resource of the stack's template, the resources that need it (Heat's
        ``required_by``)."""
        resources = self.engine.conditioned_template(stack)[0].resources
        needed: dict[str, list[str]] = {name: [] for name in resources}
        for name, definition in resources.items():
            for required in sorted(definition.required_resource_names()):
                if required in needed:
                    needed[required].append(name)
        return needed

    def resource_attributes(self, stack: StackRecord, resource_name: str) -> dict[str, Any]:
        """Every attribute of a current resource as it resolves now; None where it does
        not (yet), as Heat's resource show gives them."""
        from stoker.sdk.properties import contains_unresolved

        record = self.current_resource(stack, resource_name)
        runtime = self.engine.load_runtime(stack)
        values: dict[str, Any] = {}
        try:
            plugin_class = runtime.plugin_class(record.type, record.name)
            names = sorted(plugin_class.all_attributes_schema())
        except Exception:  # noqa: BLE001 - an unknown type (plugin gone) has no attributes to show
            return values
        # Attributes that give a secret itself (a Barbican secret's payload): a template
        # may ask for them (get_attr), resource show masks them.
        sensitive = set(getattr(plugin_class, "sensitive_attributes", ()))
        for name in names:
            if name == "show":
                continue
            if name in sensitive:
                values[name] = MASK
                continue
            try:
                value = runtime.resource_attribute(resource_name, name, ())
            except Exception:  # noqa: BLE001 - Heat shows an attribute that fails as None
                value = None
            values[name] = None if contains_unresolved(value) else value
        # An attribute may echo a property fed from a hidden parameter (OS::Heat::Value's
        # ``value``): Heat shows it in clear; stoker masks it as it masks the parameter.
        return self.hidden_values(stack).data(values)

    def resource_metadata(self, stack: StackRecord, resource_name: str) -> dict[str, Any]:
        """A current resource's metadata as users see it: the template's, or for a
        server that software deployments target, what its agent reads (``live_metadata``:
        the deployments and where to poll), with what hidden parameters produced masked
        (the agent's own URL, ``metadata_by_capability``, gives the values)."""
        metadata = self._metadata(stack, self.current_resource(stack, resource_name))
        return self.hidden_values(stack).data(self._masked_deployments(metadata))

    def _masked_deployments(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """``metadata`` with each deployment's config as users see it (a deployment of
        another stack may target the server: each config keeps its own masked copy)."""
        from stoker.engine.software_configs import present

        deployments = metadata.get("deployments")
        if not isinstance(deployments, list):
            return metadata
        shown = []
        for config in deployments:
            record = self.store.software_configs.get_software_config(config["id"]) if isinstance(config, Mapping) and config.get("id") else None
            shown.append(present(record, masked=True) if record is not None and record.shown is not None else config)
        return {**metadata, "deployments": shown}

    def _metadata(self, stack: StackRecord, record: ResourceRecord) -> dict[str, Any]:
        runtime = self.engine.load_runtime(stack)
        live = getattr(runtime.plugin_class(record.type, record.name), "live_metadata", None)
        if live is None or record.action in ("INIT", "DELETE") and record.physical_resource_id is None:
            return dict((record.definition or {}).get("metadata") or {})
        cached = record.id in runtime.instances
        try:
            instance: Any = runtime.instance(record)  # live_metadata is its class's own, as just read
            return instance.live_metadata()
        finally:
            if not cached:
                runtime.release(record)

    def metadata_by_capability(self, credential_id: str, secret: str) -> dict[str, Any]:
        """The metadata of the server whose polling URL (``/v1/server_metadata/{id}
        ?secret=...``) this is, as a Swift temp URL would serve it to the agent."""
        from stoker.engine import signals

        credential = signals.credential_by_url(self.store, credential_id, secret, purposes=(signals.METADATA,))
        stack, record = signals.credential_resource(self.store, credential, "The URL is not valid: its server is gone")
        return self._metadata(stack, record)

    def keypair_holder(self, access: str) -> tuple[StackRecord, ResourceRecord, str] | None:
        """The live stack and server whose CFN keypair has the access key ``access``,
        with the keypair's secret (which signatures are computed with), or None."""
        from stoker.engine import signals
        from stoker.resources.openstack.keystone.stack_user import SECRET_KEY

        credential = signals.keypair_credential(self.store, access)
        if credential is None:
            return None
        try:
            stack, record = signals.credential_resource(self.store, credential, "")
        except signals.SignalCredentialError:
            return None
        data, _redacted = self.store.sealer.open(record.data)
        secret = data.get(SECRET_KEY)
        if not isinstance(secret, str) or not signals.credential_matches(credential, secret):
            return None
        return stack, record, secret

    def agent_metadata(self, stack: StackRecord, record: ResourceRecord) -> dict[str, Any]:
        """A resource's metadata as its agent reads it (values of hidden parameters in
        clear, as ``metadata_by_capability``)."""
        return self._metadata(stack, record)

    def list_events(self, name_or_id: str, resource_name: str | None = None, nested_depth: int = 0) -> list[EventRecord]:
        """A stack's events, oldest first; with ``nested_depth``, its nested stacks'
        events that many levels down, interleaved in the order they were recorded."""
        stack = self.get_stack(name_or_id)
        if not nested_depth:
            return self.store.events.list_events(stack.id, resource_name)
        events = [event for current in self._stacks_down(stack, nested_depth) for event in self.store.events.list_events(current.id, resource_name)]
        return sorted(events, key=lambda event: event.id or 0)

    def _stacks_down(self, stack: StackRecord, depth: int) -> list[StackRecord]:
        """A stack and its live nested stacks ``depth`` levels down, level by level."""
        found, level = [], [stack]
        for _ in range(depth + 1):
            if not level:
                break  # a huge depth costs nothing past the deepest stack
            found.extend(level)
            level = [child for current in level for child in self.store.child_stacks(current.id)]
        return found

    def outputs(self, name_or_id: str, names: list[str] | None = None) -> list[dict[str, Any]]:
        stack = self.get_stack(name_or_id)
        runtime = self.engine.load_runtime(stack)
        return resolve_outputs(runtime, names)

    def environment_of(self, name_or_id: str) -> dict[str, Any]:
        """The stack's environment as Heat shows it, with the parameters the request gave
        folded into its ``parameters`` (on top), hidden parameters' values masked."""
        stack = self.get_stack(name_or_id)
        environment = dict(self.store.get_template(stack.raw_template_id).environment or {})
        if stack.parameters:
            environment["parameters"] = {**(environment.get("parameters") or {}), **stack.parameters}
        return self.hidden_values(stack).environment(environment)

    def files_of(self, stack: StackRecord) -> dict[str, str]:
        """The files the stack's request sent, as users see them: an environment file's
        values for hidden parameters masked (masking.HiddenValues.files)."""
        from stoker.template import loader

        files = self.store.get_template(stack.raw_template_id).files
        return self.hidden_values(stack).files(files, lambda text: loader.parse_environment(text).data)

    def snapshot_shown(self, stack: StackRecord, data: Any) -> Any:
        """A snapshot's data as shown (restore reads the stored data, unmasked)."""
        return self.hidden_values(stack).stack_data(data) if data is not None else None

    def template_of(self, name_or_id: str) -> dict[str, Any]:
        """The stack's template as shown: a hidden value in it masked (a nested stack
        that a group made holds its members' resolved properties; a default)."""
        stack = self.get_stack(name_or_id)
        return self.hidden_values(stack).data(self.store.get_template(stack.raw_template_id).template)

    def description_of(self, name_or_id: str) -> str:
        """The stack template's description (HOT ``description``, CFN ``Description``)."""
        stack = self.get_stack(name_or_id)
        data = self.store.get_template(stack.raw_template_id).template
        return str(data.get("description") or data.get("Description") or "")


def shown_parameters(template: Template, params: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """A stack's parameters as Heat shows them (pseudo parameters included; a CFN
    stack's are the AWS:: ones), hidden ones as '******'. ``context`` resolves the
    pseudo parameters (a runtime, or a preview's context)."""
    values = HiddenValues.of(template.parameters).parameters(params)
    if template.version.kind == "cfn":
        # A CFN stack shows its AWS:: pseudo parameters instead of the OS:: ones (Heat).
        from stoker.template.functions.cfn import AWS_PSEUDO, cfn_parameter

        values = {name: value for name, value in values.items() if not name.startswith("OS::")}
        values.update({name: cfn_parameter(name, context) for name in AWS_PSEUDO})
    return values
