"""OS::Glance::WebImage and OS::Glance::Image without a cloud: where image data may come
from (no local files; URLs only where the operator allows them), Heat's validation rules,
the create body and the JSON patches of an update (tests/cloud/test_glance_image.py drives
the real Glance)."""

from __future__ import annotations

import pytest
from openstack.image.v2.image import Image

from stoker.resources.openstack import resource_mapping
from stoker.resources.openstack.glance.client_plugin import GlanceClientPlugin
from stoker.resources.openstack.glance.image import GlanceImage, GlanceWebImage
from stoker.sdk.exceptions import UpdateReplace, ValidationError
from stoker.sdk.testing import PluginHarness
from stoker.settings import Settings

URL = "https://images.example.com/disk.raw"


def glance(allow: bool | None) -> GlanceClientPlugin:
    """The real Glance client plugin, given the operator's setting (it calls no cloud
    for it); None: the setting absent, and no environment variable."""
    settings = {} if allow is None else {"allow_image_urls": allow}
    return GlanceClientPlugin(None, settings=settings, environ={})


def web_image(allow: bool | None = True, **properties) -> PluginHarness:
    values = {"disk_format": "raw", "container_format": "bare", "location": URL}
    values.update(properties)
    return PluginHarness(GlanceWebImage, values, name="image", clients={"glance": glance(allow)})


def image(allow: bool | None = False, **properties) -> PluginHarness:
    values = {"disk_format": "qcow2", "container_format": "bare"}
    values.update(properties)
    return PluginHarness(
        GlanceImage, values, name="image", clients={"glance": glance(allow)}, constraints={"glance.image": lambda value: bool(value)}
    )


def test_glance_image_types_are_registered_under_heat_names():
    mapping = resource_mapping()
    assert (mapping["OS::Glance::Image"], mapping["OS::Glance::WebImage"]) == (GlanceImage, GlanceWebImage)


def test_glance_allow_image_urls_setting_is_off_by_default():
    assert Settings().allow_image_urls is False
    assert glance(None).allows_image_urls() is False
    assert GlanceClientPlugin(None, environ={"STOKER_ALLOW_IMAGE_URLS": "true"}).allows_image_urls() is True
    assert GlanceClientPlugin(None, settings={"allow_image_urls": False}, environ={"STOKER_ALLOW_IMAGE_URLS": "1"}).allows_image_urls() is False


def test_glance_allow_image_urls_setting_reads_the_environment(monkeypatch):
    monkeypatch.setenv("STOKER_ALLOW_IMAGE_URLS", "yes")
    assert Settings.from_env().allow_image_urls is True


def test_glance_web_image_url_refused_naming_the_setting():
    with pytest.raises(ValidationError) as raised:
        web_image(allow=None).validate()

    assert "the operator setting allow_image_urls is off" in raised.value.message
    assert raised.value.path == "resources.image.properties.location"
    web_image(allow=True).validate()


@pytest.mark.parametrize("location", ["file:///etc/shadow", "/srv/images/disk.qcow2", "disk.qcow2", "FILE:///x"])
def test_glance_image_location_naming_a_local_file_is_refused(location):
    with pytest.raises(ValidationError, match="names a local file"):
        web_image(allow=True, location=location).validate()


@pytest.mark.parametrize("location", ["swift://example.com/container/obj", "ftp://example.com/disk", "http://"])
def test_glance_image_location_must_be_an_http_url(location):
    with pytest.raises(ValidationError, match="is not an http or https URL"):
        web_image(allow=True, location=location).validate()


def test_glance_image_needs_exactly_one_source():
    with pytest.raises(ValidationError, match="Exactly one of location and source_image"):
        image().validate()
    with pytest.raises(ValidationError, match="Exactly one of location and source_image"):
        image(allow=True, location=URL, source_image="cirros").validate()
    image(source_image="cirros").validate()  # no URL: allowed whatever the setting


def test_glance_image_refuses_mixed_ami_formats():
    with pytest.raises(ValidationError, match="Invalid mix of disk and container formats"):
        web_image(container_format="ami", disk_format="raw").validate()
    web_image(container_format="ami", disk_format="ami").validate()


def test_glance_web_image_members_need_shared_visibility():
    with pytest.raises(ValidationError, match='requires visibility to be "shared"'):
        web_image(members=["project-1"]).validate()
    web_image(members=["project-1"], visibility="shared").validate()


def test_glance_web_image_create_body_is_the_record_without_location():
    body = web_image(name="cirros", tags=["base"], os_distro="cirros", extra_properties={"hw_rng": True}).resource.create_body()

    assert body == {
        "name": "cirros",
        "min_disk": 0,
        "min_ram": 0,
        "protected": False,
        "disk_format": "raw",
        "container_format": "bare",
        "tags": ["base"],
        "os_distro": "cirros",
        "visibility": "private",
        "hw_rng": "True",
    }


def test_glance_image_is_public_maps_to_visibility():
    assert image(source_image="x").resource.create_body()["visibility"] == "private"
    assert image(source_image="x", is_public=True).resource.create_body()["visibility"] == "public"


def test_glance_image_update_patches_changed_fields_and_removes_dropped_properties():
    resource = web_image(extra_properties={"build": "1", "team": "a"}, os_distro="cirros").resource
    # openstacksdk's own image object, as Glance would have answered (built locally).
    live = Image(id="image-1", os_distro="cirros", build="1", team="a")

    operations = resource.patch_operations(live, {"extra_properties": {"team": "b"}, "os_distro": "ubuntu", "architecture": None})

    # Glance refuses "add" of a field that has a value: what exists is replaced.
    assert {"op": "replace", "path": "/team", "value": "b"} in operations
    assert {"op": "replace", "path": "/os_distro", "value": "ubuntu"} in operations
    assert {"op": "remove", "path": "/build"} in operations
    # Nothing to remove where the image has no value.
    assert {"op": "remove", "path": "/architecture"} not in operations
    assert len(operations) == 3
    assert resource.patch_operations(live, {"architecture": "x86_64"}) == [{"op": "add", "path": "/architecture", "value": "x86_64"}]


def test_glance_web_image_replaces_for_a_new_name_or_location():
    with pytest.raises(UpdateReplace):
        web_image().update({"disk_format": "raw", "container_format": "bare", "location": URL, "name": "other"})
    with pytest.raises(UpdateReplace):
        web_image().update({"disk_format": "raw", "container_format": "bare", "location": URL + "?v=2"})


def test_glance_allow_image_urls_setting_reaches_the_client_plugin(monkeypatch):
    from stoker.sdk.clients import Clients
    from stoker.service import build_registry
    from stoker.settings import Settings

    monkeypatch.delenv("STOKER_ALLOW_IMAGE_URLS", raising=False)

    def allows(settings: Settings) -> bool:
        registry = build_registry(settings)
        return Clients(registry.clients, object(), settings=registry.client_settings).client_plugin("glance").allows_image_urls()

    assert allows(Settings(allow_image_urls=True)) is True
    assert allows(Settings()) is False
