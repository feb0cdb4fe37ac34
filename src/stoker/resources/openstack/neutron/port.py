"""OS::Neutron::Port."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, constraints, live_state, properties, support, translation
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import ValidationError


class Port(NeutronResource):
    """A resource for managing Neutron ports.

    A port represents a virtual switch port on a logical network switch. Virtual
    instances attach their interfaces into ports. The logical port also defines the MAC
    address and the IP address(es) to be assigned to the interfaces plugged into them.
    When IP addresses are associated to a port, this also implies the port is associated
    with a subnet, as the IP address was taken from the allocation pool for a specific
    subnet.
    """

    entity = "port"
    # The addresses an old port gave up for its replacement (Heat's data key).
    KEPT_ADDRESSES = "port_fip"

    PROPERTIES = (
        NAME, NETWORK_ID, NETWORK, FIXED_IPS, SECURITY_GROUPS, REPLACEMENT_POLICY, DEVICE_ID,
        DEVICE_OWNER, DNS_NAME, TAGS, VALUE_SPECS, ADMIN_STATE_UP, MAC_ADDRESS,
        ALLOWED_ADDRESS_PAIRS, VNIC_TYPE, QOS_POLICY, PORT_SECURITY_ENABLED,
        PROPAGATE_UPLINK_STATUS, NO_FIXED_IPS,
    ) = (
        "name", "network_id", "network", "fixed_ips", "security_groups", "replacement_policy", "device_id",
        "device_owner", "dns_name", "tags", "value_specs", "admin_state_up", "mac_address",
        "allowed_address_pairs", "binding:vnic_type", "qos_policy", "port_security_enabled",
        "propagate_uplink_status", "no_fixed_ips",
    )
    FIXED_IP_SUBNET_ID, FIXED_IP_SUBNET, FIXED_IP_IP_ADDRESS = "subnet_id", "subnet", "ip_address"
    PAIR_MAC_ADDRESS, PAIR_IP_ADDRESS = "mac_address", "ip_address"

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "A symbolic name for this port.", update_allowed=True),
        NETWORK_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the network for this port.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="5.0.0",
                message="Use property network.",
                previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
            ),
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        NETWORK: properties.Schema(
            properties.Schema.STRING,
            "Network this port belongs to. If you plan to use current port to assign "
            "Floating IP, you should specify fixed_ips with subnet. Note if this changes to a "
            "different network update, the port will be replaced.",
            support_status=support.SupportStatus(version="2014.2"),
            required=True,
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        DEVICE_ID: properties.Schema(
            properties.Schema.STRING, "Device ID of this port.", update_allowed=True, default=""
        ),
        DEVICE_OWNER: properties.Schema(
            properties.Schema.STRING,
            "Name of the network owning the port. The value is typically network:floatingip "
            "or network:router_interface or network:dhcp.",
            update_allowed=True,
            default="",
        ),
        FIXED_IPS: properties.Schema(
            properties.Schema.LIST,
            "Desired IPs for this port.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    FIXED_IP_SUBNET_ID: properties.Schema(
                        properties.Schema.STRING,
                        "Subnet in which to allocate the IP address for this port.",
                        support_status=support.SupportStatus(
                            status=support.HIDDEN,
                            version="5.0.0",
                            message="Use property subnet.",
                            previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
                        ),
                        constraints=[constraints.CustomConstraint("neutron.subnet")],
                    ),
                    FIXED_IP_SUBNET: properties.Schema(
                        properties.Schema.STRING,
                        "Subnet in which to allocate the IP address for this port.",
                        support_status=support.SupportStatus(version="2014.2"),
                        constraints=[constraints.CustomConstraint("neutron.subnet")],
                    ),
                    FIXED_IP_IP_ADDRESS: properties.Schema(
                        properties.Schema.STRING,
                        "IP address desired in the subnet for this port.",
                        constraints=[constraints.CustomConstraint("ip_addr")],
                    ),
                },
            ),
            update_allowed=True,
        ),
        SECURITY_GROUPS: properties.Schema(
            properties.Schema.LIST,
            "Security group IDs to associate with this port.",
            update_allowed=True,
        ),
        REPLACEMENT_POLICY: properties.Schema(
            properties.Schema.STRING,
            "Policy on how to respond to a stack-update for this resource. REPLACE_ALWAYS "
            "will replace the port regardless of any property changes. AUTO will update the "
            "existing port for any changed update-allowed property.",
            default="AUTO",
            constraints=[constraints.AllowedValues(["REPLACE_ALWAYS", "AUTO"])],
            update_allowed=True,
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="9.0.0",
                previous_status=support.SupportStatus(
                    status=support.DEPRECATED,
                    version="6.0.0",
                    message="Replacement policy used to work around flawed nova/neutron port "
                    "interaction which has been fixed since Liberty.",
                    previous_status=support.SupportStatus(version="2014.2"),
                ),
            ),
        ),
        DNS_NAME: properties.Schema(
            properties.Schema.STRING,
            "DNS name associated with the port.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("dns_name")],
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "The tags to be added to the port.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
        VALUE_SPECS: properties.Schema(
            properties.Schema.MAP,
            "Extra parameters to include in the request.",
            default={},
            update_allowed=True,
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN, "The administrative state of this port.", default=True, update_allowed=True
        ),
        MAC_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "MAC address to give to this port. The default update policy of this property in "
            "neutron is that allow admin role only.",
            constraints=[constraints.CustomConstraint("mac_addr")],
        ),
        ALLOWED_ADDRESS_PAIRS: properties.Schema(
            properties.Schema.LIST,
            "Additional MAC/IP address pairs allowed to pass through the port.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    PAIR_MAC_ADDRESS: properties.Schema(
                        properties.Schema.STRING,
                        "MAC address to allow through this port.",
                        constraints=[constraints.CustomConstraint("mac_addr")],
                    ),
                    PAIR_IP_ADDRESS: properties.Schema(
                        properties.Schema.STRING,
                        "IP address to allow through this port.",
                        required=True,
                        constraints=[constraints.CustomConstraint("ip_or_cidr")],
                    ),
                },
            ),
            update_allowed=True,
        ),
        VNIC_TYPE: properties.Schema(
            properties.Schema.STRING,
            "The vnic type to be bound on the neutron port. To support SR-IOV PCI passthrough "
            "networking, you can request that the neutron port to be realized as normal "
            "(virtual nic), direct (pci passthrough), or macvtap (virtual interface with a "
            "tap-like software interface).",
            constraints=[
                constraints.AllowedValues(
                    ["normal", "direct", "macvtap", "direct-physical", "baremetal", "virtio-forwarder", "smart-nic"]
                )
            ],
            support_status=support.SupportStatus(version="2015.1"),
            update_allowed=True,
            default="normal",
        ),
        QOS_POLICY: properties.Schema(
            properties.Schema.STRING,
            "The name or ID of QoS policy to attach to this port.",
            constraints=[constraints.CustomConstraint("neutron.qos_policy")],
            update_allowed=True,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        PORT_SECURITY_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Flag to enable/disable port security on the port. When disable this feature(set "
            "it to False), there will be no packages filtering, like security-group and "
            "address-pairs.",
            update_allowed=True,
            support_status=support.SupportStatus(version="5.0.0"),
        ),
        PROPAGATE_UPLINK_STATUS: properties.Schema(
            properties.Schema.BOOLEAN,
            "Flag to enable/disable propagate uplink status on the port.",
            update_allowed=True,
            support_status=support.SupportStatus(version="15.0.0"),
        ),
        NO_FIXED_IPS: properties.Schema(
            properties.Schema.BOOLEAN,
            "Flag to disable all fixed ips on the port.",
            update_allowed=True,
            support_status=support.SupportStatus(version="16.0.0"),
            default=False,
        ),
    }

    ATTRIBUTES = (
        ADMIN_STATE_UP_ATTR, DEVICE_ID_ATTR, DEVICE_OWNER_ATTR, FIXED_IPS_ATTR, MAC_ADDRESS_ATTR,
        NAME_ATTR, NETWORK_ID_ATTR, SECURITY_GROUPS_ATTR, STATUS, TENANT_ID, ALLOWED_ADDRESS_PAIRS_ATTR,
        SUBNETS_ATTR, PORT_SECURITY_ENABLED_ATTR, QOS_POLICY_ATTR, DNS_ASSIGNMENT, NETWORK_ATTR,
        PROPAGATE_UPLINK_STATUS_ATTR,
    ) = (
        "admin_state_up", "device_id", "device_owner", "fixed_ips", "mac_address",
        "name", "network_id", "security_groups", "status", "tenant_id", "allowed_address_pairs",
        "subnets", "port_security_enabled", "qos_policy_id", "dns_assignment", "network",
        "propagate_uplink_status",
    )

    attributes_schema = {
        ADMIN_STATE_UP_ATTR: attributes.Schema("The administrative state of this port.", type=attributes.Schema.STRING),
        DEVICE_ID_ATTR: attributes.Schema("Unique identifier for the device.", type=attributes.Schema.STRING),
        DEVICE_OWNER_ATTR: attributes.Schema("Name of the network owning the port.", type=attributes.Schema.STRING),
        FIXED_IPS_ATTR: attributes.Schema("Fixed IP addresses.", type=attributes.Schema.LIST),
        MAC_ADDRESS_ATTR: attributes.Schema("MAC address of the port.", type=attributes.Schema.STRING),
        NAME_ATTR: attributes.Schema("Friendly name of the port.", type=attributes.Schema.STRING),
        NETWORK_ID_ATTR: attributes.Schema("Unique identifier for the network owning the port.", type=attributes.Schema.STRING),
        SECURITY_GROUPS_ATTR: attributes.Schema("A list of security groups for the port.", type=attributes.Schema.LIST),
        STATUS: attributes.Schema("The status of the port.", type=attributes.Schema.STRING),
        TENANT_ID: attributes.Schema("Tenant owning the port.", type=attributes.Schema.STRING),
        ALLOWED_ADDRESS_PAIRS_ATTR: attributes.Schema(
            "Additional MAC/IP address pairs allowed to pass through a port.", type=attributes.Schema.LIST
        ),
        SUBNETS_ATTR: attributes.Schema("A list of all subnet attributes for the port.", type=attributes.Schema.LIST),
        PORT_SECURITY_ENABLED_ATTR: attributes.Schema(
            "Port security enabled of the port.",
            support_status=support.SupportStatus(version="5.0.0"),
            type=attributes.Schema.BOOLEAN,
        ),
        QOS_POLICY_ATTR: attributes.Schema(
            "The QoS policy ID attached to this port.",
            type=attributes.Schema.STRING,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        DNS_ASSIGNMENT: attributes.Schema(
            "The DNS assigned to this port.",
            type=attributes.Schema.MAP,
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        NETWORK_ATTR: attributes.Schema(
            "The attributes of the network owning the port. (The full list of response "
            "parameters can be found in the Openstack Networking service API reference.) "
            "For example {get_attr: [<port>, network, mtu]}.",
            type=attributes.Schema.MAP,
            support_status=support.SupportStatus(version="11.0.0"),
        ),
        PROPAGATE_UPLINK_STATUS_ATTR: attributes.Schema(
            "Enable/Disable propagate uplink status for the port.",
            support_status=support.SupportStatus(version="15.0.0"),
            type=attributes.Schema.BOOLEAN,
        ),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        return dependencies.port_dependencies(me, stack)

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(props, translation.TranslationRule.REPLACE, [self.NETWORK], value_path=[self.NETWORK_ID]),
            translation.TranslationRule(
                props, translation.TranslationRule.REPLACE, [self.FIXED_IPS, self.FIXED_IP_SUBNET],
                value_name=self.FIXED_IP_SUBNET_ID,
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.NETWORK],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FIXED_IPS, self.FIXED_IP_SUBNET],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="subnet",
            ),
        ]

    def validate(self) -> None:
        super().validate()
        if self.given(self.FIXED_IPS) and self.given(self.NO_FIXED_IPS):
            raise ValidationError(
                "Cannot define the following properties at the same time: fixed_ips, no_fixed_ips",
                path=f"resources.{self.name}.properties",
            )

    def needs_replace(self, after_props: Mapping[str, Any]) -> bool:
        return after_props.get(self.REPLACEMENT_POLICY) == "REPLACE_ALWAYS"

    def _prepare_port_properties(self, body: dict[str, Any], for_update: bool = False) -> None:
        if not body.pop(self.NO_FIXED_IPS, False):
            if self.FIXED_IPS in body:
                fixed_ips = body[self.FIXED_IPS]
                if fixed_ips:
                    prepared = []
                    for fixed_ip in fixed_ips:
                        item = {key: value for key, value in fixed_ip.items() if value is not None}
                        if self.FIXED_IP_SUBNET in item:
                            item["subnet_id"] = item.pop(self.FIXED_IP_SUBNET)
                        prepared.append(item)
                    body[self.FIXED_IPS] = prepared
                else:
                    # Heat's choice (bug 1538473): no fixed_ips lets Neutron assign an
                    # address on create and keeps the addresses on update.
                    del body[self.FIXED_IPS]
        else:
            body[self.FIXED_IPS] = []
        if self.ALLOWED_ADDRESS_PAIRS in body:
            pairs = body[self.ALLOWED_ADDRESS_PAIRS]
            body[self.ALLOWED_ADDRESS_PAIRS] = [
                {key: value for key, value in pair.items() if value is not None} for pair in pairs or []
            ]
        # Absent security_groups: Neutron uses the project's "default" group. An update
        # that removes them goes back to "default", as Heat does.
        if self.SECURITY_GROUPS in body:
            if body[self.SECURITY_GROUPS] is not None:
                body[self.SECURITY_GROUPS] = self.client_plugin().get_secgroup_uuids(body[self.SECURITY_GROUPS])
            elif for_update:
                body[self.SECURITY_GROUPS] = self.client_plugin().get_secgroup_uuids(["default"])
        body.pop(self.REPLACEMENT_POLICY, None)

    def handle_create(self) -> dict[str, Any]:
        body = self.prepare_properties()
        # The retired network_id (translated into network) must not reach Neutron.
        body.pop(self.NETWORK_ID, None)
        body["network_id"] = body.pop(self.NETWORK)
        self._prepare_port_properties(body)
        qos_policy = body.pop(self.QOS_POLICY, None)
        tags = body.pop(self.TAGS, None)
        if qos_policy:
            body["qos_policy_id"] = qos_policy
        port = self.client().create_port(**body)
        created = self.created(port)
        if tags:
            self.set_tags(port, tags)
        return {"status": created.get("status")}

    def check_create_complete(self, token: Any) -> bool:
        # A port is DOWN until bound to a device; only BUILD means "not yet".
        if isinstance(token, dict) and token.get("status") not in (None, "BUILD"):
            return self.is_built(token)
        return self.is_built(self._show_resource() or {})

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        if self.QOS_POLICY in changes:
            changes["qos_policy_id"] = changes.pop(self.QOS_POLICY)
        if self.TAGS in changes:
            self.set_tags(self.client().get_port(self.resource_id), changes.pop(self.TAGS))
        self._prepare_port_properties(changes, for_update=True)
        if changes:
            self.client().update_port(self.resource_id, **changes)

    def check_update_complete(self, token: Any) -> bool:
        return self.is_built(self._show_resource() or {})

    def prepare_for_replace(self) -> None:
        """As Heat: the old port gives up its addresses (kept in its data), so that its
        replacement can have the same fixed IPs."""
        if self.resource_id is None:
            return
        try:
            port = self.client().get_port(self.resource_id)
        except Exception as error:  # noqa: BLE001 - a port already gone gives up nothing
            self.client_plugin().ignore_not_found(error)
            return
        self.data_set(self.KEPT_ADDRESSES, json.dumps(list(port.fixed_ips or [])))
        self.client().update_port(self.resource_id, fixed_ips=[])

    def restore_prev_rsrc(self, convergence: bool = False) -> None:
        """A rollback makes this port current again: its replacement lets the addresses
        go and this port takes back those it gave up."""
        replacement = self.replacement()
        if replacement is not None and replacement.resource_id is not None:
            try:
                self.client().update_port(replacement.resource_id, fixed_ips=[])
            except Exception as error:  # noqa: BLE001 - a replacement already gone holds nothing
                self.client_plugin().ignore_not_found(error)
        kept = json.loads(self.data().get(self.KEPT_ADDRESSES) or "[]")
        if kept and self.resource_id is not None:
            self.client().update_port(self.resource_id, fixed_ips=[{k: v for k, v in entry.items() if k in ("subnet_id", "ip_address")} for entry in kept])
        self.data_delete(self.KEPT_ADDRESSES)

    live_fields = {"qos_policy": "qos_policy_id"}

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's Port reading, in the stack's vocabulary: security groups by the names
        the stack gave (ids otherwise), and of each fixed IP the fields the stack set."""
        result = super().parse_live_resource_data(resource_properties, resource_data)
        if self.SECURITY_GROUPS in result:
            plugin = self.client_plugin()
            result[self.SECURITY_GROUPS] = live_state.as_given(
                result[self.SECURITY_GROUPS], resource_properties.get(self.SECURITY_GROUPS), lambda value: plugin.get_secgroup_uuids([value])[0]
            )
        given_ips = resource_properties.get(self.FIXED_IPS)
        if given_ips:
            keys = {key for item in given_ips for key, value in item.items() if value is not None}
            live_of = {self.FIXED_IP_SUBNET: "subnet_id", self.FIXED_IP_SUBNET_ID: "subnet_id", self.FIXED_IP_IP_ADDRESS: "ip_address"}
            result[self.FIXED_IPS] = [
                {key: item.get(live_of.get(key, key)) for key in sorted(keys)} for item in resource_data.get(self.FIXED_IPS) or []
            ]
        return result

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.SUBNETS_ATTR:
            fixed_ips = (self._show_resource() or {}).get("fixed_ips") or []
            plugin = self.client_plugin()
            return [plugin.show("subnet", fixed["subnet_id"]) for fixed in fixed_ips if fixed.get("subnet_id")]
        if name == self.NETWORK_ATTR:
            network_id = (self._show_resource() or {}).get("network_id")
            return self.client_plugin().show("network", network_id) if network_id else None
        return super()._resolve_attribute(name)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::Port": Port}
