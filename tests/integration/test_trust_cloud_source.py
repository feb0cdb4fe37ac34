"""Keystone mode's cloud regions (clouds/trusts.py) over a real store: a
stack acts through its own trust, a nested stack through its root's, a request's work
before any stack exists through the request's token, and nothing falls back to the
server's own credentials. (tests/cloud/test_keystone_auth.py does it with a real
Keystone and real Neutron.)"""

from __future__ import annotations

import pytest

from stoker.api.auth import KeystoneTokens
from stoker.api.policy import Policy
from stoker.clouds.source import CloudConfigurationError
from stoker.clouds.trusts import TrustCloudSource, Trustee, Trusts, User, acting_user
from stoker.store import Store
from tests.support.stacks import template

KEYSTONE = {
    "auth_url": "http://127.0.0.1:1/v3",
    "username": "stoker",
    "password": "service-secret",
    "project_name": "service",
    "user_domain_name": "Default",
    "project_domain_name": "Default",
    "region_name": "RegionTwo",
}


class Context:
    def __init__(self, stack):
        self.stack = stack


@pytest.fixture
def trusts(make_service, database_url):
    service = make_service(database_url)
    keystone = KeystoneTokens(None, KEYSTONE, Policy())
    return service, Trusts(Trustee(keystone.conf, keystone.GROUP, "RegionOne"), service.store)


def test_a_stack_acts_through_its_trust_and_its_nested_stacks_through_the_roots(trusts):
    service, delegation = trusts
    store: Store = service.store
    source = TrustCloudSource(delegation)
    parent = service.create_stack(
        "parent",
        template("heat_template_version: 2021-04-16\nresources:\n  group:\n    type: OS::Heat::ResourceGroup\n    properties: {count: 1, resource_def: {type: OS::Heat::None}}\n"),
    )
    child = store.child_stacks(parent.id)[0]
    # No trust stored (a stack made without Keystone) and no request: refused, never the
    # server's own credentials.
    with pytest.raises(CloudConfigurationError, match="no credentials to act for its user"):
        source.cloud_region(Context(child))

    with store.engine.begin() as connection:
        from stoker.store import tables

        connection.execute(tables.stack_credentials.insert(), {"stack_id": parent.id, "kind": "trust", "credential": {"trust_id": "t-123", "trustor_user_id": "u1", "project_id": "p1"}, "created_at": parent.created_at})
    for stack in (parent, child):
        region = source.cloud_region(Context(stack))
        auth = region.config["auth"]
        assert auth["trust_id"] == "t-123"
        assert (auth["username"], auth["password"]) == ("stoker", "service-secret")
        assert not {"project_name", "project_domain_name", "project_id"} & set(auth)
        assert region.region_name == "RegionTwo"


def test_work_before_any_stack_acts_with_the_requests_token(trusts):
    _, delegation = trusts
    source = TrustCloudSource(delegation)
    token = acting_user.set(User("user-token", "p9", "u9", ("member", "reader")))
    try:
        region = source.cloud_region(object())
    finally:
        acting_user.reset(token)
    assert region.config["auth_type"] == "v3token"
    assert region.config["auth"] == {"auth_url": KEYSTONE["auth_url"], "token": "user-token", "project_id": "p9"}


def test_a_trust_another_member_cannot_delete_is_left_and_named_in_the_log(trusts, caplog):
    """Keystone lets only the trustor or an admin delete a trust: for anyone else stoker
    does not try, and says which trust an operator should delete. (The trustor's own
    delete is tested against a real Keystone in tests/cloud/test_keystone_auth.py.)"""
    _, delegation = trusts
    credential = {"trust_id": "t-1", "trustor_user_id": "owner", "project_id": "p"}
    delegation._delete_trust(credential, User("tok", "p", "someone-else", ("member",)), "stack s was deleted")
    delegation._delete_trust(credential, None, "stack s was deleted")
    assert caplog.text.count("stack s was deleted; its Keystone trust t-1 was left in place: only its trustor (user owner) or an admin may delete it") == 2
    assert "openstack trust delete t-1" in caplog.text
