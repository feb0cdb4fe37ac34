"""OS::Neutron::Router, OS::Neutron::RouterInterface and OS::Neutron::RouterGateway
(HIDDEN in Heat since 5.0.0, and still working there: old templates use it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import ValidationError


class Router(NeutronResource):
    """A resource that implements Neutron router.

    Router is a physical or virtual network device that passes network traffic between
    different networks.
    """

    entity = "router"

    PROPERTIES = (
        NAME, EXTERNAL_GATEWAY, VALUE_SPECS, ADMIN_STATE_UP, L3_AGENT_ID, L3_AGENT_IDS,
        DISTRIBUTED, HA, AVAILABILITY_ZONE_HINTS, TAGS, TENANT_ID,
    ) = (
        "name", "external_gateway_info", "value_specs", "admin_state_up", "l3_agent_id", "l3_agent_ids",
        "distributed", "ha", "availability_zone_hints", "tags", "tenant_id",
    )
    EXTERNAL_GATEWAY_NETWORK, EXTERNAL_GATEWAY_ENABLE_SNAT, EXTERNAL_GATEWAY_FIXED_IPS = (
        "network", "enable_snat", "external_fixed_ips",
    )
    IP_ADDRESS, SUBNET = "ip_address", "subnet"

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "The name of the router.", update_allowed=True),
        EXTERNAL_GATEWAY: properties.Schema(
            properties.Schema.MAP,
            "External network gateway configuration for a router.",
            schema={
                EXTERNAL_GATEWAY_NETWORK: properties.Schema(
                    properties.Schema.STRING,
                    "ID or name of the external network for the gateway.",
                    required=True,
                    update_allowed=True,
                ),
                EXTERNAL_GATEWAY_ENABLE_SNAT: properties.Schema(
                    properties.Schema.BOOLEAN,
                    "Enables Source NAT on the router gateway. NOTE: The default policy setting "
                    "in Neutron restricts usage of this property to administrative users only.",
                    update_allowed=True,
                ),
                EXTERNAL_GATEWAY_FIXED_IPS: properties.Schema(
                    properties.Schema.LIST,
                    "External fixed IP addresses for the gateway.",
                    schema=properties.Schema(
                        properties.Schema.MAP,
                        schema={
                            IP_ADDRESS: properties.Schema(
                                properties.Schema.STRING,
                                "External fixed IP address.",
                                constraints=[constraints.CustomConstraint("ip_addr")],
                            ),
                            SUBNET: properties.Schema(
                                properties.Schema.STRING,
                                "Subnet of external fixed IP address.",
                                constraints=[constraints.CustomConstraint("neutron.subnet")],
                            ),
                        },
                    ),
                    update_allowed=True,
                    support_status=support.SupportStatus(version="6.0.0"),
                ),
            },
            update_allowed=True,
        ),
        VALUE_SPECS: properties.Schema(
            properties.Schema.MAP,
            "Extra parameters to include in the creation request.",
            default={},
            update_allowed=True,
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN, "The administrative state of the router.", default=True, update_allowed=True
        ),
        L3_AGENT_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the L3 agent. NOTE: The default policy setting in Neutron restricts usage "
            "of this property to administrative users only.",
            update_allowed=True,
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="6.0.0",
                previous_status=support.SupportStatus(
                    status=support.DEPRECATED,
                    version="2015.1",
                    message="Use property l3_agent_ids.",
                    previous_status=support.SupportStatus(version="2014.1"),
                ),
            ),
        ),
        L3_AGENT_IDS: properties.Schema(
            properties.Schema.LIST,
            "ID list of the L3 agent. User can specify multi-agents for highly available "
            "router. NOTE: The default policy setting in Neutron restricts usage of this "
            "property to administrative users only.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            support_status=support.SupportStatus(version="2015.1"),
        ),
        DISTRIBUTED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Indicates whether or not to create a distributed router. NOTE: The default "
            "policy setting in Neutron restricts usage of this property to administrative "
            "users only. This property can not be used in conjunction with the L3 agent ID.",
            support_status=support.SupportStatus(version="2015.1"),
        ),
        HA: properties.Schema(
            properties.Schema.BOOLEAN,
            "Indicates whether or not to create a highly available router. NOTE: The default "
            "policy setting in Neutron restricts usage of this property to administrative "
            "users only. And now neutron do not support distributed and ha at the same time.",
            support_status=support.SupportStatus(version="2015.1"),
        ),
        AVAILABILITY_ZONE_HINTS: properties.Schema(
            properties.Schema.LIST,
            "Availability zone candidates for the router. It requires the availability_zone "
            "extension to be available.",
            update_allowed=True,
            support_status=support.SupportStatus(version="19.0.0"),
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "The tags to be added to the router.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the tenant which will own the router. Only administrative users can set "
            "the tenant identifier; this cannot be changed using authorization policies.",
            support_status=support.SupportStatus(version="24.0.0"),
        ),
    }

    ATTRIBUTES = (STATUS, EXTERNAL_GATEWAY_INFO_ATTR, NAME_ATTR, ADMIN_STATE_UP_ATTR, TENANT_ID_ATTR) = (
        "status", "external_gateway_info", "name", "admin_state_up", "tenant_id",
    )

    attributes_schema = {
        STATUS: attributes.Schema("The status of the router.", type=attributes.Schema.STRING),
        EXTERNAL_GATEWAY_INFO_ATTR: attributes.Schema("Gateway network for the router.", type=attributes.Schema.MAP),
        NAME_ATTR: attributes.Schema("Friendly name of the router.", type=attributes.Schema.STRING),
        ADMIN_STATE_UP_ATTR: attributes.Schema("Administrative state of the router.", type=attributes.Schema.STRING),
        TENANT_ID_ATTR: attributes.Schema("Tenant owning the router.", type=attributes.Schema.STRING),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        return dependencies.router_dependencies(me, stack)

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        rules = [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.EXTERNAL_GATEWAY, self.EXTERNAL_GATEWAY_NETWORK],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE,
                [self.EXTERNAL_GATEWAY, self.EXTERNAL_GATEWAY_FIXED_IPS, self.SUBNET],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="subnet",
            ),
        ]
        if props.get(self.L3_AGENT_ID):
            rules += [
                translation.TranslationRule(props, translation.TranslationRule.ADD, [self.L3_AGENT_IDS], [props.get(self.L3_AGENT_ID)]),
                translation.TranslationRule(props, translation.TranslationRule.DELETE, [self.L3_AGENT_ID]),
            ]
        return rules

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        distributed, ha = self.given(self.DISTRIBUTED), self.given(self.HA)
        agent_id, agent_ids = self.given(self.L3_AGENT_ID), self.given(self.L3_AGENT_IDS)
        if agent_id and agent_ids:
            raise ValidationError("Cannot define the following properties at the same time: l3_agent_id, l3_agent_ids", path=where)
        if distributed and (agent_id or agent_ids):
            raise ValidationError(
                "Cannot define the following properties at the same time: distributed, l3_agent_id/l3_agent_ids", path=where
            )
        if ha and distributed:
            raise ValidationError("Cannot define the following properties at the same time: distributed, ha", path=where)
        if not ha and agent_ids and len(agent_ids) > 1:
            raise ValidationError("Non HA routers can only have one L3 agent.", path=f"{where}.l3_agent_ids")

    def _gateway_body(self, gateway: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """external_gateway_info as Neutron wants it: network_id, subnet_id, no None."""
        if not gateway:
            return None
        body: dict[str, Any] = {"network_id": gateway[self.EXTERNAL_GATEWAY_NETWORK]}
        if gateway.get(self.EXTERNAL_GATEWAY_ENABLE_SNAT) is not None:
            body["enable_snat"] = gateway[self.EXTERNAL_GATEWAY_ENABLE_SNAT]
        if gateway.get(self.EXTERNAL_GATEWAY_FIXED_IPS) is not None:
            fixed_ips = []
            for fixed_ip in gateway[self.EXTERNAL_GATEWAY_FIXED_IPS]:
                item = {key: value for key, value in fixed_ip.items() if value is not None}
                if self.SUBNET in item:
                    item["subnet_id"] = item.pop(self.SUBNET)
                fixed_ips.append(item)
            body["external_fixed_ips"] = fixed_ips
        return body

    @classmethod
    def _agent_ids(cls, body: dict[str, Any]) -> list[str] | None:
        agent_id = body.pop(cls.L3_AGENT_ID, None)
        agent_ids = body.pop(cls.L3_AGENT_IDS, None)
        return agent_ids or ([agent_id] if agent_id else None)

    def handle_create(self) -> None:
        body = self.prepare_properties()
        if self.EXTERNAL_GATEWAY in body:
            body[self.EXTERNAL_GATEWAY] = self._gateway_body(body[self.EXTERNAL_GATEWAY])
        agent_ids = self._agent_ids(body)
        tags = body.pop(self.TAGS, None)
        router = self.client().create_router(**body)
        self.created(router)
        if agent_ids:
            self._replace_agents(agent_ids)
        if tags:
            self.set_tags(router, tags)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        if self.EXTERNAL_GATEWAY in changes:
            # None clears the gateway: Neutron takes an empty map for that.
            changes[self.EXTERNAL_GATEWAY] = self._gateway_body(changes[self.EXTERNAL_GATEWAY]) or {}
        if self.L3_AGENT_IDS in changes or self.L3_AGENT_ID in changes:
            self._replace_agents(self._agent_ids(changes))
        if self.TAGS in changes:
            self.set_tags(self.client().get_router(self.resource_id), changes.pop(self.TAGS))
        self.prepare_update_properties(changes)
        if changes:
            self.client().update_router(self.resource_id, **changes)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's Router reading: the gateway's network (and SNAT where the stack set
        it); not the L3 agents (an admin's view)."""
        result = super().parse_live_resource_data(resource_properties, resource_data)
        result.pop(self.L3_AGENT_ID, None)
        result.pop(self.L3_AGENT_IDS, None)
        gateway = resource_data.get(self.EXTERNAL_GATEWAY)
        given = resource_properties.get(self.EXTERNAL_GATEWAY)
        if not gateway:
            result[self.EXTERNAL_GATEWAY] = None
        else:
            live = {self.EXTERNAL_GATEWAY_NETWORK: gateway.get("network_id")}
            if isinstance(given, Mapping) and given.get(self.EXTERNAL_GATEWAY_ENABLE_SNAT) is not None:
                live[self.EXTERNAL_GATEWAY_ENABLE_SNAT] = gateway.get("enable_snat")
            result[self.EXTERNAL_GATEWAY] = live
        return result

    def _replace_agents(self, agent_ids: list[str] | None) -> None:
        client = self.client()
        for agent in client.routers_hosting_l3_agents(self.resource_id):
            client.remove_router_from_agent(agent, self.resource_id)
        for agent_id in agent_ids or []:
            client.add_router_to_agent(agent_id, self.resource_id)


class RouterInterface(NeutronResource):
    """A resource for managing Neutron router interfaces.

    Router interfaces associate routers with existing subnets or ports.
    """

    PROPERTIES = (ROUTER, ROUTER_ID, SUBNET_ID, SUBNET, PORT_ID, PORT) = (
        "router", "router_id", "subnet_id", "subnet", "port_id", "port",
    )

    properties_schema = {
        ROUTER: properties.Schema(
            properties.Schema.STRING,
            "The router.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
        ROUTER_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the router.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="6.0.0",
                previous_status=support.SupportStatus(
                    status=support.DEPRECATED,
                    message="Use property router.",
                    version="2015.1",
                    previous_status=support.SupportStatus(version="2013.1"),
                ),
            ),
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
        SUBNET_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the subnet.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                message="Use property subnet.",
                version="5.0.0",
                previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
            ),
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        SUBNET: properties.Schema(
            properties.Schema.STRING,
            "The subnet, either subnet or port should be specified.",
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        PORT_ID: properties.Schema(
            properties.Schema.STRING,
            "The port id, either subnet or port_id should be specified.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="6.0.0",
                previous_status=support.SupportStatus(
                    status=support.DEPRECATED,
                    message="Use property port.",
                    version="2015.1",
                    previous_status=support.SupportStatus(version="2014.1"),
                ),
            ),
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        PORT: properties.Schema(
            properties.Schema.STRING,
            "The port, either subnet or port should be specified.",
            support_status=support.SupportStatus(version="2015.1"),
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        rules = [
            translation.TranslationRule(props, translation.TranslationRule.REPLACE, [self.PORT], value_path=[self.PORT_ID]),
            translation.TranslationRule(props, translation.TranslationRule.REPLACE, [self.ROUTER], value_path=[self.ROUTER_ID]),
            translation.TranslationRule(props, translation.TranslationRule.REPLACE, [self.SUBNET], value_path=[self.SUBNET_ID]),
        ]
        for key, entity in ((self.PORT, "port"), (self.ROUTER, "router"), (self.SUBNET, "subnet")):
            rules.append(
                translation.TranslationRule(
                    props, translation.TranslationRule.RESOLVE, [key],
                    client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity=entity,
                )
            )
        return rules

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        has_subnet = self.given(self.SUBNET) is not None
        has_port = self.given(self.PORT) is not None
        if has_subnet and has_port:
            raise ValidationError("Cannot define the following properties at the same time: subnet, port", path=where)
        if not has_subnet and not has_port:
            raise ValidationError("At least one of the following properties must be specified: subnet, port", path=where)

    def handle_create(self) -> None:
        router_id = self.given(self.ROUTER)
        key, value = "subnet_id", self.given(self.SUBNET)
        if not value:
            key, value = "port_id", self.given(self.PORT)
        # Heat's physical id, "<router>:<subnet_id|port_id>=<id>", says what to remove on delete.
        if key == "subnet_id":
            self.client().add_interface_to_router(router_id, subnet=value)
        else:
            self.client().add_interface_to_router(router_id, port=value)
        self.resource_id_set(f"{router_id}:{key}={value}")

    def find_created(self) -> str | None:
        """The interface an interrupted create added: the router has a port on the subnet
        (or is the device of the port); Neutron refuses a second interface on one subnet,
        so no other resource's can match."""
        router_id = self.given(self.ROUTER)
        key, value = "subnet_id", self.given(self.SUBNET)
        if not value:
            key, value = "port_id", self.given(self.PORT)
        for port in self.client().ports(device_id=router_id):
            if port.id == value if key == "port_id" else any(fixed.get("subnet_id") == value for fixed in port.fixed_ips or []):
                return f"{router_id}:{key}={value}"
        return None

    def _parts(self) -> tuple[str, str, str]:
        tokens = (self.resource_id or "").replace("=", ":").split(":")
        if len(tokens) == 2:  # Heat's older "<router>:<subnet>"
            tokens.insert(1, "subnet_id")
        router_id, key, value = tokens
        return router_id, key, value

    def handle_delete(self) -> None:
        if not self.resource_id:
            return
        router_id, key, value = self._parts()
        with self.client_plugin().ignore_not_found:
            if key == "subnet_id":
                self.client().remove_interface_from_router(router_id, subnet=value)
            else:
                self.client().remove_interface_from_router(router_id, port=value)

    def handle_check(self) -> None:
        """The router must still have an interface on the subnet or port."""
        if not self.resource_id:
            return
        router_id, key, value = self._parts()
        ports = self.client().ports(device_id=router_id)
        if key == "port_id":
            found = any(port.id == value for port in ports)
        else:
            found = any(fixed.get("subnet_id") == value for port in ports for fixed in (port.fixed_ips or []))
        if not found:
            from stoker.sdk.exceptions import EntityNotFound

            raise EntityNotFound("Router interface", self.resource_id)


class RouterGateway(NeutronResource):
    """A resource that sets a router's external gateway (use the router's
    ``external_gateway_info`` property instead)."""

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        message="Use the `external_gateway_info` property in the router resource to set up the gateway.",
        version="5.0.0",
        previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.1"),
    )

    PROPERTIES = (ROUTER_ID, NETWORK_ID, NETWORK) = ("router_id", "network_id", "network")

    properties_schema = {
        ROUTER_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the router.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
        NETWORK_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the external network for the gateway.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                message="Use property network.",
                version="9.0.0",
                previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
            ),
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        NETWORK: properties.Schema(
            properties.Schema.STRING,
            "external network for the gateway.",
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        return dependencies.router_gateway_dependencies(me, stack)

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(props, translation.TranslationRule.REPLACE, [self.NETWORK], value_path=[self.NETWORK_ID]),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.NETWORK],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network",
            ),
        ]

    def handle_create(self) -> None:
        router_id = self.properties[self.ROUTER_ID]
        network_id = self.given(self.NETWORK)
        # Heat's add_gateway_router: the router's external_gateway_info.
        self.client().update_router(router_id, external_gateway_info={"network_id": network_id})
        self.resource_id_set(f"{router_id}:{network_id}")

    def handle_delete(self) -> None:
        if not self.resource_id:
            return
        router_id = self.resource_id.split(":", 1)[0]
        with self.client_plugin().ignore_not_found:
            self.client().update_router(router_id, external_gateway_info={})


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::Router": Router, "OS::Neutron::RouterInterface": RouterInterface, "OS::Neutron::RouterGateway": RouterGateway}
