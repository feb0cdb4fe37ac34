"""Seed 004's rules for a client layer that consumes microversions, one test each, against
the real Nova and Cinder of the test cloud. An older cloud is the same service behind
``tests/cloud/capping.py``'s proxy, which lowers the advertised maximum and refuses what
lies above it; the proxy's record of each request's microversion header is the witness.

The proxy first: test_capping_proxy_refuses_above_its_cap_as_the_real_service_refuses.
The rules, and the test of each:
  discovery from the version document        test_microversion_range_is_discovered_...
  (once per connection, however many threads start together)
  the newest version both sides support      test_negotiation_uses_the_newest_...
  a feature newer than the cloud: the seed's message, at stack validation (KeyPair type)
                                             test_feature_newer_than_the_cloud_fails_...
  a feature emulated on an older cloud, with a warning ("get me a network"): in
  test_nova_server.py, test_nova_server_allocate_network_auto_is_emulated_below_compute_2_37
  {service_type}_default_microversion (clouds.yaml) and OS_COMPUTE_DEFAULT_MICROVERSION
  honoured by the REST path, not by the proxies (nor by a third party's client plugin:
  tests/acceptance/test_seed_plugins.py)
                                             test_default_microversion_from_clouds_yaml_...,
                                             test_default_microversion_from_the_environment_...
  an explicit microversion per REST call     test_rest_takes_an_explicit_microversion_...
  a default above the cloud's maximum        test_default_microversion_above_the_cloud_...
  normalised objects: a field a microversion adds reads as None; one it removes is read at
  the last microversion that has it while the cloud offers it (None only where the cloud
  offers nothing older)                      test_field_added_after_the_cloud_maximum_...,
                                             test_field_removed_by_a_newer_microversion_...
  a request field a microversion removes (personality): sent at the last microversion
  that has it                                test_personality_is_sent_at_the_last_...
  an emulation warns (an attached volume extended below block-storage 3.42)
                                             test_extending_an_attached_volume_below_...
  seed 002's API_VERSIONS groups fed by the negotiated version
                                             test_api_versions_group_follows_...
"""

from __future__ import annotations

import secrets
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import urllib3
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack.cinder.client_plugin import CinderClientPlugin
from stoker.resources.openstack.nova.client_plugin import NovaClientPlugin
from stoker.sdk.exceptions import MicroversionUnavailableError
from stoker.template.errors import TemplateErrors
from tests.cloud.capping import capped_environ
from tests.support.stacks import from_data

# What the services' API paths start with, by service type (the catalog's URL paths).
VERSION_PATHS = {"compute": "/v2.1", "block-storage": "/v3"}
PLUGINS = {"compute": NovaClientPlugin, "block-storage": CinderClientPlugin}


class Context:
    """A stack context of its own: each gets its own connection (cloud.connection_for)."""


@pytest.fixture
def use_cloud():
    """Point stoker's cloud source at a set of ``OS_*`` variables; undone afterwards."""

    def use(environ) -> None:
        set_cloud_source(EnvironmentCloudSource(dict(environ)))

    yield use
    set_cloud_source(None)


def real_version_document(cloud, service_type: str) -> dict:
    """The real service's root version document entry of its current major version."""
    root = cloud.endpoints[service_type].rsplit("/", 1)[0] + "/"
    document = urllib3.request("GET", root).json()
    return next(entry for entry in document["versions"] if entry["status"] == "CURRENT")


def set_default_microversion(environ, service_type: str, microversion: str) -> None:
    """Add ``<service_type>_default_microversion`` to the clouds.yaml ``environ`` names."""
    path = Path(environ["OS_CLIENT_CONFIG_FILE"])
    configuration = yaml.safe_load(path.read_text())
    key = f"{service_type.replace('-', '_')}_default_microversion"
    configuration["clouds"][environ["OS_CLOUD"]][key] = microversion
    path.write_text(yaml.safe_dump(configuration))


def asked(proxy, path: str) -> list[str | None]:
    """The microversions the requests to ``path`` asked the proxy for, in order."""
    return [microversion for _method, seen, microversion in proxy.requests if seen == path]


# -- the proxy stands in for an older cloud faithfully ------------------------------------


def test_capping_proxy_refuses_above_its_cap_as_the_real_service_refuses(openstack_cloud):
    token = openstack_cloud.connect("admin").session.get_token()
    real = openstack_cloud.endpoints["compute"]
    maximum = real_version_document(openstack_cloud, "compute")["version"]
    headers = {"X-Auth-Token": token, "OpenStack-API-Version": "compute 2.999"}
    real_answer = urllib3.request("GET", real + "/flavors", headers=headers)

    with capped_environ(openstack_cloud, "compute", "2.36") as environ:
        capped = environ.proxy.url + "/v2.1/flavors"
        refused = urllib3.request(
            "GET", capped, headers={**headers, "OpenStack-API-Version": "compute 2.37"}
        )
        legacy = urllib3.request(
            "GET", capped, headers={"X-Auth-Token": token, "X-OpenStack-Nova-API-Version": "2.37"}
        )
        served = urllib3.request(
            "GET", capped, headers={**headers, "OpenStack-API-Version": "compute 2.36"}
        )
        latest = urllib3.request(
            "GET", capped, headers={**headers, "OpenStack-API-Version": "compute latest"}
        )

    assert real_answer.status == 406
    assert real_answer.json() == {
        "computeFault": {
            "code": 406,
            "message": f"Version 2.999 is not supported by the API. Minimum is 2.1 and maximum is {maximum}.",
        }
    }
    assert (refused.status, legacy.status) == (406, 406)
    assert (
        refused.json()
        == legacy.json()
        == {
            "computeFault": {
                "code": 406,
                "message": "Version 2.37 is not supported by the API. Minimum is 2.1 and maximum is 2.36.",
            }
        }
    )
    assert refused.headers["OpenStack-API-Version"] == "compute 2.37"
    # Below the cap the real service answers, headers included; "latest" means the cap.
    assert served.status == 200 and served.headers["OpenStack-API-Version"] == "compute 2.36"
    assert "x-openstack-request-id" in {key.lower() for key in served.headers}
    assert latest.headers["OpenStack-API-Version"] == "compute 2.36"
    assert [seen[2] for seen in environ.proxy.requests] == ["2.37", "2.37", "2.36", "latest"]


# -- discovery and negotiation ----------------------------------------------------------


@pytest.mark.parametrize(
    ("service_type", "maximum"), [("compute", "2.36"), ("block-storage", "3.40")]
)
def test_microversion_range_is_discovered_from_the_version_document(
    openstack_cloud, use_cloud, service_type, maximum
):
    real = real_version_document(openstack_cloud, service_type)
    use_cloud(openstack_cloud.cloud_environ("admin"))
    uncapped = PLUGINS[service_type](Context(), environ={})
    assert uncapped.get_max_microversion() == real["version"]

    with capped_environ(openstack_cloud, service_type, maximum) as environ:
        use_cloud(environ)
        plugin = PLUGINS[service_type](Context(), environ={})

        assert (plugin.get_min_microversion(), plugin.get_max_microversion()) == (
            real["min_version"],
            maximum,
        )
        assert plugin.negotiated_version() == maximum
        # Learnt from the version document, which is asked without a microversion.
        version_path = VERSION_PATHS[service_type]
        documents = [seen for seen in environ.proxy.requests if seen[1].rstrip("/") == version_path]
        assert documents and all(microversion is None for _, _, microversion in documents)


def test_microversion_range_is_discovered_once_by_threads_starting_together(
    openstack_cloud, use_cloud
):
    """A stack's handlers share one plugin: eight first calls at once read the version
    document once (as one call alone does), not once each."""
    with capped_environ(openstack_cloud, "compute", "2.36") as environ:
        use_cloud(environ)
        plugin = NovaClientPlugin(Context(), environ={})
        barrier = threading.Barrier(8)

        def first_call(_index: int) -> None:
            barrier.wait()
            list(plugin.client().flavors())

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(first_call, range(8)))

        documents = [seen for seen in environ.proxy.requests if seen[1].rstrip("/") == "/v2.1"]
        assert asked(environ.proxy, "/v2.1/flavors/detail") == ["2.36"] * 8
        # keystoneauth reads the catalog's URL, then the document's own link.
        assert [path for _, path, _ in documents] == ["/v2.1", "/v2.1/"]


@pytest.mark.parametrize(
    ("service_type", "maximum", "call", "path", "expected"),
    [
        # openstacksdk's Flavor knows up to 2.61: the cloud's 2.36 below that, else 2.61.
        ("compute", "2.36", "flavors", "/v2.1/flavors/detail", "2.36"),
        ("compute", "2.75", "flavors", "/v2.1/flavors/detail", "2.61"),
        # Volume knows up to 3.71.
        ("block-storage", "3.40", "volumes", "/v3/volumes/detail", "3.40"),
    ],
)
def test_negotiation_uses_the_newest_microversion_both_sides_support(
    openstack_cloud, use_cloud, service_type, maximum, call, path, expected
):
    with capped_environ(openstack_cloud, service_type, maximum) as environ:
        use_cloud(environ)
        plugin = PLUGINS[service_type](Context(), environ={})

        list(getattr(plugin.client(), call)())

        assert asked(environ.proxy, path) == [expected]


# -- a feature newer than the cloud -------------------------------------------------------

# A resource type as a plugin author writes it, on the built-in ``nova`` client plugin,
# declaring a feature's microversions as seed 002's API_VERSIONS group.
VERSIONED_PLUGIN = '''
from stoker.sdk import properties, properties_group, resource


class RulesInApiVersionsGroup(resource.Resource):
    """Server group rules (compute 2.64 and later), declared as an API_VERSIONS group."""

    default_client_name = "nova"
    properties_schema = {
        "name": properties.Schema(properties.Schema.STRING, "A name."),
        "rules": properties.Schema(properties.Schema.MAP, "Rules of the group."),
    }
    properties_groups_schema = [
        {properties_group.API_VERSIONS: {
            properties_group.CLIENT_PLUGIN: "nova",
            properties_group.VERSIONS: VERSIONS,
            properties_group.PROPERTIES: [["rules"]],
        }},
    ]


def resource_mapping():
    return {"Test::Nova::RulesInApiVersionsGroup": RulesInApiVersionsGroup}
'''


@pytest.fixture
def versioned_service(openstack_cloud, make_service, tmp_path):
    """A Service with the test type; VERSIONS holds every compute microversion from 2.64
    to the real cloud's maximum (a group lists versions one by one)."""
    real = real_version_document(openstack_cloud, "compute")["version"]
    versions = [f"2.{minor}" for minor in range(64, int(real.split(".")[1]) + 1)]
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "versioned.py").write_text(
        textwrap.dedent(VERSIONED_PLUGIN).replace("VERSIONS,", f"{versions!r},")
    )
    service = make_service(plugin_dirs=[str(plugins)])
    assert service.registry.problems == []
    return service


def rules_template(resource_type: str) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "group": {
                "type": resource_type,
                "properties": {"rules": {"max_server_per_host": 2}},
            }
        },
    }


def validation_errors(service, template: dict) -> str:
    """What stack create refuses the template for (Heat's template validate, like
    stoker's, leaves property values to create)."""
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"refused-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_feature_newer_than_the_cloud_fails_stack_validation_with_the_seed_message(
    openstack_cloud, use_cloud, service
):
    """OS::Nova::KeyPair's ``type`` needs compute 2.2: fine on the real Nova, the seed's
    message on a cloud whose maximum is 2.1."""
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "key": {
                "type": "OS::Nova::KeyPair",
                "properties": {"name": f"typed-{secrets.token_hex(3)}", "type": "ssh"},
            }
        },
    }
    use_cloud(openstack_cloud.cloud_environ("admin"))
    service.validate_template(from_data(template))

    with capped_environ(openstack_cloud, "compute", "2.1") as environ:
        use_cloud(environ)
        errors = validation_errors(service, template)

    assert "resources.key" in errors
    assert (
        "This cloud supports a maximum microversion of 2.1 for service compute and this "
        "feature only exists on clouds with microversion 2.2. Please contact your cloud "
        "provider for information about when this feature might be available"
    ) in errors
    assert "the key pair property 'type' needs microversion 2.2" in errors
    # Found out from the version document alone: nothing asked Nova for 2.2.
    assert all(microversion is None for _, _, microversion in environ.proxy.requests)


def test_api_versions_group_follows_the_version_negotiated_with_the_cloud(
    openstack_cloud, use_cloud, versioned_service
):
    template = rules_template("Test::Nova::RulesInApiVersionsGroup")
    use_cloud(openstack_cloud.cloud_environ("admin"))
    versioned_service.validate_template(from_data(template))

    with capped_environ(openstack_cloud, "compute", "2.36") as environ:
        use_cloud(environ)
        errors = validation_errors(versioned_service, template)
        without_rules = rules_template("Test::Nova::RulesInApiVersionsGroup")
        without_rules["resources"]["group"]["properties"] = {"name": "no rules"}
        versioned_service.validate_template(from_data(without_rules))

    assert (
        "resources.group.properties.rules: property 'rules' requires API version 2.64, 2.65"
        in errors
    )
    assert "of client 'nova'; the negotiated version is 2.36" in errors


# -- the default microversion: the REST path only ----------------------------------------


def test_default_microversion_from_clouds_yaml_is_honoured_by_the_rest_path_only(
    openstack_cloud, use_cloud
):
    with capped_environ(openstack_cloud, "compute", "2.75") as environ:
        set_default_microversion(environ, "compute", "2.20")
        use_cloud(environ)
        plugin = NovaClientPlugin(Context(), environ={})

        answer = plugin.rest("GET", "/servers")
        list(plugin.client().flavors())

        assert plugin.default_microversion() == (
            "2.20",
            "compute_default_microversion in clouds.yaml",
        )
        assert answer.headers["OpenStack-API-Version"] == "compute 2.20"
        assert asked(environ.proxy, "/v2.1/servers") == ["2.20"]
        # The proxy's call negotiates as if no default were set (seed 004).
        assert asked(environ.proxy, "/v2.1/flavors/detail") == ["2.61"]


def test_default_microversion_from_the_environment_beats_clouds_yaml_on_the_rest_path_only(
    openstack_cloud, use_cloud
):
    with capped_environ(openstack_cloud, "compute", "2.75") as environ:
        set_default_microversion(environ, "compute", "2.20")
        use_cloud(environ)
        plugin = NovaClientPlugin(Context(), environ={"OS_COMPUTE_DEFAULT_MICROVERSION": "2.25"})

        plugin.rest("GET", "/servers")
        list(plugin.client().flavors())

        assert asked(environ.proxy, "/v2.1/servers") == ["2.25"]
        assert asked(environ.proxy, "/v2.1/flavors/detail") == ["2.61"]


def test_rest_takes_an_explicit_microversion_per_call(openstack_cloud, use_cloud):
    with capped_environ(openstack_cloud, "compute", "2.36") as environ:
        set_default_microversion(environ, "compute", "2.20")
        use_cloud(environ)
        plugin = NovaClientPlugin(Context(), environ={})

        explicit = plugin.rest("GET", "/servers", microversion="2.10")
        latest = plugin.rest("GET", "/servers", microversion="latest")
        default = plugin.rest("GET", "/servers")

        assert [
            answer.headers["OpenStack-API-Version"] for answer in (explicit, latest, default)
        ] == [
            "compute 2.10",
            "compute 2.36",
            "compute 2.20",
        ]
        # "latest" is sent as the newest the cloud offers, not left out (which would
        # make the service answer in its oldest microversion, 2.1).
        assert asked(environ.proxy, "/v2.1/servers") == ["2.10", "2.36", "2.20"]


@pytest.mark.parametrize(
    ("where", "source"),
    [
        ("clouds.yaml", "compute_default_microversion in clouds.yaml"),
        ("environment", "the environment variable OS_COMPUTE_DEFAULT_MICROVERSION"),
        ("argument", "the microversion argument of rest()"),
    ],
)
def test_default_microversion_above_the_cloud_maximum_fails_clearly(
    openstack_cloud, use_cloud, where, source
):
    with capped_environ(openstack_cloud, "compute", "2.36") as environ:
        if where == "clouds.yaml":
            set_default_microversion(environ, "compute", "2.60")
        use_cloud(environ)
        plugin = NovaClientPlugin(
            Context(),
            environ={"OS_COMPUTE_DEFAULT_MICROVERSION": "2.60"} if where == "environment" else {},
        )

        with pytest.raises(MicroversionUnavailableError) as raised:
            plugin.rest(
                "GET", "/servers", **({"microversion": "2.60"} if where == "argument" else {})
            )
        flavors = list(plugin.client().flavors())

    assert str(raised.value) == (
        f"{source} asks for microversion 2.60 of service compute, but this cloud supports "
        "microversions 2.1 to 2.36 (choose a microversion from 2.1 to 2.36, or 'latest')"
    )
    assert (raised.value.required, raised.value.available) == ("2.60", "2.36")
    assert asked(environ.proxy, "/v2.1/servers") == []  # refused before it was sent
    # The proxies ignore the default: they still work on this cloud.
    assert flavors and asked(environ.proxy, "/v2.1/flavors/detail") == ["2.36"]


# -- normalised objects --------------------------------------------------------------------


def test_field_added_after_the_cloud_maximum_reads_as_none(openstack_cloud, use_cloud):
    """A flavor's description (compute 2.55): set on the real cloud, absent from what a
    2.36 cloud returns, so None there; the object has the same fields either way."""
    admin = openstack_cloud.connect("admin")
    name = f"described-{secrets.token_hex(3)}"
    flavor = admin.compute.create_flavor(name=name, ram=64, vcpus=1, disk=0, description="a flavor")
    try:
        use_cloud(openstack_cloud.cloud_environ("admin"))
        uncapped = NovaClientPlugin(Context(), environ={}).find("flavor", name)
        with capped_environ(openstack_cloud, "compute", "2.36") as environ:
            use_cloud(environ)
            capped = NovaClientPlugin(Context(), environ={}).find("flavor", name)
    finally:
        admin.compute.delete_flavor(flavor)

    assert uncapped.description == "a flavor"
    assert capped.description is None
    assert (capped.id, capped.name, capped.ram) == (uncapped.id, name, 64)
    assert set(capped.to_dict()) == set(uncapped.to_dict())
    # openstacksdk's find: by id (404 for a name), then the list filtered by name.
    flavor_calls = [seen for seen in environ.proxy.requests if seen[1].startswith("/v2.1/flavors")]
    assert flavor_calls and {microversion for _, _, microversion in flavor_calls} == {"2.36"}


def test_field_removed_by_a_newer_microversion_is_read_where_the_cloud_still_has_it(
    openstack_cloud, use_cloud
):
    """A hypervisor's vcpus, removed in compute 2.88 (openstacksdk's Hypervisor knows
    2.88): read at 2.87 while the cloud offers it (the real cloud; a 2.36 cloud at 2.36),
    and None only on a cloud that offers nothing older than 2.88. The object has the
    same fields either way."""
    real = real_version_document(openstack_cloud, "compute")["version"]
    seen = {}
    for label, maximum, minimum in (("real", real, None), ("old", "2.36", None), ("newer only", real, "2.88")):
        # The real cloud, behind a proxy that caps nothing, so that it witnesses the calls.
        with capped_environ(openstack_cloud, "compute", maximum, minimum=minimum) as environ:
            use_cloud(environ)
            hypervisor = next(
                iter(NovaClientPlugin(Context(), environ={}).client().hypervisors(details=True))
            )
        seen[label] = hypervisor, asked(environ.proxy, "/v2.1/os-hypervisors/detail")

    assert seen["real"][1] == ["2.87"] and seen["old"][1] == ["2.36"]
    for label in ("real", "old"):
        assert isinstance(seen[label][0].vcpus, int) and seen[label][0].vcpus > 0, label
    # Nothing older than 2.88 offered: asked without a microversion, answered at 2.88.
    assert seen["newer only"][1] == [None]
    assert seen["newer only"][0].vcpus is None
    assert len({hypervisor.name for hypervisor, _ in seen.values()}) == 1
    assert len({frozenset(hypervisor.to_dict()) for hypervisor, _ in seen.values()}) == 1


# -- a field a newer microversion removes from a request: personality (compute 2.57) ----------


def personality_server(name: str) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "name": name,
                    "flavor": "m1.tiny",
                    "image": "stoker-tiny",
                    "networks": [{"allocate_network": "none"}],
                    "personality": {"/etc/motd": "hello from stoker"},
                },
            }
        },
    }


def test_personality_is_sent_at_the_last_microversion_that_has_it(openstack_cloud, use_cloud, service):
    """Compute 2.57 removed personality: a cloud that still offers 2.56 creates the
    server at 2.56 (openstacksdk would use its newest, which refuses it); only a cloud that
    offers nothing older refuses the template, with Heat's message."""
    real = real_version_document(openstack_cloud, "compute")["version"]
    name = f"personality-{secrets.token_hex(3)}"
    admin = openstack_cloud.connect("admin")
    with capped_environ(openstack_cloud, "compute", real) as environ:
        use_cloud(environ)
        try:
            stack = service.create_stack(name, from_data(personality_server(name)))
            created = [microversion for method, path, microversion in environ.proxy.requests if (method, path) == ("POST", "/v2.1/servers")]
            server_id = next(record.physical_resource_id for record in service.list_resources(name))
        finally:
            deleted = service.delete_stack(name)
    with capped_environ(openstack_cloud, "compute", real, minimum="2.57") as environ:
        use_cloud(environ)
        refused = validation_errors(service, personality_server(name))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert created == ["2.56"]
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert admin.compute.find_server(server_id) is None or admin.compute.get_server(server_id).status == "DELETED"
    assert "resources.server.properties" in refused
    assert "Cannot use the personality parameter as nova no longer supports it. Use user_data instead." in refused


# -- an emulation warns: extending an attached volume below block-storage 3.42 ----------------


def attached_volume(size: int) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"server": {"type": "string"}},
        "resources": {
            "data": {"type": "OS::Cinder::Volume", "properties": {"size": size}},
            "attachment": {
                "type": "OS::Cinder::VolumeAttachment",
                "properties": {"instance_uuid": {"get_param": "server"}, "volume_id": {"get_resource": "data"}},
            },
        },
    }


def test_extending_an_attached_volume_below_block_storage_3_42_warns_of_the_detach(
    openstack_cloud, use_cloud, service
):
    """Cinder extends an attached volume from 3.42 on; below, the volume is detached,
    extended and attached back (Heat's way), and the resource's events say so."""
    from tests.cloud.fixture import server_outside_stoker

    name = f"extend-{secrets.token_hex(3)}"
    admin = openstack_cloud.connect("admin")
    with (
        server_outside_stoker(openstack_cloud, "extend", "10.33.0.0/24") as server,
        capped_environ(openstack_cloud, "block-storage", "3.41") as environ,
    ):
        use_cloud(environ)
        parameters = {"server": server.id}
        try:
            created = service.create_stack(name, from_data(attached_volume(1)), parameters=parameters)
            updated = service.update_stack(name, from_data(attached_volume(2)), parameters=parameters)
            volume_id = next(record.physical_resource_id for record in service.list_resources(name) if record.name == "data")
            volume = admin.block_storage.get_volume(volume_id)
            warnings = [
                event.resource_status_reason
                for event in service.list_events(name, "data")
                if event.resource_status_reason.startswith("Warning")
            ]
        finally:
            deleted = service.delete_stack(name)
        # The extend went to the capped Cinder (a cloud refuses it above 3.41).
        extends = [
            microversion
            for method, path, microversion in environ.proxy.requests
            if method == "POST" and path.endswith(f"/volumes/{volume_id}/action")
        ]

    assert created.state == "CREATE_COMPLETE", created.status_reason
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    assert (volume.size, volume.status) == (2, "in-use")
    assert [attachment["server_id"] for attachment in volume.attachments] == [server.id]
    assert warnings == [
        "Warning: This cloud supports a maximum microversion of 3.41 for service block-storage, and "
        f"extending an attached volume needs 3.42: volume {volume_id} is detached from server {server.id}, "
        "extended and attached back"
    ]
    assert extends
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
