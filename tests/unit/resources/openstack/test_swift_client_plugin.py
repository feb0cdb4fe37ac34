"""The ``swift`` client plugin's pure logic: its Heat name, openstacksdk's errors as
Swift's 404 and 409, and which paths are Swift temp URLs of the project (Heat's
``is_valid_temp_url_path``). Nothing here talks to a cloud: tests/cloud/test_swift_*.py
use the real Swift."""

from __future__ import annotations

import pytest
import requests
from openstack import exceptions as sdk_exceptions

from stoker.resources.openstack import client_mapping, constraint_mapping
from stoker.resources.openstack.swift.client_plugin import SwiftClientPlugin

PROJECT = "0123456789abcdef0123456789abcdef"


class ProjectSwift(SwiftClientPlugin):
    """The plugin as the project PROJECT sees it (the connection's project, fixed)."""

    @property
    def project_id(self) -> str:
        return PROJECT


def swift_error(status: int) -> BaseException:
    response = requests.Response()
    response.status_code = status
    response.url = f"http://127.0.0.1/v1/AUTH_{PROJECT}/box"
    response._content = b"<html><h1>Not Found</h1></html>"
    try:
        sdk_exceptions.raise_from_response(response)
    except sdk_exceptions.SDKException as error:
        return error
    raise AssertionError("raise_from_response raised nothing")


def test_swift_client_plugin_has_heat_name_and_no_constraints():
    assert client_mapping()["swift"] is SwiftClientPlugin
    # Heat 27 registers no custom constraint for Swift.
    assert not [name for name in constraint_mapping() if name.startswith("swift")]


def test_swift_client_plugin_classifies_not_found_and_conflict():
    plugin = SwiftClientPlugin()
    assert plugin.is_not_found(swift_error(404)) and not plugin.is_conflict(swift_error(404))
    assert plugin.is_conflict(swift_error(409)) and not plugin.is_not_found(swift_error(409))


@pytest.mark.parametrize(
    ("path", "valid"),
    [
        (f"/v1/AUTH_{PROJECT}/stack-id/handle", True),
        (f"/v1/AUTH_{PROJECT}/stack-id/a/b", True),
        (f"/v2/AUTH_{PROJECT}/stack-id/handle", False),
        ("/v1/AUTH_someone/stack-id/handle", False),
        (f"/v1/AUTH_{PROJECT}//handle", False),
        (f"/v1/AUTH_{PROJECT}/stack-id/", False),
        (f"/v1/AUTH_{PROJECT}/stack-id///", False),
        (f"/v1/AUTH_{PROJECT}/stack-id", False),
    ],
)
def test_swift_temp_url_path_must_be_an_object_of_the_project(path, valid):
    assert ProjectSwift().is_valid_temp_url_path(path) is valid
