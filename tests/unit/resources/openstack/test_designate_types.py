"""OS::Designate::Zone, RecordSet, Domain and Record without a cloud: Heat's validation rules,
the requests built from properties (``primaries`` sent as ``masters``, a v1 record's priority
put before its data), what replaces, and how a status ends a wait (no client is called here;
tests/cloud/test_designate_types.py and test_designate_cli.py drive the real Designate)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from stoker.resources.openstack import constraint_mapping, resource_mapping
from stoker.resources.openstack.designate.client_plugin import settled
from stoker.resources.openstack.designate.domain import DesignateDomain
from stoker.resources.openstack.designate.record import DesignateRecord
from stoker.resources.openstack.designate.recordset import DesignateRecordSet
from stoker.resources.openstack.designate.zone import DesignateZone
from stoker.sdk import support
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.testing import PluginHarness

# designate.zone asks the cloud; the cloud tests cover it. Here a value only has to be a name.
NAMES = {"designate.zone": lambda value: isinstance(value, str) and bool(value)}


def test_designate_types_and_constraint_are_registered_under_heat_names():
    mapping = resource_mapping()
    assert mapping["OS::Designate::Zone"] is DesignateZone
    assert mapping["OS::Designate::RecordSet"] is DesignateRecordSet
    assert mapping["OS::Designate::Domain"] is DesignateDomain
    assert mapping["OS::Designate::Record"] is DesignateRecord
    assert "designate.zone" in constraint_mapping()
    assert (
        DesignateZone.support_status.version == DesignateRecordSet.support_status.version == "8.0.0"
    )
    for hidden, replacement in (
        (DesignateDomain, "OS::Designate::Zone"),
        (DesignateRecord, "OS::Designate::RecordSet"),
    ):
        assert (
            hidden.support_status.status == support.HIDDEN
            and hidden.support_status.version == "10.0.0"
        )
        assert replacement in hidden.support_status.message


def test_designate_zone_primary_needs_email_and_secondary_needs_primaries():
    with pytest.raises(ValidationError) as raised:
        PluginHarness(DesignateZone, {"name": "example.org."}, name="zone").resource.validate()
    assert raised.value.message == "Property email is required for zone type PRIMARY"
    assert raised.value.path == "resources.zone.properties.email"

    with pytest.raises(ValidationError) as raised:
        PluginHarness(
            DesignateZone, {"name": "example.org.", "type": "SECONDARY"}, name="zone"
        ).resource.validate()
    assert raised.value.message == "Property masters is required for zone type SECONDARY"
    assert raised.value.path == "resources.zone.properties.primaries"

    PluginHarness(
        DesignateZone, {"name": "example.org.", "type": "SECONDARY", "primaries": ["192.0.2.1"]}
    ).resource.validate()


def test_designate_zone_sends_primaries_as_masters_and_leaves_out_empty_values():
    zone = PluginHarness(
        DesignateZone,
        {
            "name": "example.org.",
            "type": "SECONDARY",
            "primaries": ["192.0.2.1"],
            "description": "",
        },
    ).resource

    assert zone.create_arguments() == {
        "name": "example.org.",
        "type": "SECONDARY",
        "masters": ["192.0.2.1"],
    }


def test_designate_recordset_without_name_gets_heat_physical_name_in_its_zone():
    recordset = PluginHarness(
        DesignateRecordSet,
        {"zone": "example.org.", "type": "A", "records": ["192.0.2.1"], "ttl": 300},
        name="www",
        stack_name="web",
        constraints=NAMES,
    ).resource

    arguments = recordset.create_arguments("example.org.")

    assert arguments["name"].startswith("web-www-") and arguments["name"].endswith(".example.org.")
    assert {key: arguments[key] for key in ("type", "records", "ttl")} == {
        "type": "A",
        "records": ["192.0.2.1"],
        "ttl": 300,
    }
    assert "zone" not in arguments


def test_designate_recordset_refuses_a_type_heat_does_not_allow():
    with pytest.raises(ValidationError) as raised:
        PluginHarness(
            DesignateRecordSet,
            {"zone": "z", "type": "HINFO", "records": ["x"]},
            name="www",
            constraints=NAMES,
        ).resource.validate()
    assert "HINFO" in str(raised.value) and "type" in (raised.value.path or "")


def test_designate_record_puts_priority_before_data_for_mx_and_srv_only():
    mx = PluginHarness(
        DesignateRecord,
        {
            "name": "a.example.org.",
            "type": "MX",
            "data": "mail.example.org.",
            "priority": 10,
            "domain": "example.org.",
            "ttl": 60,
        },
        constraints=NAMES,
    ).resource
    a = PluginHarness(
        DesignateRecord,
        {
            "name": "a.example.org.",
            "type": "A",
            "data": "192.0.2.5",
            "priority": 10,
            "domain": "example.org.",
        },
        constraints=NAMES,
    ).resource

    assert mx.create_arguments("example.org.") == {
        "name": "a.example.org.",
        "type": "MX",
        "records": ["10 mail.example.org."],
        "ttl": 60,
    }
    assert a.create_arguments("example.org.")["records"] == ["192.0.2.5"]
    assert a.needs_replace_with_prop_diff({"type"}, {}, {}) and not a.needs_replace_with_prop_diff(
        {"data"}, {}, {}
    )


def test_designate_domain_requires_email_as_heat_9_did():
    with pytest.raises(ValidationError):
        PluginHarness(DesignateDomain, {"name": "example.org."}, name="domain").resource.validate()
    domain = PluginHarness(
        DesignateDomain, {"name": "example.org.", "email": "a@example.org"}
    ).resource
    domain.validate()
    assert domain.create_arguments() == {"name": "example.org.", "email": "a@example.org"}


@pytest.mark.parametrize(("status", "done"), [("PENDING", False), ("ACTIVE", True)])
def test_designate_wait_ends_when_no_longer_pending(status, done):
    assert settled(SimpleNamespace(status=status), "zone") is done


def test_designate_wait_fails_on_error_in_heat_words():
    with pytest.raises(ResourceFailure) as raised:
        settled(SimpleNamespace(status="ERROR"), "zone")
    assert str(raised.value) == 'Went to status ERROR due to "Error in zone"'
