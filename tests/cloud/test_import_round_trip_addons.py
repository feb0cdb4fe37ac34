"""The add-on services' importable types taken over by ``stack import`` on the real test
cloud, as test_import_round_trip.py does for the six core services: a stack made by
stoker is abandoned, then a new stack imports every one of its objects by the id it had.
The import creates nothing (no resource is created), holds the same ids and no drift; an
update with the same template touches none of them; the delete removes them.

Each family's service is started only for its test (its fixture); the stacks act as the
project member, as a template author would, but for Octavia and Manila's share type,
which are an administrator's."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.cloud.test_aodh_types import Witness, alarms_template
from tests.cloud.test_import_round_trip import round_trip

HOT = "2021-04-16"


@pytest.fixture
def acting_as(openstack_cloud) -> Iterator:
    """Call with a user name: stoker's plugins act as that user of the cloud."""
    yield lambda user: set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ(user)))
    set_cloud_source(None)


@pytest.fixture
def service(make_service):
    return make_service(enable_stack_abandon=True)


def stack(resources: dict) -> dict:
    return {"heat_template_version": HOT, "resources": resources}


def test_designate_zone_and_record_set_are_imported(designate_service, acting_as, service):
    acting_as("demo")
    suffix = secrets.token_hex(3)
    zone = f"rt-{suffix}.example.org."
    data = stack(
        {
            "zone": {"type": "OS::Designate::Zone", "properties": {"name": zone, "email": "dns@example.org", "ttl": 3600}},
            "www": {
                "type": "OS::Designate::RecordSet",
                "properties": {"zone": {"get_resource": "zone"}, "type": "A", "records": ["192.0.2.10"], "name": f"www.{zone}", "ttl": 600},
            },
        }
    )
    round_trip(service, data, f"rt-dns-{suffix}")
    # Heat's hidden v1 names, on Designate v2.
    domain = f"rt1-{suffix}.example.org."
    old = {
        "heat_template_version": "2015-04-30",
        "resources": {
            "domain": {"type": "OS::Designate::Domain", "properties": {"name": domain, "email": "v1@example.org"}},
            "record": {"type": "OS::Designate::Record", "properties": {"domain": {"get_resource": "domain"}, "name": f"mx.{domain}", "type": "MX", "data": f"mail.{domain}", "priority": 10}},
        },
    }
    round_trip(service, old, f"rt-dns1-{suffix}")


def test_barbican_secret_orders_and_containers_are_imported(barbican_service, acting_as, service):
    acting_as("demo")
    suffix = secrets.token_hex(3)
    data = stack(
        {
            "key": {"type": "OS::Barbican::Order", "properties": {"type": "key", "name": f"rt-key-{suffix}", "algorithm": "aes", "bit_length": 256, "mode": "cbc"}},
            "private": {"type": "OS::Barbican::Secret", "properties": {"name": f"rt-private-{suffix}", "payload": "private-rt"}},
            "public": {"type": "OS::Barbican::Secret", "properties": {"name": f"rt-public-{suffix}", "payload": "public-rt"}},
            "rsa": {"type": "OS::Barbican::RSAContainer", "properties": {"name": f"rt-rsa-{suffix}", "private_key_ref": {"get_resource": "private"}, "public_key_ref": {"get_resource": "public"}}},
            "secret": {"type": "OS::Barbican::Secret", "properties": {"name": f"rt-{suffix}", "payload": "s3cret-rt", "algorithm": "aes"}},
            "box": {
                "type": "OS::Barbican::GenericContainer",
                "properties": {"name": f"rt-{suffix}-box", "secrets": [{"name": "password", "ref": {"get_resource": "secret"}}]},
            },
            "certificate": {
                "type": "OS::Barbican::CertificateContainer",
                "properties": {"name": f"rt-cert-{suffix}", "certificate_ref": {"get_resource": "public"}, "private_key_ref": {"get_resource": "private"}},
            },
        }
    )
    round_trip(service, data, f"rt-barbican-{suffix}")


def test_swift_container_and_s3_bucket_are_imported(swift_service, acting_as, service):
    acting_as("demo")
    suffix = secrets.token_hex(3)
    round_trip(service, stack({"box": {"type": "OS::Swift::Container", "properties": {"name": f"rt-{suffix}"}}}), f"rt-swift-{suffix}")
    # The CloudFormation bucket: a container of the physical resource name, its ACL and tags.
    bucket = {"Type": "AWS::S3::Bucket", "Properties": {"AccessControl": "PublicRead", "Tags": [{"Key": "rt", "Value": suffix}]}}
    round_trip(service, {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"bucket": bucket}}, f"rt-s3-{suffix}")


def test_zaqar_queue_and_subscription_are_imported(zaqar_service, acting_as, service):
    acting_as("demo")
    suffix = secrets.token_hex(3)
    # Nothing listens there: Zaqar only posts to it when a message comes, and none does.
    subscription = {"type": "OS::Zaqar::Subscription", "properties": {"queue_name": {"get_resource": "queue"}, "subscriber": "http://127.0.0.1:9/rt", "ttl": 3600, "options": {"a": "1"}}}
    data = stack({"queue": {"type": "OS::Zaqar::Queue", "properties": {"name": f"rt-{suffix}"}}, "subscription": subscription})
    round_trip(service, data, f"rt-zaqar-{suffix}")


def test_mistral_workflow_and_cron_trigger_are_imported(mistral_service, acting_as, service):
    acting_as("demo")
    suffix = secrets.token_hex(3)
    workflow = {
        "type": "OS::Mistral::Workflow",
        "properties": {"name": f"rt-{suffix}", "type": "direct", "tasks": [{"name": "nothing", "action": "std.noop"}]},
    }
    # A year from now, once: it never runs while the test does.
    trigger = {"type": "OS::Mistral::CronTrigger", "properties": {"pattern": "0 0 1 1 *", "count": 1, "workflow": {"name": {"get_resource": "workflow"}}}}
    round_trip(service, stack({"workflow": workflow, "trigger": trigger}), f"rt-mistral-{suffix}")


def test_aodh_alarms_of_every_kind_are_imported(aodh_service, openstack_cloud, acting_as, service):
    """Gnocchi's three threshold alarms (one through Heat's OS::Ceilometer:: name), an event
    alarm and a composite one, as test_aodh_types.py makes them, and a Prometheus alarm."""
    acting_as("demo")
    resource_id, metric_id = Witness(openstack_cloud, aodh_service).resource_with_metric()
    data = alarms_template(resource_id, metric_id)
    # Aodh stores a Prometheus alarm without a Prometheus to ask (none runs here).
    data["resources"]["prometheus"] = {
        "type": "OS::Aodh::PrometheusAlarm",
        "properties": {"query": 'ceilometer_cpu{resource_name=~"rt-.*"}', "threshold": 60, "comparison_operator": "gt"},
    }
    round_trip(service, data, f"rt-aodh-{secrets.token_hex(3)}")


def test_octavia_load_balancer_tree_and_its_member_health_alarm_are_imported(octavia_service, aodh_service, openstack_cloud, acting_as, service):
    """The tree, and Aodh's alarm on the health of the pool's members (as the autohealing
    templates make it: the root stack and the group it marks, here named only)."""
    acting_as("admin")
    suffix = secrets.token_hex(3)
    data = stack(
        {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"rt-lb-{suffix}"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {"network": {"get_resource": "net"}, "cidr": "10.49.0.0/24"}},
            "lb": {"type": "OS::Octavia::LoadBalancer", "properties": {"name": f"rt-{suffix}", "vip_subnet": {"get_resource": "subnet"}}},
            "listener": {"type": "OS::Octavia::Listener", "properties": {"loadbalancer": {"get_resource": "lb"}, "protocol": "HTTP", "protocol_port": 80}},
            "pool": {"type": "OS::Octavia::Pool", "properties": {"listener": {"get_resource": "listener"}, "lb_algorithm": "ROUND_ROBIN", "protocol": "HTTP"}},
            "monitor": {"type": "OS::Octavia::HealthMonitor", "properties": {"pool": {"get_resource": "pool"}, "type": "HTTP", "delay": 5, "max_retries": 3, "timeout": 3}},
            # No subnet: Octavia's no-op network driver fails a member's delete that names one.
            "member": {"type": "OS::Octavia::PoolMember", "properties": {"pool": {"get_resource": "pool"}, "address": "10.49.0.10", "protocol_port": 8080}},
            "profile": {"type": "OS::Octavia::FlavorProfile", "properties": {"provider_name": "amphora", "flavor_data": '{"loadbalancer_topology": "SINGLE"}'}},
            "flavor": {"type": "OS::Octavia::Flavor", "properties": {"flavor_profile": {"get_resource": "profile"}, "name": f"rt-{suffix}", "description": "round trip"}},
            "policy": {"type": "OS::Octavia::L7Policy", "properties": {"listener": {"get_resource": "listener"}, "action": "REDIRECT_TO_URL", "redirect_url": "http://example.com/old"}},
            "rule": {"type": "OS::Octavia::L7Rule", "properties": {"l7policy": {"get_resource": "policy"}, "type": "PATH", "compare_type": "STARTS_WITH", "value": "/old"}},
            "zone_profile": {"type": "OS::Octavia::AvailabilityZoneProfile", "properties": {"provider_name": "amphora", "availability_zone_data": '{"compute_zone": "nova"}'}},
            "zone": {"type": "OS::Octavia::AvailabilityZone", "properties": {"availability_zone_profile": {"get_resource": "zone_profile"}, "name": f"rt-zone-{suffix}"}},
            "health": {
                "type": "OS::Aodh::LBMemberHealthAlarm",
                "properties": {"pool": {"get_resource": "pool"}, "stack": f"rt-root-{suffix}", "autoscaling_group_id": f"rt-group-{suffix}", "description": "round trip"},
            },
        }
    )
    round_trip(service, data, f"rt-octavia-{suffix}")


def test_manila_share_share_network_security_service_and_share_type_are_imported(manila_service, acting_as, service):
    acting_as("admin")
    suffix = secrets.token_hex(3)
    data = stack(
        {
            "security": {"type": "OS::Manila::SecurityService", "properties": {"name": f"rt-{suffix}", "type": "ldap", "server": "192.0.2.2"}},
            "kind": {"type": "OS::Manila::ShareType", "properties": {"name": f"rt-{suffix}", "driver_handles_share_servers": False}},
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"rt-share-{suffix}"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {"network": {"get_resource": "net"}, "cidr": "10.78.0.0/24"}},
            "share_network": {
                "type": "OS::Manila::ShareNetwork",
                "properties": {
                    "name": f"rt-{suffix}",
                    "neutron_network": {"get_resource": "net"},
                    "neutron_subnet": {"get_resource": "subnet"},
                    "security_services": [{"get_resource": "security"}],
                },
            },
            "share": {
                "type": "OS::Manila::Share",
                "properties": {
                    "share_protocol": "NFS",
                    "size": 1,
                    "name": f"rt-{suffix}",
                    "share_type": {"get_resource": "kind"},
                    "metadata": {"purpose": "round trip"},
                    "access_rules": [{"access_to": "192.0.2.0/24", "access_type": "ip", "access_level": "ro"}],
                },
            },
        }
    )
    round_trip(service, data, f"rt-manila-{suffix}")


def test_ironic_port_is_imported(ironic_service, acting_as, openstack_cloud, service):
    acting_as("admin")
    baremetal = openstack_cloud.connect("admin").baremetal
    node = baremetal.create_node(name=f"rt-node-{secrets.token_hex(3)}", driver="fake-hardware")
    try:
        address = "52:54:00:" + ":".join(secrets.token_hex(1) for _ in range(3))
        data = stack({"port": {"type": "OS::Ironic::Port", "properties": {"node": node.id, "address": address, "extra": {"rack": "a1"}}}})
        round_trip(service, data, f"rt-ironic-{secrets.token_hex(3)}")
    finally:
        for port in baremetal.ports(node_id=node.id):
            baremetal.delete_port(port, ignore_missing=True)
        baremetal.delete_node(node, ignore_missing=True)
