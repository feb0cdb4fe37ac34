"""The resource type registry: type names to plugin classes, and how a type name resolves.

Built-in types and plugin types register here once per process, with the global
environment's ``resource_registry`` (Settings.environment_dir) beneath every user's.
A stack's environment overlays its own entries per stack. Registration checks each
plugin's schemas so a broken plugin is refused with its name before any template uses it.

The built-in types are registered by name from a static index (resources/index.py):
their modules are imported, and their classes checked, when a type is first looked up
(``PluginTypes``), so a command that never builds a resource of a type never imports it.

Resolution is Heat's (``heat/engine/environment.py`` ResourceRegistry.get_resource_info):
every entry that could apply to a type (a template-named type, the per-resource entry
``resources.<name>.<type>``, the exact entry, ``Prefix::*`` globs) from the user's
registry and the global one, sorted user first, then the longer (per-resource) path, then
by path; the first that leads to a plugin or a template wins, a mapping that leads nowhere
is skipped.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any

from stoker.environment.capabilities import choose_entry
from stoker.sdk import properties_group
from stoker.sdk.clients import ClientRegistry
from stoker.sdk.exceptions import SchemaError
from stoker.sdk.resource import Resource

LOG = logging.getLogger(__name__)


class UnknownResourceTypeError(LookupError):
    """No plugin or template for a type. ``mapped_to``: the types an environment maps it
    to, none of which could be found either (the message names them: the type the user
    wrote is an alias, and the missing one is its target)."""

    def __init__(self, type_name: str, known: list[str], mapped_to: Sequence[str] = ()):
        missing = mapped_to[-1] if mapped_to else type_name
        close = get_close_matches(missing, known, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        if mapped_to:
            message = f"The Resource Type ({type_name}) could not be found: the environment maps it to {' or '.join(mapped_to)}, which no plugin or template provides.{hint}"
        else:
            message = f"The Resource Type ({type_name}) could not be found.{hint}"
        super().__init__(message)
        self.type_name = type_name


class TemplateNotFoundError(UnknownResourceTypeError):
    """A template resource whose template is not in the request's files map."""

    def __init__(self, template_name: str):
        LookupError.__init__(
            self,
            f'Could not fetch remote template "{template_name}": it is not in the files map '
            "(the stoker command sends templates found beside the template or environment that names them)",
        )
        self.type_name = template_name


def check_plugin(type_name: str, cls: type) -> list[str]:
    """Every mistake in a plugin class's declarations."""
    owner = f"{type_name} ({cls.__module__}.{cls.__qualname__})"
    if not isinstance(cls, type) or not issubclass(cls, Resource):
        return [f"{owner}: a resource plugin must extend stoker.sdk.resource.Resource"]
    problems = []
    for name, schema in cls.properties_schema.items():
        problems.extend(schema.check(owner, name))
    try:
        groups = cls.declared_properties_groups()
    except Exception as error:  # noqa: BLE001 - a plugin's property, read at load
        return [*problems, f"{owner}: properties_groups_schema cannot be read without a stack: {type(error).__name__}: {error}"]
    problems.extend(f"{owner}: {p}" for p in properties_group.check_schema(groups, cls.properties_schema))
    return problems


def lifecycle_notes(type_name: str, cls: type[Resource]) -> list[str]:
    """Where the plugin's support status chains (the type's, its properties' and
    attributes') skip a step of the lifecycle or go back: warnings when it loads. Heat
    loads such chains, its own plugins among them (magnum's BayModel hides a property
    straight from SUPPORTED), and so does stoker (seed 000)."""
    owner = f"{type_name} ({cls.__module__}.{cls.__qualname__})"
    notes = []
    note = cls.support_status.lifecycle_note()
    if note:
        notes.append(f"{owner}: {note}")
    for name, schema in cls.properties_schema.items():
        notes.extend(schema.lifecycle_notes(owner, name))
    for name, attribute in cls.attributes_schema.items():
        note = attribute.support_status.lifecycle_note()
        if note:
            notes.append(f"{owner}: attribute {name}: {note}")
    return notes


TEMPLATE_SUFFIXES = (".yaml", ".template")
# What an entry of a registry is, told as Heat's ResourceInfo.__new__ tells it.
ENTRY_KINDS = (PLUGIN, TEMPLATE, GLOB, MAPPING) = ("plugin", "template", "glob", "mapping")


@dataclass(frozen=True)
class RegistryEntry:
    """One entry that may resolve a type: where it sits (``path``), what it maps to, and
    whether the user's environment set it (user entries sort above global ones)."""

    path: tuple[str, ...]
    value: Any
    user: bool

    @property
    def name(self) -> str:
        return self.path[-1]

    @property
    def kind(self) -> str:
        if self.name.endswith(TEMPLATE_SUFFIXES):
            return TEMPLATE
        if isinstance(self.value, list):
            return TEMPLATE  # candidate templates; capabilities.choose_entry picks one
        if not isinstance(self.value, str):
            return PLUGIN
        if self.value.endswith(TEMPLATE_SUFFIXES):
            return TEMPLATE
        if self.name.endswith("*"):
            return GLOB
        return MAPPING

    @property
    def template_name(self) -> str:
        return self.name if self.name.endswith(TEMPLATE_SUFFIXES) else self.value

    def sort_key(self) -> tuple:
        # Heat's ResourceInfo.__lt__: user above global, longer path above shorter, then path.
        return (not self.user, -len(self.path), self.path)

    def glob_matches(self, type_name: str) -> bool:
        # Heat's GlobResourceInfo.matches: a many-to-one glob does not match its own target.
        return type_name != self.value and type_name.startswith(self.name[:-1])

    def target(self, type_name: str) -> str:
        """The type a mapping or glob sends ``type_name`` to."""
        if self.kind == GLOB and self.value.endswith("*"):
            return self.value[:-1] + type_name[len(self.name) - 1 :]
        return self.value


def registry_entries(registry: Mapping[str, Any], type_name: str, resource_name: str | None, user: bool) -> Iterator[RegistryEntry]:
    """The entries of one registry that may resolve ``type_name`` (Heat's iterable_by)."""
    if user and type_name.endswith(TEMPLATE_SUFFIXES):
        # A type that is a template's name needs no entry (user environments only).
        yield RegistryEntry((type_name,), type_name, True)
    if resource_name:
        specific = registry.get("resources")
        specific = specific.get(resource_name) if isinstance(specific, Mapping) else None
        if isinstance(specific, Mapping) and specific.get(type_name) is not None and not isinstance(specific[type_name], Mapping):
            yield RegistryEntry(("resources", resource_name, type_name), specific[type_name], user)
    value = registry.get(type_name)
    if type_name != "resources" and value is not None and not isinstance(value, Mapping):
        yield RegistryEntry((type_name,), value, user)
    for key, value in registry.items():
        if key.endswith("*") and isinstance(value, str):
            entry = RegistryEntry((key,), value, user)
            if entry.kind == GLOB and entry.glob_matches(type_name):
                yield entry


class PluginTypes(MutableMapping[str, type[Resource]]):
    """Type names to plugin classes, where a name may be indexed (``defer``: the module
    whose ``resource_mapping()`` registers it) before its class is loaded. A name is a key
    from the start; looking up its class imports its module and registers every indexed
    name that module maps (a name set or deleted since keeps what was done to it: a
    plugin of the same name registered later wins, as it would have over a built-in).
    Membership, iteration and deletion load nothing; ``items()`` and ``values()`` load
    every module, as ``get`` loads the one it asks for."""

    def __init__(self) -> None:
        self._loaded: dict[str, type[Resource]] = {}
        self._deferred: dict[str, str] = {}  # type name -> module name
        self._order: dict[str, None] = {}  # every name, in registration order
        self._lock = threading.RLock()  # one import per module, even from handler threads

    def defer(self, index: Mapping[str, str]) -> None:
        for name, module in index.items():
            self._loaded.pop(name, None)
            self._deferred[name] = module
            self._order.setdefault(name, None)

    def _load(self, module_name: str) -> None:
        with self._lock:
            mapping = importlib.import_module(module_name).resource_mapping()
            for name, cls in mapping.items():
                if self._deferred.get(name) != module_name:
                    continue
                del self._deferred[name]
                problems = check_plugin(name, cls)
                if problems:
                    LOG.warning("Skipping plugin %s: %s", module_name, "; ".join(problems))
                    self._order.pop(name, None)
                    continue
                self._loaded[name] = cls

    def __getitem__(self, name: str) -> type[Resource]:
        module = self._deferred.get(name)
        if module is not None:
            self._load(module)
        return self._loaded[name]

    def __setitem__(self, name: str, cls: type[Resource]) -> None:
        with self._lock:
            self._deferred.pop(name, None)
            self._loaded[name] = cls
            self._order.setdefault(name, None)

    def __delitem__(self, name: str) -> None:
        with self._lock:
            if name not in self._order:
                raise KeyError(name)
            self._deferred.pop(name, None)
            self._loaded.pop(name, None)
            del self._order[name]

    def __contains__(self, name: object) -> bool:
        return name in self._order

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)


@dataclass
class ResourceRegistry:
    types: PluginTypes = field(default_factory=PluginTypes)
    constraints: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    clients: ClientRegistry = field(default_factory=ClientRegistry)
    # The operator's settings client plugins read (``ClientPlugin.settings``), e.g.
    # allow_image_urls; the stack domain admin's password too, so never in a repr.
    client_settings: dict[str, Any] = field(default_factory=dict, repr=False)
    # The region this server orchestrates (Settings.region_name): OS::Heat::Stack's.
    region_name: str = "RegionOne"
    # The global environment's resource_registry (Settings.environment_dir), in Heat's
    # shape: type -> type or template, ``Prefix::*`` globs, ``resources`` per name.
    environment: dict[str, Any] = field(default_factory=dict)
    # The text of the templates the global environment maps types to, by the name it uses.
    environment_files: dict[str, str] = field(default_factory=dict)

    def register(self, type_name: str, cls: type[Resource]) -> None:
        problems = check_plugin(type_name, cls)
        if problems:
            raise SchemaError("; ".join(problems))
        self.types[type_name] = cls

    def register_mapping(self, mapping: Mapping[str, type], source: str, *, builtin: bool = False) -> None:
        """Register a plugin module's types. A chain of support statuses that departs from
        the lifecycle is a warning for a user's plugin; stoker's own types carry Heat's
        chains as Heat wrote them (LBaaS v2 went from SUPPORTED straight to HIDDEN), which
        are no news to a user of every command."""
        for type_name, cls in mapping.items():
            try:
                self.register(type_name, cls)
            except SchemaError as error:
                message = f"plugin {source}: {error.message}"
                LOG.warning("Skipping %s", message)
                self.problems.append(message)
                continue
            for note in [] if builtin else lifecycle_notes(type_name, cls):
                message = f"plugin {source}: {note}"
                LOG.warning(message)
                self.problems.append(message)

    def register_index(self, index: Mapping[str, str]) -> None:
        """Register types by name, each with the module whose ``resource_mapping()``
        gives its class (resources/index.py), to be imported when first looked up."""
        self.types.defer(index)

    def known_types(self) -> list[str]:
        return sorted(self.types)

    def listed_types(self) -> dict[str, type[Resource]]:
        """The types a type list shows (Heat's get_types): the plugins, and the global
        environment's template resources (``AWS::RDS::DBInstance`` of Heat's default
        environment) as TemplateResource; aliases and globs are not types."""
        from stoker.resources.heat.template_resource import TemplateResource

        listed = dict(self.types)
        for name, value in self.environment.items():
            entry = RegistryEntry((name,), value, False)
            if name != "resources" and isinstance(value, (str, list)) and entry.kind == TEMPLATE and not name.endswith(TEMPLATE_SUFFIXES):
                listed[name] = TemplateResource
        return dict(sorted(listed.items()))

    def global_entries(self, type_name: str, resource_name: str | None) -> Iterator[RegistryEntry]:
        """The global registry's entries for ``type_name``: the global environment's, and
        the plugin registered under that name unless the global environment remaps it."""
        yield from registry_entries(self.environment, type_name, resource_name, user=False)
        if type_name not in self.environment and type_name in self.types:
            yield RegistryEntry((type_name,), self.types[type_name], False)

    def resolve(self, type_name: str, user_registry: Mapping[str, Any] | None = None, resource_name: str | None = None) -> RegistryEntry:
        """The plugin or template entry ``type_name`` resolves to for resource
        ``resource_name`` (Heat's get_resource_info)."""
        return self._resolve(type_name, user_registry or {}, resource_name, frozenset())

    def _resolve(self, type_name: str, user_registry: Mapping[str, Any], resource_name: str | None, seen: frozenset[str]) -> RegistryEntry:
        if type_name in seen:
            # Heat recurses until Python gives up; a loop of mappings leads nowhere.
            raise UnknownResourceTypeError(type_name, self.known_types())
        entries = [*registry_entries(user_registry, type_name, resource_name, user=True), *self.global_entries(type_name, resource_name)]
        tried: list[str] = []
        for entry in sorted(entries, key=RegistryEntry.sort_key):
            if entry.kind in (PLUGIN, TEMPLATE):
                return entry
            target = entry.target(type_name)
            try:
                return self._resolve(target, user_registry, resource_name, seen | {type_name})
            except TemplateNotFoundError:
                raise
            except UnknownResourceTypeError:
                if target not in tried:
                    tried.append(target)
                continue
        raise UnknownResourceTypeError(type_name, self.known_types(), mapped_to=tried)

    def user_template_path(self, type_name: str, user_registry: Mapping[str, Any] | None, resource_name: str | None) -> tuple[str, ...] | None:
        """Where in the user's registry the entry sits that makes resource
        ``resource_name`` of ``type_name`` a template resource; None when none does. Its
        nested stack's environment leaves it out (Heat's get_child_environment
        ``item_to_remove``), so a template that wraps a type (``OS::Nova::Server:
        server.yaml``) may use that type inside."""
        try:
            entry = self.resolve(type_name, user_registry, resource_name)
        except LookupError:
            return None
        return entry.path if entry.user and entry.kind == TEMPLATE else None

    def get_class(
        self,
        type_name: str,
        aliases: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        resource_name: str | None = None,
    ) -> type[Resource]:
        """The class for resource ``resource_name`` of ``type_name``, after the stack
        environment's ``resource_registry`` (``aliases``) and the global one. A type that
        resolves to a template (``server.yaml``) is a template resource whose text is in
        ``files`` (or, for the global environment's templates, read at start)."""
        from stoker.resources.heat.template_resource import is_template_name, template_class

        if is_template_name(type_name) and not type_name.endswith(TEMPLATE_SUFFIXES) and type_name not in self.types:
            entry = RegistryEntry((type_name,), type_name, True)  # a URL: a template's name too
        else:
            entry = self.resolve(type_name, aliases, resource_name)
        if isinstance(entry.value, list):  # the environment's requires chooses the candidate
            entry = choose_entry(entry, type_name, aliases, files or {}, self.environment_files)
        if entry.kind == PLUGIN:
            return entry.value
        name = entry.template_name
        text = (files or {}).get(name)
        if text is None and not entry.user:
            text = self.environment_files.get(name)
        if text is None:
            raise TemplateNotFoundError(name)
        return template_class(type_name, name, text, files or {})
