"""OS::Designate::Zone and OS::Designate::RecordSet (and the HIDDEN Domain and Record, which
stoker makes a v2 zone and recordset) against the real Designate the ``designate_service``
add-on starts: create, update in place, replacement, check (also failing once an object is
deleted behind the stack's back), delete tolerating what is already gone, validation errors
in their places; openstacksdk, as the project's member, is the witness.

Designate's back end here is its own ``fake`` pool target, with designate-mdns as the pool's
nameserver (tests/cloud/addons/designate.py): zones and recordsets really go PENDING ->
ACTIVE through Designate's worker, but no BIND or PowerDNS serves them.
"""

from __future__ import annotations

import secrets
import time

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data, states

HOT = "2021-04-16"


@pytest.fixture
def dns(designate_service):
    """The project member's openstacksdk dns proxy; stoker acts as the same user."""
    cloud = designate_service.cloud
    set_cloud_source(EnvironmentCloudSource(cloud.cloud_environ("demo")))
    yield cloud.connect("demo").dns
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, dns):
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def zone_template(
    zone: str,
    *,
    email: str = "dns@example.org",
    ttl: int = 3600,
    address: str = "192.0.2.10",
    **www: object,
) -> dict:
    records = {
        "zone": {"get_resource": "zone"},
        "type": "A",
        "records": [address],
        "name": f"www.{zone}",
        "ttl": 600,
    }
    records.update(www)
    return {
        "heat_template_version": HOT,
        "resources": {
            "zone": {
                "type": "OS::Designate::Zone",
                "properties": {
                    "name": zone,
                    "email": email,
                    "ttl": ttl,
                    "description": "stoker's test zone",
                },
            },
            "www": {"type": "OS::Designate::RecordSet", "properties": records},
            # No name: Heat's physical name, within the zone.
            "mail": {
                "type": "OS::Designate::RecordSet",
                "properties": {
                    "zone": {"get_resource": "zone"},
                    "type": "MX",
                    "records": [f"10 mx.{zone}"],
                },
            },
        },
        "outputs": {
            "serial": {"value": {"get_attr": ["zone", "serial"]}},
            "zone_name": {"value": {"get_attr": ["zone", "show", "name"]}},
            "www_records": {"value": {"get_attr": ["www", "show", "records"]}},
        },
    }


def wait_gone(find, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            find()
        except Exception as error:  # noqa: BLE001 - openstacksdk's NotFoundException
            if getattr(error, "status_code", None) == 404:
                return True
            raise
        time.sleep(0.5)
    return False


def test_designate_zone_and_recordsets_create_update_replace_check_delete(stacks, dns):
    service, names = stacks
    suffix = secrets.token_hex(3)
    zone_name = f"stoker-{suffix}.org."
    stack_name = f"dns-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(zone_template(zone_name)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    zone = dns.get_zone(ids["zone"])
    assert (zone.name, zone.email, zone.ttl, zone.type, zone.status) == (
        zone_name,
        "dns@example.org",
        3600,
        "PRIMARY",
        "ACTIVE",
    )
    www = dns.get_recordset(ids["www"], zone)
    assert (www.name, www.type, www.records, www.ttl, www.status) == (
        f"www.{zone_name}",
        "A",
        ["192.0.2.10"],
        600,
        "ACTIVE",
    )
    mail = dns.get_recordset(ids["mail"], zone)
    assert mail.name.startswith(f"{stack_name}-mail-") and mail.name.endswith(f".{zone_name}")
    assert (mail.type, mail.records, mail.status) == ("MX", [f"10 mx.{zone_name}"], "ACTIVE")
    shown = outputs(service, stack_name)
    # The serial when the zone became ACTIVE (the producer raises it as recordsets follow).
    assert 0 < int(shown["serial"]) <= dns.get_zone(zone).serial
    assert (shown["zone_name"], shown["www_records"]) == (zone_name, ["192.0.2.10"])
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the zone's e-mail, TTL; the recordset's records and TTL. Same ids, ACTIVE again.
    changed = zone_template(
        zone_name, email="hostmaster@example.org", ttl=7200, address="192.0.2.11"
    )
    changed["resources"]["www"]["properties"]["ttl"] = 900
    stack = service.update_stack(stack_name, from_data(changed))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    zone = dns.get_zone(ids["zone"])
    assert (zone.email, zone.ttl, zone.status) == ("hostmaster@example.org", 7200, "ACTIVE")
    www = dns.get_recordset(ids["www"], zone)
    assert (www.records, www.ttl, www.status) == (["192.0.2.11"], 900, "ACTIVE")

    # Replacement: a recordset's type is not updated in place (A -> AAAA).
    replaced = zone_template(
        zone_name, email="hostmaster@example.org", ttl=7200, type="AAAA", address="2001:db8::1"
    )
    replaced["resources"]["www"]["properties"]["records"] = ["2001:db8::1"]
    stack = service.update_stack(stack_name, from_data(replaced))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    new_ids = physical_ids(service, stack_name)
    assert new_ids["zone"] == ids["zone"] and new_ids["mail"] == ids["mail"]
    assert new_ids["www"] != ids["www"]
    www = dns.get_recordset(new_ids["www"], zone)
    assert (www.type, www.records, www.status) == ("AAAA", ["2001:db8::1"], "ACTIVE")
    assert wait_gone(lambda: dns.get_recordset(ids["www"], zone))

    # Replacement of the zone (a new name): new zone with new recordsets, the old zone gone.
    moved = f"moved-{suffix}.org."
    stack = service.update_stack(stack_name, from_data(zone_template(moved)))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    moved_ids = physical_ids(service, stack_name)
    assert moved_ids["zone"] != ids["zone"]
    assert dns.get_zone(moved_ids["zone"]).name == moved
    assert dns.get_recordset(moved_ids["www"], moved_ids["zone"]).name == f"www.{moved}"
    assert wait_gone(lambda: dns.get_zone(ids["zone"]))

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert wait_gone(lambda: dns.get_zone(moved_ids["zone"]))
    assert [z for z in dns.zones() if suffix in z.name] == []


def test_designate_check_fails_and_delete_succeeds_after_out_of_band_deletes(stacks, dns):
    service, names = stacks
    suffix = secrets.token_hex(3)
    zone_name = f"gone-{suffix}.org."
    stack_name = f"dns-gone-{suffix}"
    names.append(stack_name)
    stack = service.create_stack(stack_name, from_data(zone_template(zone_name)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)

    # One recordset deleted behind the stack's back: check reads the live objects.
    dns.delete_recordset(dns.get_recordset(ids["www"], ids["zone"]))
    assert wait_gone(lambda: dns.get_recordset(ids["www"], ids["zone"]))
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert "could not be found" in checked.status_reason
    assert states(service, stack_name) == {
        "zone": "CHECK_COMPLETE",
        "www": "CHECK_FAILED",
        "mail": "CHECK_COMPLETE",
    }

    # Then the zone itself (taking the other recordset with it): delete has nothing to do.
    dns.delete_zone(ids["zone"])
    assert wait_gone(lambda: dns.get_zone(ids["zone"]))
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"


def _refusal(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_designate_validation_errors_name_their_place(stacks, dns):
    service, _ = stacks
    suffix = secrets.token_hex(3)

    no_email = {
        "heat_template_version": HOT,
        "resources": {
            "zone": {"type": "OS::Designate::Zone", "properties": {"name": f"x-{suffix}.org."}}
        },
    }
    refused = _refusal(service, no_email)
    assert "Property email is required for zone type PRIMARY" in refused
    assert "resources.zone.properties.email" in refused

    secondary = {
        "heat_template_version": HOT,
        "resources": {
            "zone": {
                "type": "OS::Designate::Zone",
                "properties": {"name": f"x-{suffix}.org.", "type": "SECONDARY"},
            }
        },
    }
    refused = _refusal(service, secondary)
    assert "Property masters is required for zone type SECONDARY" in refused
    assert "resources.zone.properties.primaries" in refused

    # The designate.zone constraint asks the real Designate.
    nowhere = {
        "heat_template_version": HOT,
        "resources": {
            "www": {
                "type": "OS::Designate::RecordSet",
                "properties": {
                    "zone": f"nowhere-{suffix}.org.",
                    "type": "A",
                    "records": ["192.0.2.1"],
                },
            }
        },
    }
    refused = _refusal(service, nowhere)
    assert f"nowhere-{suffix}.org." in refused and "resources.www.properties.zone" in refused

    bad_type = {
        "heat_template_version": HOT,
        "resources": {
            "www": {
                "type": "OS::Designate::RecordSet",
                "properties": {"zone": "z", "type": "HINFO", "records": ["x"]},
            }
        },
    }
    refused = _refusal(service, bad_type)
    assert "resources.www.properties.type" in refused and "HINFO" in refused


def test_designate_hidden_domain_and_record_work_as_zone_and_recordset(stacks, dns):
    """Heat 9's schema of the v1 types, on Designate v2: the record's priority goes before
    its data, data and priority update in place, a new type replaces the record."""
    service, names = stacks
    suffix = secrets.token_hex(3)
    domain_name = f"v1-{suffix}.org."
    stack_name = f"dns-v1-{suffix}"
    names.append(stack_name)

    def template(record_type: str, data: str, priority: int) -> dict:
        return {
            "heat_template_version": "2015-04-30",
            "resources": {
                "domain": {
                    "type": "OS::Designate::Domain",
                    "properties": {"name": domain_name, "email": "v1@example.org"},
                },
                "record": {
                    "type": "OS::Designate::Record",
                    "properties": {
                        "domain": {"get_resource": "domain"},
                        "name": f"mx.{domain_name}",
                        "type": record_type,
                        "data": data,
                        "priority": priority,
                    },
                },
            },
        }

    stack = service.create_stack(stack_name, from_data(template("MX", f"mail.{domain_name}", 10)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    assert dns.get_zone(ids["domain"]).email == "v1@example.org"
    record = dns.get_recordset(ids["record"], ids["domain"])
    assert (record.type, record.records, record.status) == (
        "MX",
        [f"10 mail.{domain_name}"],
        "ACTIVE",
    )

    stack = service.update_stack(stack_name, from_data(template("MX", f"mail2.{domain_name}", 20)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    assert dns.get_recordset(ids["record"], ids["domain"]).records == [f"20 mail2.{domain_name}"]

    stack = service.update_stack(stack_name, from_data(template("TXT", '"v=spf1 -all"', 20)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replaced = physical_ids(service, stack_name)["record"]
    assert replaced != ids["record"]
    record = dns.get_recordset(replaced, ids["domain"])
    assert (record.type, record.records) == ("TXT", ['"v=spf1 -all"'])
    assert wait_gone(lambda: dns.get_recordset(ids["record"], ids["domain"]))

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert wait_gone(lambda: dns.get_zone(ids["domain"]))
