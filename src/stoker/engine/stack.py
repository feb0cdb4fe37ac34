"""A stack at run time: its template, parameter values and resource records, and the
resolution context intrinsic functions use.

Owns: building plugin instances for records, resolving get_param/get_resource/get_attr
against live records, the per-resource attribute cache, and the hooks a plugin uses to
persist its physical id and data. It does not decide what to do: the action modules do.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from stoker.engine.events import resource_event
from stoker.engine.implicit import RULES, implicit_dependencies
from stoker.environment.environment import Environment
from stoker.environment.registry import ResourceRegistry
from stoker.graph import Graph
from stoker.identifiers import new_id
from stoker.masking import HiddenValues
from stoker.sdk.attributes import select_path
from stoker.sdk.clients import Clients
from stoker.sdk.exceptions import InvalidTemplateAttribute, StokerError
from stoker.sdk.properties import UNRESOLVED
from stoker.sdk.resource import Resource, overrides_fn_get_att
from stoker.sdk.stack_resource import StackResource
from stoker.store import ResourceRecord, StackRecord, Store
from stoker.template import parameters as parameters_module
from stoker.template.definitions import ResourceDefinition
from stoker.template.errors import TemplateError, TemplateErrors
from stoker.template.functions.base import resolve
from stoker.template.hot import Template

LOG = logging.getLogger(__name__)


def stored_data(store: Store | None, resource: Resource) -> dict[str, Any]:
    """A plugin's data as its record stores it: JSON values (anything else as its string
    form), the redacted ones sealed (store.sealing)."""
    data = json.loads(json.dumps(resource.data(), default=str))
    return store.sealer.seal(data, resource._redacted) if store is not None else data


def dependency_graph(definitions: Mapping[str, ResourceDefinition], implicit: Mapping[str, set[str]] | None = None) -> Graph[str]:
    """The resources' graph: references and depends_on, then the ``implicit`` edges
    (``engine.implicit``). An implicit edge that closes a cycle is taken out again: it is
    the engine's inference, and the template the user wrote has no cycle. One cycle
    search when there is none (the usual case), so the cost stays linear in the edges."""
    graph: Graph[str] = Graph()
    for name, definition in definitions.items():
        graph.add_node(name)
        for need in definition.required_resource_names():
            if need in definitions:
                graph.add_edge(name, need)
    inferred = {(name, need) for name, needs in (implicit or {}).items() for need in needs if need not in graph.requires(name)}
    for name, need in inferred:
        graph.add_edge(name, need)
    while inferred:
        cycle = graph.find_cycle()
        if cycle is None:
            break
        edge = next((pair for pair in zip(cycle, cycle[1:], strict=False) if pair in inferred), None)
        if edge is None:
            break  # the template's own cycle: validation reports it
        graph.remove_edge(*edge)
        inferred.discard(edge)
    return graph


def referenced_attributes(template: Template) -> dict[str, set[str | None]]:
    """resource name -> attributes other parts of the template read (None = all)."""
    found: dict[str, set[str | None]] = {}
    for definition in template.resources.values():
        for name, attribute in definition.referenced_attributes():
            found.setdefault(name, set()).add(attribute)
    for output in template.outputs.values():
        for name, attribute in output.referenced_attributes():
            found.setdefault(name, set()).add(attribute)
    return found


def parameter_values(
    template: Template,
    environment: Environment,
    user: Mapping[str, Any],
    stack_name: str,
    stack_id: str,
    project_id: str = "",
    registry: ResourceRegistry | None = None,
    require_values: bool = True,
    stack: Any = None,
) -> dict[str, Any]:
    """The parameters' values, checked against their constraints (custom ones through
    ``registry``; a lookup in the cloud acts for ``stack``, the stack they are for)."""
    pseudo = {
        parameters_module.STACK_NAME: stack_name,
        parameters_module.STACK_ID: stack_id,
        parameters_module.PROJECT_ID: project_id,
    }
    context = _ConstraintLookup(registry, stack) if registry is not None else None
    values, errors = parameters_module.resolve_values(
        template.parameters, {**environment.parameters, **user}, environment.parameter_defaults, pseudo, context, require_values
    )
    if errors:
        for error in errors:
            if error.location is None:
                error.location = template.document.locate(error.path)
        raise TemplateErrors(errors)
    return values


class _ConstraintLookup:
    """Custom constraints of parameters come from the registry (constraint_mapping());
    a constraint that looks in the cloud acts for ``stack`` (a nested stack validated
    by its parent's job, where no request's user is at hand, acts with the tree's trust)."""

    def __init__(self, registry: ResourceRegistry, stack: Any = None):
        self.registry = registry
        self.stack = stack

    def custom_constraint(self, name: str) -> Any:
        return self.registry.constraints.get(name)


class _Hooks:
    """EngineHooks for one record, called from handler threads.

    The physical id is committed before ``resource_id_set`` returns. Data a plugin sets
    is kept here and written with the next write of the record that the engine waits
    on (the physical id, the handler token before polling, or the final state), so it
    is durable before the engine waits on anything, at no cost of its own.
    """

    __slots__ = ("store", "record", "clock", "clients", "pending_data", "nested_stacks", "runtime")

    def __init__(self, store: Store, record: ResourceRecord, clock: Any, clients: Clients, nested_stacks: Any = None, runtime: Any = None):
        self.store = store
        self.record = record
        self.clock = clock
        self.clients = clients
        self.pending_data: dict[str, Any] | None = None
        # The engine's NestedStacks (sdk.stack_resource), for StackResource plugins.
        self.nested_stacks = nested_stacks
        # The StackRuntime, for ``signals`` (URLs, the stack's other resources).
        self.runtime = runtime

    def resource_id_set(self, resource: Resource, physical_id: str | None) -> None:
        fields: dict[str, Any] = {"physical_resource_id": physical_id}
        if self.pending_data is not None:
            fields["data"] = self.pending_data
        self.store.update_resource(self.record, **fields)
        self.record.physical_resource_id = physical_id
        self.pending_data = None

    def data_changed(self, resource: Resource) -> None:
        self.pending_data = stored_data(self.store, resource)
        self.record.data = self.pending_data
        if self.record.handler_token is not None:
            # Polling (check_*_complete): the next write may be the final state, long
            # after; what a check records (a batch done) must survive a crash now.
            self.store.update_resource(self.record, data=self.pending_data)
            self.pending_data = None

    def take_pending(self) -> dict[str, Any] | None:
        """Data set since the last write, for the engine to write now (set in a hook
        that no state change follows: prepare_for_replace, restore_prev_rsrc)."""
        pending, self.pending_data = self.pending_data, None
        return pending

    def client_plugin(self, resource: Resource, name: str | None) -> Any:
        return self.clients.client_plugin(name)

    def warn(self, resource: Resource, message: str) -> None:
        action = resource.action if resource.action != Resource.INIT else self.record.action
        if self.runtime is not None:
            message = self.runtime.hidden_values().text(message)
        event = resource_event(self.record, action, "IN_PROGRESS", f"Warning: {message}")
        self.store.events.add_event(event)
        # Shown live too, as the action's state changes are (an embedded command's output).
        for listener in self.runtime.listeners if self.runtime is not None else ():
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a display problem must not break the action
                LOG.exception("event listener failed")

    def software_configs(self, resource: Resource) -> Any:
        """The stored software configs (sdk.software_config.SoftwareConfigs), for
        OS::Heat::SoftwareConfig and its kin; new ones are made by the stack's project."""
        from stoker.engine.software_configs import StoredSoftwareConfigs

        return StoredSoftwareConfigs(self.store, stack_id=self.record.stack_id, hidden=self._hidden())

    def software_deployments(self, resource: Resource) -> Any:
        """The stored software deployments (sdk.software_config.SoftwareDeployments), for
        OS::Heat::SoftwareDeployment and its kin; new ones are made by the stack's project."""
        from stoker.engine.software_deployments import StoredSoftwareDeployments

        return StoredSoftwareDeployments(self.store, stack_id=self.record.stack_id, hidden=self._hidden())

    def _hidden(self) -> HiddenValues | None:
        """What the configs and deployments this resource makes keep masked for users."""
        return self.runtime.hidden_values() if self.runtime is not None else None

    def signals(self, resource: Resource) -> Any:
        """This resource's signals and signal credentials (engine.signals.ResourceSignals)."""
        from stoker.engine.signals import ResourceSignals

        return ResourceSignals(self.store, self.record.stack_id, self.record.uuid, self.runtime)

    def now(self) -> float:
        return self.clock.now()


class _ReadOnlyHooks:
    """Hooks of a runtime without a store (a preview): reads only; nothing is persisted.
    With ``stored`` (the hooks of a runtime that reads a store it must not write: an
    import's check), its resources read the stored software configs and deployments."""

    __slots__ = ("clients", "nested_stacks", "software_configs", "software_deployments")

    def __init__(self, clients: Clients, nested_stacks: Any, stored: _Hooks | None = None):
        self.clients = clients
        self.nested_stacks = nested_stacks
        self.software_configs = stored.software_configs if stored is not None else None
        self.software_deployments = stored.software_deployments if stored is not None else None

    def resource_id_set(self, resource: Resource, physical_id: str | None) -> None:
        raise RuntimeError("a preview records nothing")

    def data_changed(self, resource: Resource) -> None:
        pass  # a plugin may note things while deciding; a preview keeps none of it

    def client_plugin(self, resource: Resource, name: str | None) -> Any:
        return self.clients.client_plugin(name)

    def signals(self, resource: Resource) -> Any:
        """Signals read-only: a preview has no store, so none are seen."""
        from stoker.engine.signals import ResourceSignals

        return ResourceSignals(None, resource.stack.id, resource.uuid, read_only=True)

    def now(self) -> float:
        return time.time()


class StackRuntime:
    """Implements ``ResolutionContext`` and ``StackInfo`` for one stack action."""

    def __init__(
        self,
        stack: StackRecord,
        template: Template,
        environment: Environment,
        params: Mapping[str, Any],
        registry: ResourceRegistry,
        store: Store | None,
        clock: Any,
        records: Iterable[ResourceRecord] = (),
    ):
        self.stack = stack
        self.id = stack.id
        self.name = stack.name
        self.template = template
        self.environment = environment
        self.params = dict(params)
        self.registry = registry
        self.store = store
        # Opens the secret values of resource data (a preview has no store but reads them).
        self.sealer = store.sealer if store is not None else None
        self.clock = clock
        self.aliases = environment.type_aliases()
        # plugin class -> the name a record keeps of it (``implementation``)
        self._implementations: dict[type, str] = {}
        # One set of client plugins per stack action, shared by its resources.
        self.clients = Clients(registry.clients, self, settings=registry.client_settings)
        self.records: list[ResourceRecord] = list(records)
        # name -> the record that currently stands for that name
        self.current: dict[str, ResourceRecord] = {r.name: r for r in self.records if r.current}
        # record id -> its plugin object, while the record's action runs (see release); a
        # preview's record not stored yet (nested_preview) is kept under None
        self.instances: dict[int | None, Resource] = {}
        # record id -> attributes computed by the plugin (stored ones are read from the record)
        self.attribute_cache: dict[int | None, dict[str, Any]] = {}
        self.referenced = referenced_attributes(template)
        # The engine's side of nested stacks (engine.nested.ChildStacks), set by the engine.
        self.nested: Any = None
        # Where agents reach the API (signal URLs; Settings.public_url), set by the engine.
        self.public_url = ""
        # A store this runtime reads and never writes (an import's check, whose stack is
        # not stored yet): its resources read configs and deployments from it.
        self.read_store: Store | None = None
        # The running action's event listeners (set by the engine), for the warnings a
        # plugin gives mid-action (Resource.warn).
        self.listeners: list[Any] = []
        self._hidden: HiddenValues | None = None
        # The tree's stack user project found on its root (stack_user_project_id).
        self._tree_user_project: str | None = None

    def hidden_values(self) -> HiddenValues:
        """The stack's hidden parameters and their values (given, resolved and from the
        environment), and for a nested stack the values of its owners' (a group's
        members get them as literal properties): what is shown of the stack and its
        events masks them, and software configs and deployments its resources make keep
        a copy for users with them masked."""
        if self._hidden is None:
            environment = self.environment
            hidden = HiddenValues.of(
                self.template.parameters, self.stack.parameters, self.params, environment.parameters, environment.parameter_defaults
            )
            if self.stack.owner_id and self.nested is not None:
                hidden = hidden.with_values_of(self.nested.owner_hidden_values())
            self._hidden = hidden
        return self._hidden

    # -- the stack users' project (Heat's stack_user_project_id) ------------------------

    @property
    def stack_user_project_id(self) -> str | None:
        """The stack user domain's project the tree's users live in: one per tree, kept
        on its root (a nested stack's users share it, as Heat's nested stacks share their
        parent's) and on each stack that made users in it. Read from the store until
        found, since a sibling's job may have just made it. None: no user made yet, or
        none in a stack user domain."""
        if self.stack.stack_user_project_id is not None:
            return self.stack.stack_user_project_id
        if self._tree_user_project is None and self.store is not None:
            from stoker.engine.trees import root_of

            stored = self.store.get_stack(self.id)
            self._tree_user_project = root_of(self.store, stored if stored is not None else self.stack).stack_user_project_id
        return self._tree_user_project

    def set_stack_user_project_id(self, project_id: str) -> None:
        """Record ``project_id`` as the tree's stack user project, on the root and on this
        stack, committed before it returns (Heat's ``set_stack_user_project_id``): a
        create cut short after this finds the project by its name again, the root's delete
        deletes it, and the API lets the project's users reach this stack. Nothing is
        written when both have it already."""
        if self.stack.stack_user_project_id == project_id:
            return
        if self.store is None:
            raise StokerError("stack users are not made here: nothing may be recorded while validating or previewing")
        from stoker.engine.trees import root_of

        root = root_of(self.store, self.store.get_stack(self.id) or self.stack)
        self.store.set_stack_user_project(dict.fromkeys(stack.id for stack in (root, self.stack) if stack.stack_user_project_id != project_id), project_id)
        self.stack.stack_user_project_id = self._tree_user_project = project_id

    @property
    def stack_user_project_name(self) -> str:
        """The name of the tree's stack user project, Heat's ``<project id>-<stack id>``
        (at most 64 characters) with the root's id: unique in the domain, so found again."""
        if self.store is None or self.stack.owner_id is None:
            root_id = self.id
        else:
            from stoker.engine.trees import root_of

            root_id = root_of(self.store, self.stack).id
        return f"{self.stack.project_id}-{root_id}"[:64]

    # -- plugin instances ------------------------------------------------------

    def plugin_class(self, type_name: str, resource_name: str | None = None) -> type[Resource]:
        """The class of a resource of ``type_name``; with ``resource_name``, the
        environment's entries for that resource (``resources.<name>``) count too."""
        return self.registry.get_class(type_name, self.aliases, self.template.files, resource_name)

    # A record's class is the one it was made (or last updated) with: the environment may
    # map its type to another since, and only an update makes the change (by replacing).
    IMPLEMENTATION_KEY = "implementation"
    TEMPLATE_IMPLEMENTATION = "template"

    def implementation(self, cls: type[Resource]) -> str:
        """What a record keeps of its class: ``template`` for a provider template (any
        template: Heat's TemplateResource), else the type the class is registered as."""
        from stoker.resources.heat.template_resource import TemplateResource

        if issubclass(cls, TemplateResource):
            return self.TEMPLATE_IMPLEMENTATION
        known = self._implementations.get(cls)
        if known is None:
            names = sorted(name for name, registered in self.registry.types.items() if registered is cls)
            known = self._implementations[cls] = names[0] if names else f"{cls.__module__}.{cls.__qualname__}"
        return known

    def render(self, definition: ResourceDefinition) -> dict[str, Any]:
        """A definition as a record keeps it, with the class it is made with."""
        rendered = definition.render()
        try:
            rendered[self.IMPLEMENTATION_KEY] = self.implementation(self.plugin_class(definition.resource_type, definition.name))
        except (LookupError, StokerError):
            pass  # reported where the class is needed
        return rendered

    def _kept(self, record: ResourceRecord) -> str | None:
        """The implementation the record keeps (None for a record older than that)."""
        kept = (record.definition or {}).get(self.IMPLEMENTATION_KEY)
        return kept if isinstance(kept, str) else None

    def _kept_class(self, record: ResourceRecord) -> type[Resource] | None:
        """The plugin class the record was made with; None when it is not known (a
        provider template, or a record older than the keeping of its class)."""
        kept = self._kept(record)
        return self.registry.types.get(kept) if kept is not None else None

    def _record_class(self, record: ResourceRecord, definition: ResourceDefinition) -> type[Resource]:
        current = self.plugin_class(definition.resource_type, record.name) if definition.resource_type != record.type else None
        if current is not None:
            return current
        try:
            current = self.plugin_class(record.type, record.name)
        except (LookupError, StokerError):
            kept = self._kept_class(record)
            if kept is None:
                raise
            return kept  # a type no longer mapped: what is left of it is deleted as it was made
        if not record.current or record.name not in self.template.resources:
            kept = self._kept_class(record)
            if kept is not None:
                return kept  # replaced or removed: it goes as it was made
        return current

    def remapped(self, record: ResourceRecord) -> tuple[str, str] | None:
        """(old, new) implementation when the environment now maps the record's type to
        another class (Heat replaces such a resource: ``type(existing) is not
        type(new)``). None when the class is the same, both are provider templates
        (Heat's TemplateResource either way: the nested stack is updated to the new
        template), the new class is the old one's substitute (seed 000), or the record
        predates the keeping of its class."""
        kept = self._kept(record)
        if kept is None:
            return None
        try:
            new_class = self.plugin_class(record.type, record.name)
        except (LookupError, StokerError):
            return None
        now = self.implementation(new_class)
        if now == kept:
            return None
        old_class = self.registry.types.get(kept)
        if old_class is new_class:
            return None
        status = getattr(old_class, "support_status", None)
        if old_class is not None and status is not None and status.is_substituted(new_class):
            return None
        return kept, now

    def resolve(self, value: Any) -> Any:
        return resolve(value, self)

    def graph(self, definitions: Mapping[str, ResourceDefinition] | None = None, update: bool = False) -> Graph[str]:
        """The dependency graph of ``definitions`` (default: this template's), implicit
        dependencies included, and with ``update`` the order updates follow
        (``Resource.update_dependencies``)."""
        definitions = self.template.resources if definitions is None else definitions
        rules = RULES if update else RULES[:1]
        return dependency_graph(definitions, implicit_dependencies(definitions, self.plugin_class, self.parameter, rules))

    def _hooks(self, record: ResourceRecord) -> Any:
        if self.store is not None:
            return _Hooks(self.store, record, self.clock, self.clients, self.nested, self)
        stored = None if self.read_store is None else _Hooks(self.read_store, record, self.clock, self.clients, self.nested, self)
        return _ReadOnlyHooks(self.clients, self.nested, stored)

    def instance(self, record: ResourceRecord, definition: ResourceDefinition | None = None, fresh: bool = False) -> Resource:
        """The plugin object for a record (one per record and action)."""
        if not fresh and record.id in self.instances:
            return self.instances[record.id]
        if definition is None:
            definition = self.template.resources.get(record.name)
            if definition is None or definition.resource_type != record.type:
                definition = ResourceDefinition(name=record.name, resource_type=record.type, properties_data=record.properties or {})
        cls = self._record_class(record, definition)
        instance = cls(
            record.name,
            definition.bind(self.resolve),
            self,
            uuid=record.uuid,
            hooks=self._hooks(record),
            context=self,
        )
        instance.resource_id = record.physical_resource_id
        if self.sealer is not None:
            instance._data, instance._redacted = self.sealer.open(record.data)
        else:
            instance._data = dict(record.data or {})
        instance.action, instance.status = record.action, record.status
        self.instances[record.id] = instance
        return instance

    def resource_by_refid(self, reference: Any) -> Resource | None:
        """The plugin object of the current resource whose reference is ``reference``
        (Heat's ``resource_by_refid``: a scaling policy finds its group by it)."""
        for record in self.current.values():
            if record.physical_resource_id is not None and self.instance(record).get_reference_id() == reference:
                return self.instance(record)
        return None

    def release(self, record: ResourceRecord) -> None:
        """Forget the plugin object of a record whose action has ended, so a stack action
        holds plugin objects only for its resources in flight (at 100,000 resources,
        keeping them all cost gigabytes). Dependents need none: the attributes other
        resources and outputs read were stored with the record's final state, and a
        reference or another attribute rebuilds the object from the record on demand."""
        self.instances.pop(record.id, None)
        self.attribute_cache.pop(record.id, None)

    def new_record(self, definition: ResourceDefinition, replaces: int | None = None) -> ResourceRecord:
        return ResourceRecord(
            id=None,
            uuid=new_id(),
            stack_id=self.id,
            name=definition.name,
            type=definition.resource_type,
            action="INIT",
            status="COMPLETE",
            definition=self.render(definition),
            replaces=replaces,
        )

    def client(self, name: str) -> Any:
        """A client for custom constraints that look things up (BaseCustomConstraint)."""
        return self.clients.client(name)

    def custom_constraint(self, name: str) -> Any:
        """The named constraint plugins registered (constraint_mapping())."""
        return self.registry.constraints.get(name)

    # -- ResolutionContext -----------------------------------------------------

    def parameter(self, name: str) -> Any:
        try:
            return self.params[name]
        except KeyError:
            raise TemplateError(f"The Parameter ({name}) was not provided.", path=f"parameters.{name}")

    def has_resource(self, name: str) -> bool:
        return name in self.current

    def _created(self, name: str) -> ResourceRecord | None:
        record = self.current.get(name)
        if record is None:
            raise TemplateError(f'The specified reference "{name}" is not a resource in the template', path=f"resources.{name}")
        if record.action == "INIT" or (record.action == "CREATE" and record.status != "COMPLETE" and record.physical_resource_id is None):
            return None
        return record

    def resource_reference(self, name: str) -> Any:
        record = self._created(name)
        if record is None:
            return UNRESOLVED
        return self.instance(record).get_reference_id()

    def compute_attribute(self, record: ResourceRecord, attribute: str) -> Any:
        stored = record.attributes
        if stored and attribute in stored:
            return stored[attribute]
        cache = self.attribute_cache.setdefault(record.id, {})
        if attribute not in cache:
            try:
                cache[attribute] = self.instance(record).FnGetAtt(attribute)
            except InvalidTemplateAttribute as error:
                raise error.for_resource(record.name)  # a plugin's own FnGetAtt, the guide's form
        return cache[attribute]

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        record = self._created(name)
        if record is None:
            return UNRESOLVED
        if path and issubclass(self.plugin_class(record.type, record.name), StackResource):
            # A nested stack's path may name members' attributes (ResourceGroup's
            # ``attributes``, ``resource.<n>``): the plugin applies it, not select_path.
            instance = self.instance(record)
            assert isinstance(instance, StackResource)  # its class is, as just checked
            return instance.attribute_with_path(attribute, tuple(path))
        if path and overrides_fn_get_att(self.plugin_class(record.type, record.name)):
            # A plugin's own FnGetAtt resolves the path too (seed 001), as Heat asks it.
            try:
                return self.instance(record).FnGetAtt(attribute, *path)
            except InvalidTemplateAttribute as error:
                raise error.for_resource(record.name)
        return select_path(self.compute_attribute(record, attribute), path)

    def resource_attributes(self, name: str) -> Any:
        record = self._created(name)
        if record is None:
            return UNRESOLVED
        cls = self.plugin_class(record.type, record.name)
        return {key: self.compute_attribute(record, key) for key in cls.attributes_schema}

    def attributes_to_store(self, record: ResourceRecord) -> dict[str, Any]:
        """Resolve the attributes others read, to persist with the COMPLETE state."""
        self.attribute_cache.pop(record.id, None)
        wanted = self.referenced.get(record.name, set())
        if not wanted:
            return {}
        cls = self.plugin_class(record.type, record.name)
        names = set(cls.attributes_schema) if None in wanted else {w for w in wanted if w is not None}
        # cache_none attributes (a volume's attachments, a status) are read live each time.
        schema = cls.all_attributes_schema()
        names = {name for name in names if name not in schema or schema[name].cache_mode != "cache_none"}
        instance = self.instance(record)
        values = {}
        for attribute in sorted(names):
            try:
                values[attribute] = instance.FnGetAtt(attribute)
            except InvalidTemplateAttribute:
                continue
            except StokerError:
                # Not stored: what reads it computes it again and gets the error (Heat
                # stores the exception); the resource itself is not failed by it.
                continue
        return values
