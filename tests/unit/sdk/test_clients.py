"""Client plugins: the client cache, error classification and microversion negotiation
(seed 004). No network: the plugins below stand in for a service with fixed versions."""

from __future__ import annotations

import threading

import pytest

from stoker.sdk.clients import ClientPlugin, ClientRegistry, Clients, Version, check_client_plugin
from stoker.sdk.exceptions import (
    ClientPluginError,
    EntityNotFound,
    MicroversionUnavailableError,
    SchemaError,
    UnknownClientPluginError,
)


class FakeClient:
    def __init__(self, version: str | None):
        self.version = version


class FakeClientPlugin(ClientPlugin):
    """A plugin whose "service" advertises a fixed version range and counts its queries."""

    name = "fake"

    def __init__(self, *args, service_min: str | None = None, service_max: str | None = None, **kwargs):
        kwargs.setdefault("environ", {})
        super().__init__(*args, **kwargs)
        self.service_min = service_min
        self.service_max = service_max
        self.created: list[str | None] = []
        self.service_queries = 0

    def create_client(self, version: str | None) -> FakeClient:
        self.created.append(version)
        return FakeClient(version)

    def get_max_microversion(self) -> str | None:
        self.service_queries += 1
        return self.service_max

    def get_min_microversion(self) -> str | None:
        return self.service_min


class ComputePlugin(FakeClientPlugin):
    name = "compute"
    min_microversion = "2.1"
    max_microversion = "2.79"


class BlockStoragePlugin(FakeClientPlugin):
    name = "cinder"
    service_type = "block-storage"
    max_microversion = "3.60"


class KeystonePlugin(FakeClientPlugin):
    name = "keystone"
    supported_versions = ("1.0", "1.2", "2.0")


class ConflictError(Exception):
    pass


class OverLimitError(Exception):
    pass


class ServiceNotFoundError(Exception):
    pass


class ClassifyingPlugin(FakeClientPlugin):
    name = "classifying"
    not_found_errors = (ServiceNotFoundError, EntityNotFound)
    conflict_errors = (ConflictError,)
    over_limit_errors = (OverLimitError,)


def client_mapping() -> dict[str, type[ClientPlugin]]:
    """How a plugin module offers its client plugins (mirrors resource_mapping())."""
    return {"compute": ComputePlugin, "keystone": KeystonePlugin}


# -- Version ----------------------------------------------------------------------------


def test_version_compares_numerically():
    assert Version.parse("2.10") > Version.parse("2.9")
    assert Version.parse("2") == Version.parse("2.0")
    assert Version.parse("10.0") > Version.parse("9.99")
    assert sorted(["2.10", "2.9", "2.1"], key=Version.parse) == ["2.1", "2.9", "2.10"]


def test_version_keeps_its_text():
    assert str(Version.parse("2.10")) == "2.10"
    assert str(Version.parse("3")) == "3"


@pytest.mark.parametrize("value", [2.1, "two", "2.x", "", None])
def test_version_rejects_what_is_not_a_version_string(value):
    with pytest.raises(ValueError):
        Version.parse(value)


# -- the client ---------------------------------------------------------------------------


def test_client_is_created_once_and_cached():
    plugin = ComputePlugin(service_max="2.60")
    first = plugin.client()
    assert plugin.client() is first
    assert plugin.created == ["2.60"]


def test_client_of_unversioned_plugin_gets_no_version():
    plugin = FakeClientPlugin()
    assert plugin.client().version is None
    assert plugin.negotiated_version() is None


def test_client_for_explicit_version_is_cached_separately():
    plugin = ComputePlugin(service_max="2.60")
    older = plugin.client("2.5")
    assert older.version == "2.5"
    assert plugin.client("2.5") is older
    assert plugin.client() is not older


def test_client_refuses_version_the_plugin_does_not_know():
    plugin = ComputePlugin(service_max="2.95")
    with pytest.raises(ClientPluginError, match="cannot speak version 2.90"):
        plugin.client("2.90")


def test_client_refuses_version_the_cloud_does_not_offer():
    plugin = ComputePlugin(service_min="2.10", service_max="2.60")
    with pytest.raises(ClientPluginError, match="2.10 to 2.60"):
        plugin.client("2.70")


def test_client_is_created_once_across_threads():
    plugin = ComputePlugin(service_max="2.60")
    barrier = threading.Barrier(8)
    results = []

    def use() -> None:
        barrier.wait()
        results.append(plugin.client())

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(client) for client in results}) == 1
    assert plugin.created == ["2.60"]
    assert plugin.service_queries == 1


def test_client_invalidate_forgets_clients_and_negotiation():
    plugin = ComputePlugin(service_max="2.60")
    first = plugin.client()
    plugin.service_max = "2.70"
    plugin.invalidate()
    assert plugin.client() is not first
    assert plugin.negotiated_version() == "2.70"


# -- errors ----------------------------------------------------------------------------------


def test_is_not_found_knows_entity_not_found_by_default():
    plugin = FakeClientPlugin()
    assert plugin.is_not_found(EntityNotFound("Server", "web"))
    assert not plugin.is_not_found(ValueError("boom"))
    assert not plugin.is_conflict(ConflictError())
    assert not plugin.is_over_limit(OverLimitError())


def test_is_conflict_and_is_over_limit_use_declared_types():
    plugin = ClassifyingPlugin()
    assert plugin.is_not_found(ServiceNotFoundError())
    assert plugin.is_conflict(ConflictError())
    assert plugin.is_over_limit(OverLimitError())
    assert not plugin.is_conflict(OverLimitError())


def test_ignore_not_found_swallows_not_found():
    plugin = ClassifyingPlugin()
    try:
        raise ServiceNotFoundError("gone")
    except ServiceNotFoundError as error:
        assert plugin.ignore_not_found(error) is None


def test_ignore_not_found_reraises_anything_else():
    plugin = ClassifyingPlugin()
    with pytest.raises(ConflictError):
        try:
            raise ConflictError("busy")
        except ConflictError as error:
            plugin.ignore_not_found(error)


def test_ignore_not_found_works_as_context_manager():
    plugin = ClassifyingPlugin()
    with plugin.ignore_not_found:
        raise ServiceNotFoundError("gone")
    with pytest.raises(ValueError), plugin.ignore_not_found:
        raise ValueError("boom")


def test_ignore_conflict_and_not_found_swallows_both_only():
    plugin = ClassifyingPlugin()
    plugin.ignore_conflict_and_not_found(ConflictError())
    plugin.ignore_conflict_and_not_found(ServiceNotFoundError())
    with pytest.raises(OverLimitError):
        plugin.ignore_conflict_and_not_found(OverLimitError())


# -- negotiation --------------------------------------------------------------------------------


def test_negotiated_version_is_the_cloud_maximum_when_older_than_the_plugin():
    assert ComputePlugin(service_max="2.60").negotiated_version() == "2.60"


def test_negotiated_version_is_the_plugin_maximum_when_the_cloud_is_newer():
    assert ComputePlugin(service_max="2.95").negotiated_version() == "2.79"


def test_negotiated_version_is_the_plugin_maximum_when_the_cloud_does_not_say():
    assert ComputePlugin().negotiated_version() == "2.79"


def test_negotiated_version_compares_numerically():
    # "2.9" sorts after "2.10" as text; the cloud's 2.10 is the newer one.
    plugin = ComputePlugin(service_max="2.10")
    assert plugin.negotiated_version() == "2.10"


def test_negotiated_version_picks_highest_common_discrete_version():
    assert KeystonePlugin(service_max="1.5").negotiated_version() == "1.2"
    assert KeystonePlugin(service_max="2.0").negotiated_version() == "2.0"
    assert KeystonePlugin(service_max="3.0").negotiated_version() == "2.0"


def test_negotiated_version_respects_the_cloud_minimum():
    plugin = KeystonePlugin(service_min="1.1", service_max="1.1")
    with pytest.raises(ClientPluginError, match="share no version"):
        plugin.negotiated_version()


def test_negotiated_version_without_common_version_names_both_sides():
    plugin = ComputePlugin(service_min="3.0", service_max="3.5")
    with pytest.raises(ClientPluginError) as raised:
        plugin.negotiated_version()
    message = str(raised.value)
    assert "client plugin 'compute' and service compute share no version" in message
    assert "the plugin knows 2.1 to 2.79" in message
    assert "the cloud offers 3.0 to 3.5" in message


def test_negotiated_version_asks_the_service_once():
    plugin = ComputePlugin(service_max="2.60")
    plugin.negotiated_version()
    plugin.negotiated_version()
    plugin.client()
    assert plugin.service_queries == 1


def test_default_microversion_from_environment_does_not_pin_the_client():
    """Seed 004: a default microversion is for a REST layer only; the plugin's client,
    which all its calls use, negotiates as if none were set."""
    plugin = ComputePlugin(service_max="2.60", environ={"OS_COMPUTE_DEFAULT_MICROVERSION": "2.5"})
    assert plugin.negotiated_version() == "2.60"
    assert plugin.client().version == "2.60"
    assert plugin.default_microversion() == ("2.5", "the environment variable OS_COMPUTE_DEFAULT_MICROVERSION")


def test_default_microversion_setting_wins_over_environment():
    plugin = ComputePlugin(
        service_max="2.60",
        settings={"compute_default_microversion": "2.7"},
        environ={"OS_COMPUTE_DEFAULT_MICROVERSION": "2.5"},
    )
    assert plugin.default_microversion() == ("2.7", "the setting compute_default_microversion")
    assert plugin.negotiated_version() == "2.60"


def test_default_microversion_names_use_the_service_type():
    plugin = BlockStoragePlugin(environ={"OS_BLOCK_STORAGE_DEFAULT_MICROVERSION": "3.44"})
    assert plugin.default_microversion() == ("3.44", "the environment variable OS_BLOCK_STORAGE_DEFAULT_MICROVERSION")
    plugin = BlockStoragePlugin(settings={"block_storage_default_microversion": "3.40"})
    assert plugin.default_microversion() == ("3.40", "the setting block_storage_default_microversion")


@pytest.mark.parametrize(
    "default",
    [
        {"environ": {"OS_COMPUTE_DEFAULT_MICROVERSION": "latest"}},
        {"environ": {"OS_COMPUTE_DEFAULT_MICROVERSION": "2.90"}},  # unknown to the plugin
        {"settings": {"compute_default_microversion": "2.70"}},  # not offered by the cloud
        {"environ": {"OS_COMPUTE_DEFAULT_MICROVERSION": "newest"}},  # not a version
    ],
)
def test_default_microversion_never_changes_what_the_client_negotiates(default):
    plugin = ComputePlugin(service_max="2.60", **default)
    assert plugin.negotiated_version() == "2.60"
    plugin.require_version("2.26", "server tags")


def test_is_version_supported_when_negotiated_version_is_at_least_as_new():
    plugin = ComputePlugin(service_max="2.60")
    assert plugin.is_version_supported("2.26")
    assert plugin.is_version_supported("2.60")
    assert plugin.is_version_supported("2.9")
    assert not plugin.is_version_supported("2.61")
    assert not plugin.is_version_supported("3.0")
    assert not plugin.is_version_supported("1.0")


def test_is_version_supported_is_false_for_unversioned_plugin():
    assert not FakeClientPlugin().is_version_supported("1.0")


def test_require_version_passes_when_supported():
    ComputePlugin(service_max="2.60").require_version("2.26", "server tags")


def test_require_version_explains_the_cloud_is_too_old():
    plugin = ComputePlugin(service_max="2.60")
    with pytest.raises(MicroversionUnavailableError) as raised:
        plugin.require_version("2.70", "the device tag of a volume")
    assert str(raised.value) == (
        "This cloud supports a maximum microversion of 2.60 for service compute and the "
        "device tag of a volume only exists on clouds with microversion 2.70. Please contact "
        "your cloud provider for information about when this feature might be available."
    )
    assert (raised.value.service, raised.value.required, raised.value.available) == ("compute", "2.70", "2.60")


def test_require_version_the_plugin_does_not_know_is_a_plugin_error():
    plugin = ComputePlugin(service_max="2.95")
    with pytest.raises(ClientPluginError) as raised:
        plugin.require_version("2.90")
    assert not isinstance(raised.value, MicroversionUnavailableError)
    assert "which client plugin 'compute' does not know (it knows 2.1 to 2.79)" in str(raised.value)


# -- registry and per-context clients -----------------------------------------------------------


def test_registry_registers_client_mapping():
    registry = ClientRegistry()
    registry.register_mapping(client_mapping(), "test_clients")
    assert registry.known_names() == ["compute", "keystone"]
    assert registry.get_class("keystone") is KeystonePlugin
    assert registry.problems == []


def test_registry_unknown_name_suggests_a_close_one():
    registry = ClientRegistry()
    registry.register_mapping(client_mapping(), "test_clients")
    with pytest.raises(UnknownClientPluginError) as raised:
        registry.get_class("keystne")
    assert str(raised.value) == "No client plugin named 'keystne' is registered (did you mean 'keystone'?)"


def test_registry_without_name_explains_default_client_name():
    with pytest.raises(UnknownClientPluginError, match="default_client_name"):
        ClientRegistry().get_class(None)


def test_registry_skips_and_reports_broken_plugins():
    class Abstract(ClientPlugin):
        name = "abstract"

    class BadVersions(FakeClientPlugin):
        name = "bad"
        supported_versions = ("1.x",)

    registry = ClientRegistry()
    registry.register_mapping(
        {"abstract": Abstract, "bad": BadVersions, "other": KeystonePlugin, "thing": object},
        "plugins/broken.py",
    )
    assert registry.known_names() == []
    problems = "\n".join(registry.problems)
    assert "create_client() is not implemented" in problems
    assert "supported_versions: '1.x' is not a version" in problems
    assert "declares name 'keystone' but is registered as 'other'" in problems
    assert "client plugin 'thing': must extend stoker.sdk.clients.ClientPlugin" in problems


def test_registry_register_raises_schema_error():
    with pytest.raises(SchemaError):
        ClientRegistry().register("keystone", object)


def test_check_client_plugin_refuses_inverted_range():
    class Inverted(FakeClientPlugin):
        name = "inverted"
        min_microversion = "2.10"
        max_microversion = "2.9"

    problems = check_client_plugin("inverted", Inverted)
    assert len(problems) == 1
    assert "min_microversion 2.10 is newer than max_microversion 2.9" in problems[0]


def test_clients_share_one_plugin_per_name():
    registry = ClientRegistry()
    registry.register_mapping(client_mapping(), "test_clients")
    clients = Clients(registry, context="ctx", settings={"compute_default_microversion": "2.3"}, environ={})
    plugin = clients.client_plugin("compute")
    assert clients.client_plugin("compute") is plugin
    assert plugin.context == "ctx"
    assert plugin.name == "compute"
    assert clients.client("compute").version == plugin.negotiated_version()


def test_clients_unknown_name_is_an_error():
    clients = Clients(ClientRegistry(), environ={})
    with pytest.raises(UnknownClientPluginError):
        clients.client_plugin("nova")
