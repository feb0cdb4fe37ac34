"""The ``Resource`` base class every plugin extends (seed 001, "Heat 资源基础类").

A plugin overrides the lifecycle handlers (``handle_<action>`` and optionally
``check_<action>_complete``), declares ``properties_schema`` and ``attributes_schema`` and
resolves attributes in ``_resolve_attribute``. Everything else (state, events, the store,
ordering, polling) belongs to the engine, which calls the handlers through one explicit
table (``stoker.engine.handlers``) and never through string-built method names.

This class must stay small: helpers a plugin needs, the default handlers the guide
documents, nothing of the engine's own bookkeeping.
"""

from __future__ import annotations

import base64
import functools
import inspect
import logging
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from stoker.sdk import attributes as attributes_module
from stoker.sdk import live_state, properties_group
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import (
    EntityNotFound,
    InvalidTemplateAttribute,
    PropertyErrors,
    UpdateReplace,
)
from stoker.sdk.properties import Properties, Schema
from stoker.sdk.support import SupportStatus
from stoker.sdk.translation import apply_rules, resource_rules

__all__ = ["EngineHooks", "Resource", "StackInfo", "physical_resource_name"]

if TYPE_CHECKING:
    from stoker.sdk.signals import Signals
    from stoker.template.definitions import ResourceDefinition

LOG = logging.getLogger(__name__)


def physical_resource_name(stack_name: str, resource_name: str, resource_uuid: str) -> str:
    """``<stack>-<resource>-<12 characters from the resource's uuid>``: stable across
    restarts, so a plugin can find a physical resource whose id was never recorded."""
    short = base64.b32encode(bytes.fromhex(resource_uuid.replace("-", "")[-16:] or "00")).decode()
    return f"{stack_name}-{resource_name}-{short.lower().rstrip('=')[:12]}"


def overrides_fn_get_att(cls: type) -> bool:
    """Whether a plugin class resolves attributes with its own ``FnGetAtt`` (seed 001),
    which the engine then asks with the path and template validation does not second-guess."""
    return getattr(cls, "FnGetAtt", Resource.FnGetAtt) is not Resource.FnGetAtt


class EngineHooks(Protocol):
    """What a resource may ask of the engine while a handler runs (in a worker thread)."""

    def resource_id_set(self, resource: Resource, physical_id: str | None) -> None: ...

    def data_changed(self, resource: Resource) -> None: ...

    def client_plugin(self, resource: Resource, name: str | None) -> Any:
        """The client plugin (``stoker.sdk.clients.ClientPlugin``) registered as ``name``."""
        ...

    def now(self) -> float:
        """Wall-clock seconds on the engine's clock (a fake clock in tests)."""
        ...

    def signals(self, resource: Resource) -> Signals | None:
        """The resource's signals and signal credentials (``stoker.sdk.signals.Signals``);
        None where no engine keeps them."""
        ...


class StackInfo(Protocol):
    """The read-only view of the owning stack a plugin gets as ``self.stack``."""

    name: str
    id: str


class _NoHooks:
    """Hooks for a resource used outside the engine (validation, docs, tests)."""

    def resource_id_set(self, resource: Resource, physical_id: str | None) -> None:
        pass

    def data_changed(self, resource: Resource) -> None:
        pass

    def client_plugin(self, resource: Resource, name: str | None) -> Any:
        from stoker.sdk.exceptions import UnknownClientPluginError

        raise UnknownClientPluginError(name or "", [])

    def now(self) -> float:
        return time.time()

    def signals(self, resource: Resource) -> None:
        return None


class _DeclarationHooks(_NoHooks):
    """The hooks of an instance that only declares (``declared_properties_groups``): a
    client plugin is its name."""

    def client_plugin(self, resource: Resource, name: str | None) -> Any:
        return name


class Resource:
    """Base of every resource plugin."""

    ACTIONS = (INIT, CREATE, DELETE, UPDATE, ROLLBACK, SUSPEND, RESUME, ADOPT, SNAPSHOT, CHECK) = (
        "INIT",
        "CREATE",
        "DELETE",
        "UPDATE",
        "ROLLBACK",
        "SUSPEND",
        "RESUME",
        "ADOPT",
        "SNAPSHOT",
        "CHECK",
    )
    STATUSES = (IN_PROGRESS, FAILED, COMPLETE) = ("IN_PROGRESS", "FAILED", "COMPLETE")

    properties_schema: ClassVar[Mapping[str, Schema]] = {}
    attributes_schema: ClassVar[Mapping[str, attributes_module.Schema]] = {}
    properties_groups_schema: ClassVar[list[Any]] = []
    support_status: ClassVar[SupportStatus] = SupportStatus()
    # The client plugin and entity the default handle_delete and show attribute use.
    default_client_name: ClassVar[str | None] = None
    entity: ClassVar[str | None] = None
    # OS::Heat::None accepts any property; a plugin sets this to do the same.
    accepts_any_property: ClassVar[bool] = False
    # Attribute names beyond ``attributes_schema`` are allowed (a deployment's config
    # outputs, a group's members' attributes); the plugin's get_attribute checks them.
    dynamic_attributes: ClassVar[bool] = False

    def __init__(
        self,
        name: str,
        definition: ResourceDefinition,
        stack: StackInfo,
        *,
        uuid: str = "",
        hooks: EngineHooks | None = None,
        properties: Properties | None = None,
        context: Any = None,
    ):
        self.name = name
        self.t = definition
        self.stack = stack
        self.uuid = uuid
        self.context = context
        self.action = self.INIT
        self.status = self.COMPLETE
        self.resource_id: str | None = None
        self._data: dict[str, Any] = {}
        # The keys of ``_data`` stored encrypted (``data_set(..., redact=True)``).
        self._redacted: set[str] = set()
        self._replacement: Resource | None = None
        self._hooks: EngineHooks = hooks or _NoHooks()
        self.properties = properties if properties is not None else definition.properties(
            self.properties_schema, context, accept_any=self.accepts_any_property
        )
        # Old property names become new ones (seed 000) before anything reads a value.
        apply_rules(self.properties, resource_rules(self, self.properties), client_resolver=self.client_plugin)

    # -- identity and data ------------------------------------------------

    @property
    def type(self) -> str:
        return self.t.resource_type

    def resource_id_set(self, inst: Any) -> None:
        """Record the physical id; the engine persists it before this returns."""
        self.resource_id = None if inst is None else str(inst)
        self._hooks.resource_id_set(self, self.resource_id)

    def data(self) -> dict[str, Any]:
        """Per-resource data a plugin stored with ``data_set`` (persisted)."""
        return dict(self._data)

    def data_set(self, key: str, value: Any, redact: bool = False) -> None:
        """Store ``value`` under ``key`` with the resource; ``redact``: a secret, kept
        encrypted at rest (the plugin still reads it plain with ``data()``)."""
        self._data[key] = value
        if redact:
            self._redacted.add(key)
        else:
            self._redacted.discard(key)
        self._hooks.data_changed(self)

    def data_delete(self, key: str) -> bool:
        if key not in self._data:
            return False
        del self._data[key]
        self._redacted.discard(key)
        self._hooks.data_changed(self)
        return True

    def warn(self, message: str) -> None:
        """Tell the user something went another way than asked (an emulation on an older
        cloud, say): a resource event ``Warning: <message>`` in the current action, written
        before this returns. Outside an engine it is logged."""
        warn = getattr(self._hooks, "warn", None)
        if warn is None:
            LOG.warning("%s: %s", self.name, message)
        else:
            warn(self, message)

    def signals(self) -> Signals | None:
        """This resource's signals, and the capability credentials that let an agent send
        them (``stoker.sdk.signals.Signals``: ``issue_credential``, ``add``,
        ``received``, ``find``, the URLs to signal); None outside an engine that keeps
        them (validation, documentation)."""
        offer = getattr(self._hooks, "signals", None)
        return None if offer is None else offer(self)

    def physical_resource_name(self) -> str:
        """A name unique to this resource, ``<stack>-<resource>-<short id>``, as Heat makes it."""
        return physical_resource_name(self.stack.name, self.name, self.uuid)

    def metadata_get(self) -> dict[str, Any]:
        """The resource's metadata with its functions resolved, as Heat's metadata_get
        gives it (an agent reads it: ``Fn::Join`` of the stack's id is the joined text)."""
        if not self.t.metadata:
            return {}
        if not self.t.bound:
            return dict(self.t.metadata)
        resolved = self.t.resolved_metadata()
        return dict(resolved) if isinstance(resolved, Mapping) else {}

    # -- clients ------------------------------------------------------------

    def client(self, name: str | None = None) -> Any:
        """The client of the named (default: ``default_client_name``) client plugin."""
        return self.client_plugin(name).client()

    def client_plugin(self, name: str | None = None) -> Any:
        return self._hooks.client_plugin(self, name or self.default_client_name)

    # -- references and attributes -------------------------------------------

    def get_reference_id(self) -> str | None:
        """What ``get_resource`` returns: the physical id, or the name before one exists;
        None where a plugin's reference is data it does not have (as in Heat, an
        OS::Heat::RandomString adopted without its value)."""
        return self.resource_id if self.resource_id is not None else self.name

    def _resolve_attribute(self, name: str) -> Any:
        """Return the value of attribute ``name``; plugins override this."""
        return None

    def _show_resource(self) -> dict[str, Any] | None:
        """The ``show`` attribute: the entity as the client returns it (seed 001)."""
        if not self.entity or self.resource_id is None:
            return None
        try:
            found = getattr(self.client(), self.entity).get(self.resource_id)
        except AttributeError as error:
            LOG.warning("Resolving 'show' attribute has failed : %s", error)
            return None
        return found if isinstance(found, dict) else found.to_dict()

    @classmethod
    def all_attributes_schema(cls) -> dict[str, attributes_module.Schema]:
        schema = dict(attributes_module.BASE_ATTRIBUTES)
        schema.update(cls.attributes_schema)
        return schema

    def get_attribute(self, key: str) -> Any:
        """Resolve one attribute (no caching here: the engine owns the cache)."""
        if key == attributes_module.SHOW:
            return self._show_resource()
        if key not in self.attributes_schema and not self.accepts_any_property:
            raise InvalidTemplateAttribute(self.name, key)
        try:
            return self._resolve_attribute(key)
        except InvalidTemplateAttribute as error:
            raise error.for_resource(self.name)  # the guide's form names the attribute only

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name (seed 001)
        """What ``get_attr`` (``Fn::GetAtt``) gives: attribute ``key``, then ``path``
        selected from it. A plugin that needs more complex resolution overrides this
        (seed 001) and the engine asks it with the path; which names it accepts is then
        the plugin's to check, as template validation no longer does."""
        return attributes_module.select_path(self.get_attribute(key), path)

    # -- validation ------------------------------------------------------------

    @classmethod
    def declared_properties_groups(cls) -> Any:
        """The type's properties groups as declared, for the checks at load and the
        type's documentation: the class attribute, or what a ``properties_groups_schema``
        property returns (seed 002 writes ``CLIENT_PLUGIN: self.client_plugin('keystone')``),
        read on an instance that belongs to no stack, whose ``client_plugin(name)`` is
        the name. A resource of a stack reads its own, with its real client plugins."""
        declared = inspect.getattr_static(cls, "properties_groups_schema", [])
        if not isinstance(declared, (property, functools.cached_property)):
            return cls.properties_groups_schema
        probe = cls.__new__(cls)
        probe.__dict__.update(name=cls.__name__, _hooks=_DeclarationHooks())
        return declared.__get__(probe, cls)

    def validate(self) -> None:
        """Check the resource beyond its schema; raise ValidationError. Plugins extend this."""
        self.properties.validate()
        problems = properties_group.validate(self.properties_groups_schema, self.properties, self.client_plugin)
        if len(problems) == 1:
            raise problems[0]
        if problems:
            raise PropertyErrors(problems)

    def translation_rules(self, properties: Properties) -> list[Any]:
        return []

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> Iterable[str]:
        """The names of resources this one must follow although the template does not
        reference them (Heat's ``add_dependencies`` rules, as a question: see
        ``stoker.sdk.dependencies``). Default: none."""
        return ()

    def add_dependencies(self, deps: Any) -> None:
        """Heat's hook, for plugins written for Heat: one that overrides it
        (``super().add_dependencies(deps)``, then ``deps += (self, other)``) is honoured,
        called on a stand-in of itself whose ``properties`` and ``stack`` (name -> stand-in
        with ``properties``, ``has_interface``) read the template as
        ``implicit_dependencies``'s views do (``stoker.engine.implicit``). New plugins
        answer ``implicit_dependencies`` instead. This base adds nothing: the engine adds
        the template's own dependencies."""

    @classmethod
    def update_dependencies(cls, me: ResourceView, stack: StackView) -> Iterable[str]:
        """The names of resources whose update this one's update follows, beside its
        dependencies, in a stack update, its rollback and a restore: the ones it must not
        change at the same time (a volume that detaches from its server to be restored
        waits for that server's rebuild). Create and delete ignore these edges; one that
        would close a cycle is dropped. Default: none."""
        return ()

    def find_created(self) -> str | None:
        """The physical id of an object an interrupted create made before its id was
        recorded (the engine died between the cloud's answer and the write), found by
        the name only this resource uses (``physical_resource_name()``); None if there is
        none or it cannot be found. The engine asks when it resumes such a create, so the
        object is owned by the stack (and deleted or replaced by it), not orphaned."""
        return None

    # -- the live object (Heat's "observe reality" methods; docs/drift.md) ------

    # Property name -> the live object's field of another name (``qos_policy`` is
    # ``qos_policy_id`` in Neutron's body), read by the default parse_live_resource_data.
    live_fields: ClassVar[Mapping[str, str]] = {}

    def get_live_resource_data(self) -> Any:
        """The live object as the service gives it now (Heat's name); default: the
        ``show`` of ``entity`` (``_show_resource``). None when the type has no object to
        read; raises ``EntityNotFound`` when the object is gone."""
        try:
            return self._show_resource()
        except Exception as error:  # noqa: BLE001 - a client raises its own types
            if self.default_client_name and self.client_plugin().is_not_found(error):
                raise EntityNotFound("Resource", self.name) from error
            raise

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """The live object's values of this resource's properties (Heat's name and
        default): every ``update_allowed`` property the object shows (under its own
        name, or ``live_fields``'s), but ``name`` when the template left it to the
        physical resource name."""
        return live_state.parse_default(self.properties_schema, self.live_fields, resource_properties, resource_data)

    def get_live_state(self, resource_properties: Mapping[str, Any]) -> dict[str, Any]:
        """Property name -> its live value, in the vocabulary the stack holds it in
        (Heat's name): {} when there is nothing to read."""
        resource_data = self.get_live_resource_data()
        if resource_data is None:
            return {}
        return self.parse_live_resource_data(resource_properties, resource_data)

    @classmethod
    def reads_live_state(cls) -> bool:
        """Whether this type can read its live object: it names an ``entity`` or
        overrides one of the live-state methods or ``_show_resource``."""
        return bool(cls.entity) or any(
            getattr(cls, name) is not getattr(Resource, name)
            for name in ("get_live_state", "get_live_resource_data", "parse_live_resource_data", "_show_resource")
        )

    # -- lifecycle handlers (defaults documented in seed 001) -------------------

    def handle_create(self) -> Any:
        return None

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> Any:
        """Default: the resource must be replaced."""
        raise UpdateReplace(self.name)

    def handle_delete(self) -> Any:
        """Default: delete ``entity`` through the default client, ignoring not-found."""
        if self.resource_id is None or not self.entity or not self.default_client_name:
            return None
        try:
            getattr(self.client(), self.entity).delete(self.resource_id)
        except Exception as error:  # noqa: BLE001 - a client raises its own types
            self.client_plugin().ignore_not_found(error)  # re-raises anything else
            return None
        return self.resource_id

    def prepare_for_replace(self) -> None:
        """Called on a resource before its replacement is created (Heat's hook): give up
        what the replacement needs and only one may hold (a server's ports, say)."""

    def restore_prev_rsrc(self, convergence: bool = False) -> None:
        """Called on a replaced resource that a rollback makes current again, before its
        replacement is deleted (Heat's hook; ``convergence`` is always True here, as
        in Heat's convergence engine): take back what ``prepare_for_replace`` gave up.
        ``self.replacement()`` is the replacement (None if it never got a physical id).
        A failure leaves this resource UPDATE_FAILED and fails the rollback."""

    def replacement(self) -> Resource | None:
        """In ``restore_prev_rsrc``: the plugin object of the replacement being rolled back."""
        return self._replacement

    def needs_replace_failed(self) -> bool:
        """Whether a resource in a FAILED state is replaced on the next update."""
        return True

    def needs_replace(self, after_props: Mapping[str, Any]) -> bool:
        """Whether the new property values require a replacement (beyond update_allowed)."""
        return False

    def needs_replace_with_prop_diff(self, changed_properties_set: set[str], after_props: Mapping[str, Any], before_props: Mapping[str, Any]) -> bool:
        """Whether these changed properties require a replacement."""
        return False

    def needs_replace_with_tmpl_diff(self, tmpl_diff: Mapping[str, Any]) -> bool:
        """Whether these changes of the definition require a replacement."""
        return False
