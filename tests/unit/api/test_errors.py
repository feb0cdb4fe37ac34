"""Heat's fault body (api.errors.fault): each status with webob's title and explanation."""

from __future__ import annotations

import json

import pytest

from stoker.api import errors
from stoker.api.openapi_components import FAULTS


@pytest.mark.parametrize("status", sorted(FAULTS))
def test_fault_of_every_documented_status_has_its_own_title(status):
    body = json.loads(errors.fault(status, "SomeError", "the message").body)
    assert body["code"] == status
    # Found with the OpenAPI document: a 503 (Keystone does not answer) was titled as
    # a 500, "Internal Server Error"; webob's HTTPServiceUnavailable is not.
    assert (body["title"], body["explanation"]) == errors._TITLES[status]
    assert body["title"] != "Internal Server Error"


def test_fault_of_a_keystone_outage_is_service_unavailable():
    body = json.loads(errors.fault(503, "HTTPServiceUnavailable", "Keystone does not answer").body)
    assert body["title"] == "Service Unavailable"
    assert body["explanation"] == "The server is currently unavailable. Please try again at a later time."
