"""OS::Glance::WebImage and OS::Glance::Image against the real Glance of the test cloud:
data from a URL only where the operator allows it (Glance's web-download import, from an
HTTP server this test runs), data copied from an image already in Glance, updates in
place, replacement, check, delete; openstacksdk is the witness and nothing may be left."""

from __future__ import annotations

import hashlib
import secrets
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.template.errors import TemplateErrors
from tests.cloud.test_import_round_trip import round_trip
from tests.support.stacks import from_data, states

IMAGE_BYTES = secrets.token_bytes(96 * 1024)


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, admin_cloud):
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {record.name: record.physical_resource_id for record in service.list_resources(stack_name)}


def _external_address() -> str:
    """This machine's address on its default route: Glance's web-download refuses
    loopback addresses (and, by default, any port but 80 and 443)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.254", 9))  # no packet is sent for a UDP connect
        return str(probe.getsockname()[0])


@pytest.fixture
def image_url() -> Iterator[str]:
    """An HTTP server on port 80 of this machine's external address serving one image."""
    address = _external_address()
    if address.startswith("127."):
        pytest.skip("no non-loopback address for Glance's web-download to fetch from")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(IMAGE_BYTES)))
            self.end_headers()
            self.wfile.write(IMAGE_BYTES)

        def log_message(self, *arguments: object) -> None:
            pass

    try:
        server = ThreadingHTTPServer((address, 80), Handler)
    except OSError as error:
        pytest.skip(f"cannot serve on {address}:80 for Glance to fetch from: {error}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{address}/disk-{secrets.token_hex(3)}.raw"
    finally:
        server.shutdown()
        server.server_close()


def web_image_template(suffix: str, url: str, **changes: object) -> dict:
    values: dict = {
        "name": f"web-{suffix}",
        "disk_format": "raw",
        "container_format": "bare",
        "location": url,
        "tags": ["base"],
        "os_distro": "cirros",
        "extra_properties": {"stoker_test": "yes", "build": "1"},
    }
    values.update(changes)
    return {"heat_template_version": "2021-04-16", "resources": {"image": {"type": "OS::Glance::WebImage", "properties": values}}}


def test_glance_web_image_url_refused_unless_the_operator_allows_it(admin_cloud, stacks, monkeypatch):
    service, _ = stacks
    monkeypatch.delenv("STOKER_ALLOW_IMAGE_URLS", raising=False)
    suffix = secrets.token_hex(3)

    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"refused-{suffix}", from_data(web_image_template(suffix, "http://example.com/disk.raw")))

    assert "the operator setting allow_image_urls is off" in str(raised.value)
    assert admin_cloud.connect("admin").image.find_image(f"web-{suffix}") is None


@pytest.mark.parametrize("location", ["file:///etc/passwd", "/var/lib/images/disk.raw", "swift://example.com/c/o"])
def test_glance_image_location_other_than_http_refused_even_when_urls_are_allowed(admin_cloud, stacks, monkeypatch, location):
    service, _ = stacks
    monkeypatch.setenv("STOKER_ALLOW_IMAGE_URLS", "true")
    suffix = secrets.token_hex(3)

    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"refused-{suffix}", from_data(web_image_template(suffix, location)))

    message = str(raised.value)
    assert "local file" in message or "is not an http or https URL" in message
    assert admin_cloud.connect("admin").image.find_image(f"web-{suffix}") is None


def test_glance_web_image_import_update_replace_check_delete(admin_cloud, stacks, monkeypatch, image_url):
    service, names = stacks
    monkeypatch.setenv("STOKER_ALLOW_IMAGE_URLS", "true")
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    stack_name = f"webimage-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(web_image_template(suffix, image_url)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    image_id = physical_ids(service, stack_name)["image"]
    image = connection.image.get_image(image_id)
    assert (image.name, image.status, image.size, image.visibility) == (f"web-{suffix}", "active", len(IMAGE_BYTES), "private")
    assert image.checksum == hashlib.md5(IMAGE_BYTES).hexdigest()  # noqa: S324 - Glance's checksum
    assert (image.tags, image.os_distro, image.properties.get("build")) == (["base"], "cirros", "1")
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: tags, a property, extra properties (one removed), shared with a member,
    # deactivated.
    demo = connection.identity.find_project("demo")
    changed = web_image_template(
        suffix,
        image_url,
        tags=["base", "tested"],
        os_distro="ubuntu",
        extra_properties={"stoker_test": "yes"},
        visibility="shared",
        members=[demo.id],
        active=False,
    )
    stack = service.update_stack(stack_name, from_data(changed))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["image"] == image_id
    image = connection.image.get_image(image_id)
    assert (sorted(image.tags), image.os_distro, image.status, image.visibility) == (
        ["base", "tested"],
        "ubuntu",
        "deactivated",
        "shared",
    )
    assert "build" not in image.properties
    assert [member.member_id for member in connection.image.members(image_id)] == [demo.id]

    # Reactivated in place; then a new name replaces the image (Heat updates no name).
    stack = service.update_stack(stack_name, from_data(web_image_template(suffix, image_url)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert connection.image.get_image(image_id).status == "active"
    stack = service.update_stack(stack_name, from_data(web_image_template(suffix, image_url, name=f"web2-{suffix}")))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replacement_id = physical_ids(service, stack_name)["image"]
    assert replacement_id != image_id
    assert connection.image.find_image(image_id) is None
    assert connection.image.get_image(replacement_id).name == f"web2-{suffix}"

    connection.image.delete_image(replacement_id)
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["image"] == "CHECK_FAILED"

    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert connection.image.find_image(replacement_id) is None


def test_glance_web_image_is_imported_by_the_id_it_had(admin_cloud, make_service, monkeypatch, image_url):
    """Made from the URL, abandoned, imported back: no second download, no drift (the
    tags, properties and extra properties as Glance keeps them), deleted with the stack."""
    monkeypatch.setenv("STOKER_ALLOW_IMAGE_URLS", "true")
    service = make_service(enable_stack_abandon=True)
    images = admin_cloud.connect("admin").image
    suffix = secrets.token_hex(3)
    round_trip(service, web_image_template(suffix, image_url), f"rt-web-{suffix}", lambda: {"images": len(list(images.images()))})


def test_glance_image_copies_an_existing_image_without_urls(admin_cloud, stacks, monkeypatch):
    service, names = stacks
    monkeypatch.delenv("STOKER_ALLOW_IMAGE_URLS", raising=False)
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    source = connection.image.get_image(admin_cloud.image_id)
    stack_name = f"copy-{suffix}"
    names.append(stack_name)

    def template(tags: list[str]) -> dict:
        properties = {
            "name": f"copy-{suffix}",
            "disk_format": "raw",
            "container_format": "bare",
            "source_image": source.name,
            "tags": tags,
        }
        return {"heat_template_version": "2021-04-16", "resources": {"copy": {"type": "OS::Glance::Image", "properties": properties}}}

    stack = service.create_stack(stack_name, from_data(template(["copied"])))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    copy_id = physical_ids(service, stack_name)["copy"]
    assert copy_id != source.id
    copy = connection.image.get_image(copy_id)
    assert (copy.status, copy.size, copy.checksum, copy.visibility) == ("active", source.size, source.checksum, "private")

    stack = service.update_stack(stack_name, from_data(template(["copied", "again"])))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert sorted(connection.image.get_image(copy_id).tags) == ["again", "copied"]
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert connection.image.find_image(copy_id) is None
    assert connection.image.get_image(source.id).status == "active"  # the source is untouched
