"""Finding flavors and images by name or id against the real Nova and Glance: what a
template names is found, a name two images share is refused with the way out, a missing
one is named, and each distinct value costs one request (openstacksdk's finders ask for
the value as an id first, which a name always misses; ours list first where that is one
request). Requests are counted as this process sends them, so other clients of the cloud
do not count."""

from __future__ import annotations

import secrets
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack.constraints import CACHE
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@contextmanager
def sent_requests() -> Iterator[Counter]:
    """(method, path) -> how many requests this process sent, while the block runs."""
    from requests.adapters import HTTPAdapter

    original = HTTPAdapter.send
    sent: Counter = Counter()
    lock = threading.Lock()

    def send(adapter, request, *args, **kwargs):
        with lock:
            sent[(request.method, urlsplit(request.url).path)] += 1
        return original(adapter, request, *args, **kwargs)

    HTTPAdapter.send = send
    try:
        yield sent
    finally:
        HTTPAdapter.send = original


def servers(count: int, flavor: str, image: str) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            f"vm{index}": {
                "type": "OS::Nova::Server",
                "properties": {"flavor": flavor, "image": image, "networks": [{"network": "bench-none"}]},
            }
            for index in range(count)
        },
    }


def lookups(sent: Counter, fragment: str) -> int:
    return sum(number for (_, path), number in sent.items() if fragment in path)


def messages(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.preview_stack(f"find-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_flavor_and_image_named_by_30_servers_cost_one_request_each(admin_cloud, make_service):
    service = make_service()
    connection = admin_cloud.connect("admin")
    flavor = connection.compute.find_flavor("m1.tiny", ignore_missing=False)
    image = connection.image.find_image("stoker-tiny", ignore_missing=False)

    with sent_requests() as by_name:
        problems = messages(service, servers(30, "m1.tiny", "stoker-tiny"))
    with sent_requests() as by_id:
        problems_by_id = messages(service, servers(30, flavor.id, image.id))

    # Found (only the made-up network is refused), whether named or given by id.
    for text in (problems, problems_by_id):
        assert "bench-none" in text
        assert "m1.tiny" not in text and "stoker-tiny" not in text and flavor.id not in text and image.id not in text
    assert lookups(by_name, "/flavors") == 1, by_name
    assert lookups(by_name, "/images") == 1, by_name
    assert lookups(by_id, "/flavors") == 1, by_id
    # An image id is asked for as an id (openstacksdk's way, one request when it exists).
    assert lookups(by_id, "/images") == 1, by_id
    # A preview is followed by no action: it hands its answers to none.
    assert "None" not in CACHE._handed


def test_missing_flavor_and_image_are_named(admin_cloud, make_service):
    suffix = secrets.token_hex(3)
    service = make_service()

    no_flavor = messages(service, servers(1, f"no-flavor-{suffix}", "stoker-tiny"))
    no_image = messages(service, servers(1, "m1.tiny", f"no-image-{suffix}"))

    assert f"resources.vm0.properties.flavor: The flavor (no-flavor-{suffix}) could not be found." in no_flavor
    assert f"resources.vm0.properties.image: The image (no-image-{suffix}) could not be found." in no_image


def test_image_name_two_images_share_is_refused_with_the_way_out(admin_cloud, make_service):
    suffix = secrets.token_hex(3)
    service = make_service()
    connection = admin_cloud.connect("admin")
    twins = [
        connection.image.create_image(name=f"twin-{suffix}", disk_format="raw", container_format="bare", data=b"twin")
        for _ in range(2)
    ]
    try:
        problems = messages(service, servers(1, "m1.tiny", f"twin-{suffix}"))
        chosen = messages(service, servers(1, "m1.tiny", twins[0].id))
    finally:
        for image in twins:
            connection.image.delete_image(image, ignore_missing=True)

    assert f"Multiple physical resources were found with name (twin-{suffix})." in problems
    assert "give the image's id instead" in problems
    assert twins[0].id not in chosen and "bench-none" in chosen
