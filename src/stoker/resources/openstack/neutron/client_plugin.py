"""The ``neutron`` client plugin (openstacksdk's network proxy) and the custom
constraints Heat registers for Neutron.

Owns: Heat's finder names (``find_resourceid_by_name_or_id(entity, value)``,
``get_qos_policy_id``, ``resolve_ext_resource``), Neutron's extension check, the add-on
service plugins' objects (service chaining, TaaS, L2 gateways, BGPVPN) by REST as Heat's
``*_ext_resource`` methods reach them, and the object of an entity read as a
plain dict with Neutron's own field names (openstacksdk's data model: every field, None
where the cloud returned none). Neutron has no microversions.
"""

from __future__ import annotations

import uuid
from typing import Any

from stoker.resources.openstack.client_plugin import AmbiguousNameError, OpenStackClientPlugin
from stoker.resources.openstack.constraints import CACHE, LookupConstraint
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure

__all__ = ["NeutronClientPlugin", "client_mapping", "constraint_mapping"]


class NeutronClientPlugin(OpenStackClientPlugin):
    """Neutron through openstacksdk's ``connection.network``."""

    name = "neutron"
    service_type = "network"
    proxy_name = "network"

    RES_TYPES = (
        RES_TYPE_NETWORK, RES_TYPE_SUBNET, RES_TYPE_ROUTER, RES_TYPE_PORT,
        RES_TYPE_SECURITY_GROUP, RES_TYPE_SUBNET_POOL, RES_TYPE_QOS_POLICY,
        RES_TYPE_FLOATINGIP,
    ) = (
        "network", "subnet", "router", "port",
        "security_group", "subnetpool", "policy",
        "floatingip",
    )

    # Heat's entity names -> openstacksdk's proxy method suffixes.
    _SDK_NAMES = {
        "subnetpool": "subnet_pool",
        "policy": "qos_policy",
        "floatingip": "ip",
        "qos_policy": "qos_policy",
    }

    def sdk_name(self, entity: str) -> str:
        return self._SDK_NAMES.get(entity, entity)

    def find_resourceid_by_name_or_id(self, entity: str, name_or_id: str) -> str:
        """Heat's finder: the id of the ``entity`` named ``name_or_id``."""
        finder = getattr(self.client(), f"find_{self.sdk_name(entity)}")
        return str(self.find(entity, name_or_id, finder).id)

    def get_qos_policy_id(self, name_or_id: str) -> str:
        return self.find_resourceid_by_name_or_id(self.RES_TYPE_QOS_POLICY, name_or_id)

    def get_secgroup_uuids(self, security_groups: list[str]) -> list[str]:
        """Ids of security groups given by name or id. Names are looked up among the
        groups of the token's project only: an admin sees every project's "default"."""
        ids: list[str] = []
        groups_of_project: list[Any] | None = None
        for group in security_groups:
            if _is_uuid(group):
                ids.append(group)
                continue
            if groups_of_project is None:
                # Once per context (a stack action): 20 ports naming "default" list the
                # project's groups once, not 20 times.
                groups_of_project = CACHE.answer(
                    self.context,
                    (self.name, "security_groups_of_project"),
                    lambda: list(self.client().security_groups(project_id=self.connection.current_project_id)),
                )
            matches = [found.id for found in groups_of_project if found.name == group]
            if not matches:
                raise EntityNotFound("security group", group)
            if len(matches) > 1:
                raise AmbiguousNameError("security group", group)
            ids.append(matches[0])
        return ids

    def has_extension(self, alias: str) -> bool:
        """Whether Neutron offers the API extension ``alias`` (asked once per plugin)."""
        with self._lock:
            known = getattr(self, "_extensions", None)
            if known is None:
                known = self._extensions = {extension.alias for extension in self.client().extensions()}
        return alias in known

    # -- the add-on service plugins' objects, by REST (Heat's *_ext_resource) ---------------

    # Heat's names for them -> their collection paths (BGPVPN associations are below
    # their BGPVPN: ``/bgpvpn/bgpvpns/<id>/network_associations``).
    EXTENSION_PATHS = {
        "port_pair": "/sfc/port_pairs",
        "port_pair_group": "/sfc/port_pair_groups",
        "flow_classifier": "/sfc/flow_classifiers",
        "port_chain": "/sfc/port_chains",
        "tap_service": "/taas/tap_services",
        "tap_flow": "/taas/tap_flows",
        "l2_gateway": "/l2-gateways",
        "l2_gateway_connection": "/l2-gateway-connections",
        "bgpvpn": "/bgpvpn/bgpvpns",
    }

    def extension_path(self, resource: str, parent: str | None = None) -> str:
        if parent is not None:
            return f"{self.EXTENSION_PATHS['bgpvpn']}/{parent}/{resource}s"
        return self.EXTENSION_PATHS[resource]

    def create_ext_resource(self, resource: str, body: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
        response = self.rest("POST", self.extension_path(resource, parent), json={resource: body})
        return dict(response.json()[resource])

    def update_ext_resource(
        self, resource: str, changes: dict[str, Any], resource_id: str, parent: str | None = None
    ) -> dict[str, Any]:
        path = f"{self.extension_path(resource, parent)}/{resource_id}"
        return dict(self.rest("PUT", path, json={resource: changes}).json()[resource])

    def delete_ext_resource(self, resource: str, resource_id: str, parent: str | None = None) -> None:
        self.rest("DELETE", f"{self.extension_path(resource, parent)}/{resource_id}")

    def show_ext_resource(self, resource: str, resource_id: str, parent: str | None = None) -> dict[str, Any]:
        """The live object; raises openstacksdk's not-found error when it is gone."""
        path = f"{self.extension_path(resource, parent)}/{resource_id}"
        return dict(self.rest("GET", path).json()[resource])

    def list_ext_resources(self, resource: str, parent: str | None = None, **filters: Any) -> list[dict[str, Any]]:
        response = self.rest("GET", self.extension_path(resource, parent), params=filters)
        return [dict(item) for item in response.json()[f"{resource}s"]]

    def check_ext_resource_status(self, resource: str, resource_id: str) -> bool:
        """Heat's wait for an object an agent programs: done when ACTIVE, failed in ERROR."""
        status = self.show_ext_resource(resource, resource_id).get("status")
        if status == "ERROR":
            raise ResourceFailure(f"Went to status {status} due to \"Unknown\"")
        return status == "ACTIVE"

    def resolve_extension_entity(self, extension_and_resource: str, name_or_id: str) -> str:
        """The constraints' finder: ``"<extension alias>:<resource>"`` (Heat raises
        "The neutron extension (sfc) could not be found" when the cloud lacks it)."""
        alias, _, resource = extension_and_resource.partition(":")
        if alias and not self.has_extension(alias):
            raise EntityNotFound("neutron extension", alias)
        return self.resolve_ext_resource(resource, name_or_id)

    def resolve_ext_resource(self, resource: str, name_or_id: str) -> str:
        """Heat's finder for the add-on objects: the id of the one named (or with the id)
        ``name_or_id``."""
        return str(self.find(resource, name_or_id, lambda value, ignore_missing: self._find_ext(resource, value)).id)

    def _find_ext(self, resource: str, name_or_id: str) -> Any:
        try:
            return _Found(self.show_ext_resource(resource, name_or_id))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)
        matches = self.list_ext_resources(resource, name=name_or_id)
        if not matches:
            raise EntityNotFound(resource, name_or_id)
        if len(matches) > 1:
            raise AmbiguousNameError(resource, name_or_id)
        return _Found(matches[0])

    def show(self, entity: str, resource_id: str) -> dict[str, Any]:
        """The live object as a dict of Neutron's field names (``tenant_id`` included, as
        Heat's attributes name it). Raises the proxy's not-found error when it is gone."""
        found = getattr(self.client(), f"get_{self.sdk_name(entity)}")(resource_id)
        return as_dict(found)


class _Found(dict):
    """An add-on object read by REST, with the ``id`` attribute the lookup cache reads."""

    @property
    def id(self) -> str:
        return str(self["id"])


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (TypeError, ValueError):
        return False
    return True


def as_dict(found: Any) -> dict[str, Any]:
    """An openstacksdk object as a dict with the service's own field names: every field
    of openstacksdk's data model (None where the cloud gave none), and what the cloud sent
    beyond it (extensions)."""
    if not hasattr(found, "to_dict"):  # an openstacksdk object is a dict too: test for it first
        return dict(found)
    from openstack import fields

    body = found.to_dict(original_names=True, headers=False, computed=False)
    # to_dict(original_names=True) can miss a field whose server name differs from its
    # attribute name (Network.subnet_ids is "subnets": it gave None for []): read each
    # field through its attribute.
    cls = type(found)
    for attribute in dir(cls):
        component = getattr(cls, attribute, None)
        if isinstance(component, fields.Body):
            body[component.name] = getattr(found, attribute)
    body.pop("location", None)
    if body.get("tenant_id") is None:
        body["tenant_id"] = body.get("project_id")
    return body


class _NeutronConstraint(LookupConstraint):
    client_plugin_name = "neutron"
    finder = "find_resourceid_by_name_or_id"


class NetworkConstraint(_NeutronConstraint):
    name, entity = "neutron.network", NeutronClientPlugin.RES_TYPE_NETWORK
    listing = "networks"


class SubnetConstraint(_NeutronConstraint):
    name, entity = "neutron.subnet", NeutronClientPlugin.RES_TYPE_SUBNET
    listing = "subnets"


class PortConstraint(_NeutronConstraint):
    name, entity = "neutron.port", NeutronClientPlugin.RES_TYPE_PORT
    listing = "ports"


class RouterConstraint(_NeutronConstraint):
    name, entity = "neutron.router", NeutronClientPlugin.RES_TYPE_ROUTER
    listing = "routers"


class SecurityGroupConstraint(_NeutronConstraint):
    name, entity = "neutron.security_group", NeutronClientPlugin.RES_TYPE_SECURITY_GROUP
    listing = "security_groups"


class SubnetPoolConstraint(_NeutronConstraint):
    name, entity = "neutron.subnetpool", NeutronClientPlugin.RES_TYPE_SUBNET_POOL
    listing = "subnet_pools"


class QosPolicyConstraint(_NeutronConstraint):
    name, entity = "neutron.qos_policy", NeutronClientPlugin.RES_TYPE_QOS_POLICY
    listing = "qos_policies"


class SegmentConstraint(_NeutronConstraint):
    name, entity = "neutron.segment", "segment"
    listing = "segments"


class AddressScopeConstraint(_NeutronConstraint):
    name, entity = "neutron.address_scope", "address_scope"
    listing = "address_scopes"


class _ExtensionConstraint(LookupConstraint):
    """An add-on service plugin's object (Heat's NeutronExtConstraint): the extension must
    be offered, then the object must exist."""

    client_plugin_name = "neutron"
    finder = "resolve_extension_entity"


class PortPairConstraint(_ExtensionConstraint):
    name, entity = "neutron.port_pair", "sfc:port_pair"


class PortPairGroupConstraint(_ExtensionConstraint):
    name, entity = "neutron.port_pair_group", "sfc:port_pair_group"


class FlowClassifierConstraint(_ExtensionConstraint):
    name, entity = "neutron.flow_classifier", "sfc:flow_classifier"


class TapServiceConstraint(_ExtensionConstraint):
    name, entity = "neutron.taas.tap_service", "taas:tap_service"


class TapFlowConstraint(_ExtensionConstraint):
    name, entity = "neutron.taas.tap_flow", "taas:tap_flow"


class BGPVPNConstraint(_ExtensionConstraint):
    # networking-bgpvpn's own Heat plugin registers it (with no extension check).
    name, entity = "neutron.bgpvpn", ":bgpvpn"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"neutron": NeutronClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {
        constraint.name: constraint
        for constraint in (
            NetworkConstraint, SubnetConstraint, PortConstraint, RouterConstraint,
            SecurityGroupConstraint, SubnetPoolConstraint, QosPolicyConstraint, SegmentConstraint,
            AddressScopeConstraint, PortPairConstraint, PortPairGroupConstraint,
            FlowClassifierConstraint, TapServiceConstraint, TapFlowConstraint, BGPVPNConstraint,
        )
    }
