"""Property translation through real plugins: a Heat-style server with deprecated
properties, and OS::Heat::RandomString's retired ``sequence``."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from stoker.resources.heat.random_string import RandomString
from stoker.sdk import properties
from stoker.sdk.exceptions import PropertyError
from stoker.sdk.properties import Properties
from stoker.sdk.resource import Resource
from stoker.sdk.translation import apply_rules, check_rules, resource_rules
from stoker.template.definitions import ResourceDefinition
from tests.unit.sdk.test_translation import HIDDEN, _list_of, _string

# -- through real plugins ---------------------------------------------------------------------


class _Stack:
    name = "translation"
    id = "00000000-0000-0000-0000-000000000000"


class Server(Resource):
    """A server whose old flavor_id and networks' uuid are translated (seed 000's example)."""

    PROPERTIES = (FLAVOR, FLAVOR_ID, NETWORKS) = ("flavor", "flavor_id", "networks")
    NETWORK, NETWORK_UUID = "network", "uuid"

    properties_schema = {
        FLAVOR: _string(required=True),
        FLAVOR_ID: _string(support_status=HIDDEN),
        NETWORKS: _list_of(network=_string(), uuid=_string(support_status=HIDDEN)),
    }

    def translation_rules(self, props):
        return [
            properties.TranslationRule(
                props,
                properties.TranslationRule.REPLACE,
                [self.FLAVOR],
                value_path=[self.FLAVOR_ID],
            ),
            properties.TranslationRule(
                props,
                properties.TranslationRule.REPLACE,
                translation_path=[self.NETWORKS, self.NETWORK],
                value_name=self.NETWORK_UUID,
            ),
        ]


def _plugin(cls: type[Resource], name: str, type_name: str, data: dict[str, Any]) -> Resource:
    definition = ResourceDefinition(name, type_name, data).bind(lambda value: value)
    resource = cls(
        name,
        definition,
        _Stack(),
        uuid=str(uuid.uuid4()),
        properties=definition.properties(cls.properties_schema),
    )
    # What Resource.__init__ does once the engine wires translation in (a second time is
    # harmless: the plugin then sees translated values).
    apply_rules(resource.properties, resource_rules(resource, resource.properties))
    return resource


def test_resource_translation_rules_translate_old_template():
    server = _plugin(
        Server, "web", "Test::Server", {"flavor_id": "m1.small", "networks": [{"uuid": "net-1"}]}
    )
    server.validate()
    assert server.properties["flavor"] == "m1.small"
    assert server.properties["networks"] == [{"network": "net-1", "uuid": None}]
    assert server.properties.data == {"flavor_id": "m1.small", "networks": [{"uuid": "net-1"}]}
    assert check_rules(Server.properties_schema, server.translation_rules(server.properties)) == []


def test_resource_translation_conflict_fails_validation():
    server = _plugin(Server, "web", "Test::Server", {"flavor": "m1", "flavor_id": "m1.small"})
    with pytest.raises(PropertyError) as caught:
        server.validate()
    assert str(caught.value) == (
        "resources.web.properties.flavor: Cannot define the following properties at the same time: flavor, flavor_id."
    )


def test_random_string_sequence_becomes_character_class():
    secret = _plugin(
        RandomString, "secret", "OS::Heat::RandomString", {"sequence": "digits", "length": 40}
    )
    assert secret.properties["character_classes"] == [{"class": "digits", "min": 1}]
    assert secret.properties["sequence"] == ""
    assert "sequence" not in secret.properties.resolved()
    secret.validate()
    secret.handle_create()
    value = secret.get_reference_id()
    assert len(value) == 40
    assert value.isdigit()


def test_random_string_sequence_adds_to_given_character_classes():
    secret = _plugin(
        RandomString,
        "secret",
        "OS::Heat::RandomString",
        {
            "sequence": "octdigits",
            "character_classes": [{"class": "uppercase", "min": 3}],
            "length": 64,
        },
    )
    assert secret.properties["character_classes"] == [
        {"class": "uppercase", "min": 3},
        {"class": "octdigits", "min": 1},
    ]
    secret.validate()
    secret.handle_create()
    value = secret.get_reference_id()
    assert set(value) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ01234567")
    assert sum(char.isupper() for char in value) >= 3
    assert sum(char.isdigit() for char in value) >= 1


def test_random_string_without_sequence_has_no_rules():
    secret = _plugin(RandomString, "secret", "OS::Heat::RandomString", {"length": 8})
    assert secret.translation_rules(secret.properties) == []
    assert secret.properties.translation is None


def test_random_string_rules_fit_its_schema():
    props = Properties(RandomString.properties_schema, {"sequence": "letters"})
    secret = _plugin(RandomString, "secret", "OS::Heat::RandomString", {"sequence": "letters"})
    assert check_rules(RandomString.properties_schema, secret.translation_rules(props)) == []


def test_random_string_recorded_values_rebuild_without_error():
    # A record holds "" for an unset sequence, which AllowedValues rejects: rebuilding the
    # resource from it (as delete does) must not fail in translation_rules.
    secret = _plugin(
        RandomString, "secret", "OS::Heat::RandomString", {"length": 12, "sequence": ""}
    )
    assert secret.properties.translation is None
    assert secret.properties["length"] == 12


def test_random_string_invalid_sequence_is_reported_by_validation():
    secret = _plugin(RandomString, "secret", "OS::Heat::RandomString", {"sequence": "emoji"})
    with pytest.raises(PropertyError) as caught:
        secret.validate()
    assert caught.value.path == "resources.secret.properties.sequence"


class _SeedServer(Server):
    """Seed 000 writes ``translation_rules(self)``: the rules read ``self.properties``."""

    def translation_rules(self):
        return Server.translation_rules(self, self.properties)


@pytest.mark.parametrize("cls", [Server, _SeedServer], ids=["with-props", "without-props"])
def test_resource_rules_call_translation_rules_either_way(cls):
    server = _plugin(cls, "server", "OS::Nova::Server", {"flavor_id": "m1.small", "networks": [{"uuid": "private"}]})
    assert len(resource_rules(server, server.properties)) == 2
    assert server.properties["flavor"] == "m1.small"
    assert server.properties["networks"][0]["network"] == "private"
