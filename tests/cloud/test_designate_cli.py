"""The Designate types through the ``stoker`` command, as a user runs it, against the test
cloud's real Designate (``designate_service``): the type list and schemas; the public
templates of openstack/heat-templates' ``hot/designate`` (``heat_templates/designate/``), created
from their folder with parameters filled as a user would and deleted; and crash safety (the
command SIGKILLed while a zone is being created, then the next command finishes the create
and nothing is orphaned in Designate)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from stoker.service import Service
from stoker.settings import Settings

STOKER = str(Path(sys.executable).with_name("stoker"))
PUBLIC = Path(__file__).resolve().parent / "heat_templates" / "designate"
WAIT_S = 300


def _stoker(
    arguments: list[str], environment: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [STOKER, *arguments],
        env=environment,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


def _environment(cloud, tmp_path: Path) -> dict[str, str]:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
        STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
    )
    return environment


def test_designate_types_are_listed_and_shown_but_hidden_ones_are_not(tmp_path):
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith(("OS_", "STOKER_"))
    }
    environment["STOKER_DATABASE_URL"] = f"sqlite:///{tmp_path / 'stoker.sqlite'}"

    listed = _stoker(["resource", "type", "list", "-f", "json"], environment)

    assert listed.returncode == 0, listed.stderr
    names = {row["Resource Type"] for row in json.loads(listed.stdout)}
    assert {"OS::Designate::Zone", "OS::Designate::RecordSet"} <= names
    assert not names & {"OS::Designate::Domain", "OS::Designate::Record"}  # HIDDEN (seed 000)
    zone = json.loads(
        _stoker(
            ["resource", "type", "show", "OS::Designate::Zone", "-f", "json"], environment
        ).stdout
    )
    assert set(zone["properties"]) == {
        "name",
        "ttl",
        "description",
        "email",
        "type",
        "primaries",
        "masters",
        "attributes",
    }
    assert zone["properties"]["type"]["default"] == "PRIMARY"
    assert (
        zone["properties"]["name"]["update_allowed"] is False
        and zone["properties"]["ttl"]["update_allowed"] is True
    )
    assert set(zone["attributes"]) == {"serial", "show"}
    recordset = json.loads(
        _stoker(
            ["resource", "type", "show", "OS::Designate::RecordSet", "-f", "json"], environment
        ).stdout
    )
    assert set(recordset["properties"]) == {"name", "ttl", "description", "type", "records", "zone"}
    assert recordset["properties"]["zone"]["constraints"] == [
        {"custom_constraint": "designate.zone", "description": None}
    ]
    hidden = _stoker(["resource", "type", "show", "OS::Designate::Domain"], environment)
    assert (
        hidden.returncode != 0
        and "not supported" in hidden.stderr
        and "Traceback" not in hidden.stderr
    )


def test_public_designate_templates_create_and_delete(designate_service, tmp_path):
    """Both use the HIDDEN v1 types (Domain, Record), which stoker makes a zone and a
    recordset; Heat 27 would accept them and create nothing."""
    cloud = designate_service.cloud
    dns = cloud.connect("demo").dns
    environment = _environment(cloud, tmp_path)
    demo = ["--os-cloud", cloud.cloud("demo")]
    suffix = secrets.token_hex(3)
    domain = f"designate-{suffix}.com."

    created = _stoker(
        [*demo, "stack", "create", f"domain-{suffix}", "-t", "desginate_domain.yaml",
         "--parameter", f"name={domain}", "--wait", "-f", "json"],
        environment, cwd=PUBLIC,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert (
        "HIDDEN" in created.stderr or "removed" in created.stderr
    )  # validation warns, as Heat's message says
    zone = dns.find_zone(domain)
    assert zone is not None and (zone.email, zone.ttl, zone.description, zone.status) == (
        "abc@xyz.com",
        3600,
        "Sample test domain",
        "ACTIVE",
    )
    shown = json.loads(
        _stoker([*demo, "stack", "show", f"domain-{suffix}", "-f", "json"], environment).stdout
    )
    serial = {o["output_key"]: o["output_value"] for o in shown["outputs"]}["serial"]
    assert int(serial) > 0

    # The record template makes its own domain (another zone) with an MX record in it.
    record_domain = f"example-{suffix}.com."
    recorded = _stoker(
        [*demo, "stack", "create", f"record-{suffix}", "-t", "desginate_record.yaml",
         "--parameter", f"domain_name={record_domain}", "--parameter", f"domain_email=admin@example-{suffix}.com",
         "--parameter", f"name=mail.{record_domain}", "--wait"],
        environment, cwd=PUBLIC,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    record_zone = dns.find_zone(record_domain)
    (mx,) = [r for r in dns.recordsets(record_zone) if r.type == "MX"]
    assert (mx.name, mx.records, mx.ttl, mx.status) == (
        f"mail.{record_domain}",
        ["10 sample.mailserver.com."],
        3600,
        "ACTIVE",
    )

    for stack in (f"record-{suffix}", f"domain-{suffix}"):
        deleted = _stoker([*demo, "stack", "delete", stack, "--yes", "--wait"], environment)
        assert deleted.returncode == 0, deleted.stderr
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (dns.find_zone(domain) or dns.find_zone(record_domain)):
        time.sleep(0.5)
    assert dns.find_zone(domain) is None and dns.find_zone(record_domain) is None


def _zone_row(url: str, stack_name: str, name: str = "zone"):
    service = Service(Settings(database_url=url))
    try:
        rows = [row for row in service.list_resources(stack_name) if row.name == name]
        return rows[0] if rows else None
    except Exception:  # noqa: BLE001 - the stack row may not be written yet
        return None
    finally:
        service.close()


def test_crash_during_zone_create_then_retry_leaves_nothing_orphaned(designate_service, tmp_path):
    cloud = designate_service.cloud
    dns = cloud.connect("demo").dns
    environment = _environment(cloud, tmp_path)
    demo = ["--os-cloud", cloud.cloud("demo")]
    suffix = secrets.token_hex(3)
    stack_name, zone_name = f"crash-{suffix}", f"crash-{suffix}.org."
    template = tmp_path / "zone.yaml"
    template.write_text(
        yaml.safe_dump(
            {
                "heat_template_version": "2021-04-16",
                "resources": {
                    "zone": {
                        "type": "OS::Designate::Zone",
                        "properties": {"name": zone_name, "email": "dns@example.org"},
                    },
                    "www": {
                        "type": "OS::Designate::RecordSet",
                        "properties": {
                            "zone": {"get_resource": "zone"},
                            "type": "A",
                            "records": ["192.0.2.7"],
                        },
                    },
                },
            }
        )
    )
    # The engine dies while Designate's worker is still making the zone, or its record set
    # when the zone was ready at the first look (a quiet machine): the first whose handler
    # returned a token, its id and token recorded (STOKER_FAULT_AT: the process kills
    # itself there; watching the rows for that moment missed it when Designate was quick).
    creating = subprocess.run(
        [STOKER, *demo, "stack", "create", stack_name, "-t", str(template), "--wait"],
        env={**environment, "STOKER_FAULT_AT": "token-saved"}, capture_output=True, text=True, timeout=WAIT_S,
    )  # fmt: skip
    assert creating.returncode == -signal.SIGKILL, (creating.stdout, creating.stderr)
    rows = [_zone_row(environment["STOKER_DATABASE_URL"], stack_name, name) for name in ("zone", "www")]
    interrupted = [row for row in rows if row is not None and (row.action, row.status) == ("CREATE", "IN_PROGRESS")]
    assert len(interrupted) == 1 and interrupted[0].physical_resource_id, rows
    recorded = rows[0].physical_resource_id
    assert [zone.id for zone in dns.zones() if zone.name == zone_name] == [recorded]

    # The next command resumes the interrupted create, then does its own work.
    retried = _stoker(
        [*demo, "stack", "update", stack_name, "-t", str(template), "--wait"], environment
    )
    assert retried.returncode == 0, retried.stderr
    assert "Resuming actions interrupted by an engine restart" in retried.stderr
    row = _zone_row(environment["STOKER_DATABASE_URL"], stack_name)
    assert (row.status, row.physical_resource_id) == ("COMPLETE", recorded)
    assert dns.get_zone(recorded).status == "ACTIVE"
    assert [r.type for r in dns.recordsets(recorded)].count("A") == 1

    deleted = _stoker([*demo, "stack", "delete", stack_name, "--yes", "--wait"], environment)
    assert deleted.returncode == 0, deleted.stderr
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and dns.find_zone(zone_name) is not None:
        time.sleep(0.5)
    assert dns.find_zone(zone_name) is None
