"""The plugin SDK's public surface is curated: these lists change only on purpose."""

from __future__ import annotations

import stoker.sdk as sdk
import stoker.sdk.testing as testing
from stoker.sdk.resource import Resource

SURFACE = {
    "attributes": ["SHOW", "Schema", "select_path"],
    "clients": ["LATEST", "ClientPlugin", "ClientRegistry", "Clients", "ExceptionFilter", "Version", "check_client_plugin"],
    "constraints": ["AllowedPattern", "AllowedValues", "BaseCustomConstraint", "Constraint", "CustomConstraint", "Length", "Modulo", "Range"],
    "dependencies": ["Reference", "ResourceView", "StackView", "UNKNOWN", "known"],
    "exceptions": [
        "ClientPluginError",
        "EntityNotFound",
        "InvalidTemplateAttribute",
        "MicroversionUnavailableError",
        "PropertyError",
        "PropertyErrors",
        "ResourceFailure",
        "ResourceNotFoundError",
        "SchemaError",
        "StokerError",
        "UnknownClientPluginError",
        "UpdateInProgressError",
        "UpdateReplace",
        "ValidationError",
    ],
    "live_state": ["as_given", "parse_default"],
    "properties": ["UNRESOLVED", "Properties", "Schema", "TranslationRule", "contains_unresolved", "convert", "resolve_properties", "value_for"],
    "properties_group": ["AND", "API_VERSIONS", "CLIENT_PLUGIN", "OPERATORS", "OR", "PROPERTIES", "VERSIONS", "XOR", "check_schema", "describe", "validate"],
    "resource": ["EngineHooks", "Resource", "StackInfo", "physical_resource_name"],
    "software_config": [
        "DEPLOYMENT_STATUSES", "DeploymentConfigNotFoundError", "INPUT_SCHEMA", "IO_TYPES", "MemorySoftwareConfigs",
        "MemorySoftwareDeployments", "OUTPUT_SCHEMA", "SignalOutcome", "SoftwareConfigNotFoundError", "SoftwareConfigs",
        "SoftwareDeploymentNotFoundError", "SoftwareDeployments", "config_body", "deployment_changes", "deployment_metadata",
        "format_config", "format_deployment", "new_deployment", "signal_outcome", "software_configs", "software_deployments",
    ],
    "stack_resource": ["NestedStacks", "NestedView", "StackResource"],
    "support": ["DEPRECATED", "HIDDEN", "SUPPORTED", "SUPPORT_STATUSES", "UNKNOWN", "UNSUPPORTED", "Status", "SupportStatus"],
    "translation": ["TranslationRule", "apply_rules", "check_rules"],
}

# What every plugin inherits. Heat's Resource has ~145 methods; ours stays small.
RESOURCE_MEMBERS = [
    "ACTIONS", "ADOPT", "FnGetAtt", "add_dependencies", "declared_properties_groups", "CHECK", "COMPLETE", "CREATE", "DELETE", "FAILED", "INIT", "IN_PROGRESS", "RESUME",
    "ROLLBACK", "SNAPSHOT", "STATUSES", "SUSPEND", "UPDATE",
    "_resolve_attribute", "_show_resource",
    "accepts_any_property", "all_attributes_schema", "attributes_schema", "client", "client_plugin",
    "data", "data_delete", "data_set", "default_client_name", "dynamic_attributes", "entity", "find_created", "get_attribute", "get_live_resource_data", "get_live_state", "get_reference_id",
    "handle_create", "handle_delete", "handle_update", "implicit_dependencies", "live_fields", "metadata_get", "parse_live_resource_data", "reads_live_state", "needs_replace", "needs_replace_failed", "needs_replace_with_prop_diff", "needs_replace_with_tmpl_diff",
    "physical_resource_name", "prepare_for_replace", "properties_groups_schema", "properties_schema", "replacement", "resource_id_set", "restore_prev_rsrc",
    "signals", "support_status", "translation_rules", "type", "update_dependencies", "validate", "warn",
]  # fmt: skip


def test_sdk_modules_are_pinned():
    assert sorted(sdk.__all__) == sorted(SURFACE)
    for name, expected in SURFACE.items():
        module = getattr(sdk, name)
        assert sorted(module.__all__) == sorted(expected), name
        for member in expected:
            assert hasattr(module, member), f"{name}.{member}"


def test_testing_kit_is_pinned():
    assert sorted(testing.__all__) == ["FakeClock", "PluginHarness"]


def test_resource_base_class_is_pinned():
    assert sorted(n for n in dir(Resource) if not n.startswith("__")) == sorted(RESOURCE_MEMBERS)
