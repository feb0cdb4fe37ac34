"""The one place that wires store, registry and engine together for the CLI and API.

``Service`` is assembled from parts, each given only the collaborators it uses:
``reads`` (stacks, resources, events, outputs, resource types: reads.py), ``serving``
(where jobs run and for whom: serving.py), ``checks`` (a request parsed and validated:
request_checks.py), ``actions`` (create, update, delete, ...: stack_actions.py),
``resource_actions`` (hooks, signals, health marks), ``copies`` (snapshots, export,
abandon, drift: stack_copies.py), ``previews`` (Heat's previews: previews.py) and
``plans`` (plans made and applied: plan_actions.py).
No part reaches into another's private members; the service offers each part's
operations under the names its callers (api/, cli/embedded) use.
"""

from __future__ import annotations

from typing import Any

from stoker.engine.clock import Clock
from stoker.engine.engine import Engine, EngineSettings
from stoker.environment.directory import load_default_environment, load_environment_dir
from stoker.environment.plugins import load_plugin_dirs
from stoker.environment.registry import ResourceRegistry
from stoker.plan_actions import PlanActions
from stoker.previews import StackPreviews
from stoker.reads import StackReads
from stoker.request_checks import RequestChecks
from stoker.resource_actions import ResourceActions
from stoker.resources import builtin_client_mapping, builtin_constraint_mapping
from stoker.resources.index import BUILTIN_TYPES
from stoker.sdk.exceptions import ClientPluginError
from stoker.serving import Serving
from stoker.settings import DEFAULT_PUBLIC_URL, Settings
from stoker.stack_actions import StackActions
from stoker.stack_copies import StackCopies
from stoker.stack_requests import Source, check_stack_name
from stoker.store import Store
from stoker.store.sealing import Sealer
from stoker.template import evaluation_limits

# What callers import from here: a request's template or environment (Source), the
# stack name rule, the registry as the service builds it.
__all__ = ["Service", "Source", "build_registry", "check_stack_name", "stack_domain_settings"]


def stack_domain_settings(settings: Settings) -> dict[str, str]:
    """The stack user domain's settings (``Settings.stack_domain``); a half-set one is a
    ClientPluginError naming what is missing (never the password), so a server stops
    before it listens."""
    try:
        return settings.stack_domain()
    except ValueError as error:
        raise ClientPluginError(str(error), hint="docs/operations.md, 'Stack users and the stack user domain'") from None


def build_registry(settings: Settings) -> ResourceRegistry:
    registry = ResourceRegistry()
    # The built-in types by name; each module is imported when a stack first uses one
    # of its types (resources/index.py).
    registry.register_index(BUILTIN_TYPES)
    registry.clients.register_mapping(builtin_client_mapping(), "stoker.resources")
    registry.constraints.update(builtin_constraint_mapping())
    load_plugin_dirs(registry, settings.plugin_dirs)
    # Beneath every stack's own environment, as Heat's environment_dir: Heat's default
    # environment first, then the operator's files.
    load_default_environment(registry)
    load_environment_dir(registry, settings.environment_dir)
    # Only what the operator turned on: a plugin falls back on the environment
    # (STOKER_ALLOW_IMAGE_URLS) for what these settings leave out.
    registry.client_settings = {"allow_image_urls": True} if settings.allow_image_urls else {}
    if settings.allow_template_urls:
        registry.client_settings["allow_template_urls"] = True
    registry.client_settings["max_template_bytes"] = settings.max_template_bytes
    if settings.loadbalancer_template:
        registry.client_settings["loadbalancer_template"] = settings.loadbalancer_template
    # Heat's stack user domain, for the keystone plugin's stack users (its admin's
    # password among them: plugin settings are never logged or shown).
    registry.client_settings.update(stack_domain_settings(settings))
    registry.region_name = settings.region_name
    return registry


class Service:
    """Requests from the CLI and the API: checked, then run as jobs in the engine; reads
    go to the store. Each operation is one part's (see the module's docstring)."""

    def __init__(self, settings: Settings | None = None, clock: Clock | None = None):
        self.settings = settings or Settings.from_env()
        evaluation_limits.configure(self.settings)
        self.store = Store(self.settings.database_url, Sealer.for_database(self.settings.database_url, self.settings.encryption_keys, self.settings.encrypt_parameters_and_properties))
        self.store.migrate()
        # The built-in types' modules are imported when a stack first uses one of their
        # types (resources/index.py): building the registry and the engine costs a read
        # about 10 ms; plugin directories are loaded here, their problems reported at once.
        self.registry = build_registry(self.settings)
        self.engine = Engine(
            self.store,
            self.registry,
            EngineSettings(
                handler_threads=self.settings.handler_threads,
                max_in_flight=self.settings.max_in_flight,
                max_tree_handler_calls=self.settings.tree_handler_calls(),
                max_events_per_stack=self.settings.max_events_per_stack,
                max_nested_depth=self.settings.max_nested_depth,
                max_resources_per_stack=self.settings.max_resources_per_stack,
                public_url=self.settings.public_url or DEFAULT_PUBLIC_URL,
                lock_lease_s=self.settings.lock_lease_s,
            ),
            clock,
        )
        # The parts, each with what it uses; a later one may use an earlier one.
        self.reads = StackReads(self.settings, self.store, self.engine, self.registry)
        # Where jobs run and whom they act for: here, with the settings' cloud.
        self.serving = Serving(self.settings, self.store, self.engine)
        self.checks = RequestChecks(self.settings, self.store, self.engine, self.registry)
        self.actions = StackActions(self.settings, self.store, self.engine, self.checks, self.reads, self.serving)
        self.resource_actions = ResourceActions(self.store, self.engine, self.reads, self.serving)
        self.copies = StackCopies(self.settings, self.store, self.engine, self.reads, self.serving)
        self.previews = StackPreviews(self.store, self.engine, self.registry, self.checks, self.reads)
        self.plans = PlanActions(self.store, self.engine, self.registry, self.checks, self.previews, self.reads, self.copies, self.actions)

        # What the service offers, by part (the names api/ and cli/embedded call).
        reads = self.reads
        self.get_stack = reads.get_stack
        self.identified_stack = reads.identified_stack
        self.list_stacks = reads.list_stacks
        self.stack_parameters = reads.stack_parameters
        self.hidden_values = reads.hidden_values
        self.list_resources = reads.list_resources
        self.list_resources_nested = reads.list_resources_nested
        self.required_by = reads.required_by
        self.resource_attributes = reads.resource_attributes
        self.resource_metadata = reads.resource_metadata
        self.metadata_by_capability = reads.metadata_by_capability
        self.agent_metadata = reads.agent_metadata
        self.keypair_holder = reads.keypair_holder
        self.list_events = reads.list_events
        self.outputs = reads.outputs
        self.environment_of = reads.environment_of
        self.files_of = reads.files_of
        self.snapshot_shown = reads.snapshot_shown
        self.template_of = reads.template_of
        self.description_of = reads.description_of
        self.resource_types = reads.resource_types
        self.resource_type_schema = reads.resource_type_schema
        self.constraint_values = reads.constraint_values

        serving = self.serving
        self.act_for_users = serving.act_for_users
        self.serve_on = serving.serve_on
        self.recover_nowait = serving.recover_nowait
        self.stop_jobs = serving.stop_jobs
        self.list_services = serving.list_services
        self.abandoned_stacks = serving.abandoned_stacks
        self.recover = serving.recover

        checks = self.checks
        self.limits = checks.limits
        self.parse_template = checks.parse_template
        self.parse_environments = checks.parse_environments
        self.validate_template = checks.validate_template

        actions = self.actions
        self.create_stack = actions.create_stack
        self.update_stack = actions.update_stack
        self.adopt_stack = actions.adopt_stack
        self.import_stack = actions.import_stack
        self.delete_stack = actions.delete_stack
        self.stack_action = actions.stack_action
        self.cancel_stack = actions.cancel_stack

        resource_actions = self.resource_actions
        self.clear_hook = resource_actions.clear_hook
        self.signal_resource = resource_actions.signal_resource
        self.signalled_resource = resource_actions.signalled_resource
        self.check_signal_credential = resource_actions.check_signal_credential
        self.signal_by_capability = resource_actions.signal_by_capability
        self.mark_unhealthy = resource_actions.mark_unhealthy

        copies = self.copies
        self.create_snapshot = copies.create_snapshot
        self.list_snapshots = copies.list_snapshots
        self.get_snapshot = copies.get_snapshot
        self.delete_snapshot = copies.delete_snapshot
        self.restore_snapshot = copies.restore_snapshot
        self.export_stack = copies.export_stack
        self.abandon_stack = copies.abandon_stack
        self.detect_drift = copies.detect_drift
        self.last_drift = copies.last_drift

        previews = self.previews
        self.preview_create = previews.preview_create
        self.preview_stack = previews.preview_stack
        self.preview_update = previews.preview_update

        plans = self.plans
        self.plan_create = plans.plan_create
        self.plan_update = plans.plan_update
        self.plan_restore = plans.plan_restore
        self.plan_refresh = plans.plan_refresh
        self.refresh_stack = plans.refresh_stack
        self.plan_import = plans.plan_import
        self.plan_stack_action = plans.plan_stack_action
        self.apply_plan = plans.apply_plan

    @property
    def jobs(self) -> Any:
        """Serve mode's jobs (``serving``): None while jobs run to their end here."""
        return self.serving.jobs

    @property
    def delegation(self) -> Any:
        """Whom stack actions act for (``serving``): None, the settings' cloud."""
        return self.serving.delegation

    def close(self) -> None:
        self.engine.close()
        self.store.close()
        self.serving.close()
