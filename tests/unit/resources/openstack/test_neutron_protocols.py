"""The protocol of a security group rule, held to Heat's allowed values as Heat holds a
STRING property to them: each allowed value compared as a string."""

from __future__ import annotations

import pytest

from stoker.resources.openstack.neutron.security_group import SecurityGroup
from stoker.resources.openstack.neutron.security_group_rule import SecurityGroupRule
from stoker.sdk import properties
from stoker.sdk.exceptions import PropertyError

PROTOCOL_SCHEMAS = [
    SecurityGroupRule.properties_schema["protocol"],
    SecurityGroup.properties_schema["rules"].schema.schema["protocol"],
]


@pytest.mark.parametrize("schema", PROTOCOL_SCHEMAS, ids=["rule", "group"])
@pytest.mark.parametrize("value", ["tcp", "ipv6-icmp", 6, "6", "0", 255])
def test_protocol_names_and_numbers_are_accepted(schema, value):
    assert properties.convert(schema, value, "protocol") == str(value)


@pytest.mark.parametrize("schema", PROTOCOL_SCHEMAS, ids=["rule", "group"])
@pytest.mark.parametrize("value", ["06", "6.0", 256, "-1", "TCP", "carrier-pigeon"])
def test_other_protocols_are_refused_naming_the_value(schema, value):
    with pytest.raises(PropertyError, match=f'"{value}" is not an allowed value'):
        properties.convert(schema, value, "protocol")


def test_the_schema_lists_heats_values_once():
    listed = SecurityGroupRule.properties_schema["protocol"].to_dict()["constraints"][0][
        "allowed_values"
    ]
    assert listed[:256] == list(range(256))
    assert "6" not in listed and "tcp" in listed
