"""The values of the cloud's custom constraints (``Service.constraint_values``, behind
``GET .../custom_constraints/{name}/values`` and the launch wizard's lists) read from the
real test cloud: flavors with their sizes, images, networks, security groups, volume
types, each by the name a template gives."""

from __future__ import annotations

import secrets

from tests.cloud.fixture import admin_cloud  # noqa: F401 - the fixture


def test_constraint_values_are_the_clouds_objects(admin_cloud, make_service):  # noqa: F811 - the fixture
    service = make_service()
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    network = connection.network.create_network(name=f"listed-{suffix}")
    try:
        flavors = service.constraint_values("nova.flavor")
        tiny = next(entry for entry in flavors["values"] if entry["value"] == "m1.tiny")
        flavor = connection.compute.find_flavor("m1.tiny")
        assert tiny == {
            "value": "m1.tiny",
            "id": flavor.id,
            "label": f"m1.tiny ({flavor.vcpus} vCPU, {flavor.ram} MB RAM, {flavor.disk} GB disk)",
        }
        assert flavors["truncated"] is False
        assert {e["value"] for e in flavors["values"]} == {f.name for f in connection.compute.flavors()}

        images = {e["value"] for e in service.constraint_values("glance.image")["values"]}
        assert "stoker-tiny" in images
        networks = service.constraint_values("neutron.network")["values"]
        assert {"value": f"listed-{suffix}", "id": network.id, "label": f"listed-{suffix}"} in networks
        groups = {e["value"] for e in service.constraint_values("neutron.security_group")["values"]}
        assert groups and all(groups)  # each project's "default": by id where names repeat
        types = {e["value"] for e in service.constraint_values("cinder.vtype")["values"]}
        assert types == {t.name for t in connection.block_storage.types()}
    finally:
        connection.network.delete_network(network)
