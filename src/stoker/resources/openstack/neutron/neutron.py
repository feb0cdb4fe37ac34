"""``NeutronResource``: what Heat's Neutron resource types share.

Owns: merging ``value_specs`` into a request (and refusing one that overrides a property),
the default name (the physical resource name), waiting for ``status`` to leave BUILD,
deletion that tolerates "already gone" and waits until the object is gone, ``check``
(reads the live object), ``show`` and attributes read from the live object, and tags.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, overload

from stoker.resources.openstack.constraints import CACHE
from stoker.resources.openstack.neutron.client_plugin import NeutronClientPlugin, as_dict
from stoker.sdk import constraints, properties
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = [
    "ALLOWED_SECURITY_GROUP_PROTOCOLS",
    "NeutronResource",
    "ProtocolValues",
    "RULE_DIRECTION_SCHEMA",
    "RULE_ETHERTYPE_SCHEMA",
    "RULE_PORT_RANGE_MIN_SCHEMA",
    "SECURITY_GROUP_PROTOCOL_DESCRIPTION",
]

_PROTOCOL_NAMES = [
    "ah", "dccp", "egp", "esp", "gre", "icmp", "icmpv6", "igmp",
    "ipv6-encap", "ipv6-frag", "ipv6-icmp", "ipv6-nonxt", "ipv6-opts",
    "ipv6-route", "ospf", "pgm", "rsvp", "sctp", "tcp", "udp", "udplite", "vrrp",
]


class ProtocolValues(constraints.AllowedValues):
    """Heat's protocol AllowedValues on a STRING property: each allowed value compared
    as a string, so ``6`` and ``"6"`` are the protocol 6 and ``"06"`` is refused."""

    def _is_valid(self, value: Any, context: Any) -> bool:
        return str(value) in {str(allowed) for allowed in self.allowed}


# The protocol numbers 0-255, then the names, as Heat lists them.
ALLOWED_SECURITY_GROUP_PROTOCOLS = [*range(256), *_PROTOCOL_NAMES]
SECURITY_GROUP_PROTOCOL_DESCRIPTION = (
    "The protocol that is matched by the security group rule. Allowed values are "
    + ", ".join(_PROTOCOL_NAMES)
    + " and integer representations [0-255]."
)

# Fields a rule has alike in OS::Neutron::SecurityGroup's ``rules`` and in
# OS::Neutron::SecurityGroupRule (schemas are declarations, never changed: shared).
RULE_DIRECTION_SCHEMA = properties.Schema(
    properties.Schema.STRING,
    "The direction in which the security group rule is applied. For a compute "
    "instance, an ingress security group rule matches traffic that is incoming "
    "(ingress) for that instance. An egress rule is applied to traffic leaving the instance.",
    default="ingress",
    constraints=[constraints.AllowedValues(["ingress", "egress"])],
)
RULE_ETHERTYPE_SCHEMA = properties.Schema(
    properties.Schema.STRING,
    "Ethertype of the traffic.",
    default="IPv4",
    constraints=[constraints.AllowedValues(["IPv4", "IPv6"])],
)
RULE_PORT_RANGE_MIN_SCHEMA = properties.Schema(
    properties.Schema.INTEGER,
    "The minimum port number in the range that is matched by the security group "
    "rule. If the protocol is TCP or UDP, this value must be less than or equal to "
    "the value of the port_range_max attribute. If the protocol is ICMP, this value "
    "must be an ICMP type.",
    constraints=[constraints.Range(0, 65535)],
)


class NeutronResource(Resource):
    """Base of the Neutron resource types (not a type itself)."""

    default_client_name = "neutron"
    # Heat's entity name ("network", "subnet"...): what show() reads.
    entity: ClassVar[str | None] = None

    VALUE_SPECS = "value_specs"

    @overload
    def client_plugin(self, name: None = None) -> NeutronClientPlugin: ...
    @overload
    def client_plugin(self, name: str | None = None) -> Any: ...
    def client_plugin(self, name: str | None = None) -> Any:
        """Neutron's client plugin; another one by its name (a BGPVPN's keystone)."""
        return super().client_plugin(name)

    # -- validation -----------------------------------------------------------------

    def validate(self) -> None:
        super().validate()
        if self.VALUE_SPECS in self.properties_schema:
            specs = self.properties[self.VALUE_SPECS] or {}
            banned = ({"shared", "tenant_id"} | set(self.properties_schema)) & set(specs)
            if banned:
                raise ValidationError(
                    f"{', '.join(sorted(banned))} not allowed in value_specs",
                    path=f"resources.{self.name}.properties.value_specs",
                    hint="set these as properties of the resource, not in value_specs",
                )

    def given(self, key: str) -> Any:
        """A property's value when the template gave it (or it has a default), else None:
        an unset string reads as '' and an unset list as [], which a request must not carry."""
        return self.properties.resolved().get(key)

    # -- requests --------------------------------------------------------------------

    def prepare_properties(self, name: str | None = None) -> dict[str, Any]:
        """The properties as a Neutron request body: None values dropped, ``value_specs``
        merged in, ``name`` defaulted to ``name`` (the physical resource name)."""
        body = {key: value for key, value in self.properties.resolved().items() if value is not None}
        if "name" in self.properties_schema:
            body.setdefault("name", name if name is not None else self.physical_resource_name())
        specs = body.pop(self.VALUE_SPECS, None)
        if specs:
            body.update(specs)
        return body

    def prepare_update_properties(self, prop_diff: dict[str, Any]) -> None:
        """Merge changed ``value_specs`` (only the keys that changed) and give a name
        removed from the template back its physical resource name, as Heat does."""
        if self.VALUE_SPECS in prop_diff:
            new_specs = dict(prop_diff.pop(self.VALUE_SPECS) or {})
            old_specs = self.properties[self.VALUE_SPECS] or {}
            prop_diff.update({key: value for key, value in new_specs.items() if old_specs.get(key) != value})
        if "name" in prop_diff and prop_diff["name"] is None:
            prop_diff["name"] = self.physical_resource_name()

    def set_tags(self, found: Any, tags: list[str] | None) -> None:
        self.client().set_tags(found, list(tags or []))

    # -- reading the live object ------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None or not self.entity:
            return None
        return self.client_plugin().show(self.entity, self.resource_id)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's NeutronResource reading: the default, and of ``value_specs`` the keys
        the stack set, as the live object has them."""
        result = super().parse_live_resource_data(resource_properties, resource_data)
        specs = resource_properties.get(self.VALUE_SPECS) if self.VALUE_SPECS in self.properties_schema else None
        if specs:
            result[self.VALUE_SPECS] = {key: resource_data.get(key) for key in specs}
        return result

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        attributes = self._show_resource() or {}
        return attributes.get(name)

    def get_reference_id(self) -> str:
        return self.resource_id if self.resource_id is not None else self.name

    @staticmethod
    def is_built(attributes: Mapping[str, Any]) -> bool:
        status = attributes.get("status")
        if status == "BUILD":
            return False
        if status in ("ACTIVE", "DOWN", None):
            return True
        if status in ("ERROR", "DEGRADED"):
            raise ResourceFailure(f"Went to status {status} due to \"Unknown\"")
        raise ResourceFailure(f"Unknown status {status}: Resource is not built")

    def needs_replace_failed(self) -> bool:
        if not self.resource_id:
            return True
        try:
            attributes = self._show_resource() or {}
        except Exception as error:  # noqa: BLE001 - the client's own types
            self.client_plugin().ignore_not_found(error)
            return True
        return attributes.get("status") == "ERROR"

    # -- lifecycle --------------------------------------------------------------------

    def _delete(self) -> None:
        """Delete the live object (subclasses with an entity); not found is fine."""
        delete = getattr(self.client(), f"delete_{self.client_plugin().sdk_name(self.entity or '')}")
        delete(self.resource_id, ignore_missing=True)

    def handle_delete(self) -> Any:
        """Delete; "already gone" is fine. Neutron deletes before it answers 204, so there
        is nothing to poll (Heat polls with a GET per resource; the floor does not)."""
        if self.resource_id is None or not self.entity:
            return None
        try:
            self._delete()
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
        return None

    def check_delete_complete(self, token: Any) -> bool:
        """Done when the object is gone (a subclass whose delete is asynchronous returns
        a true token from handle_delete)."""
        if not token:
            return True
        try:
            self._show_resource()
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    def handle_check(self) -> None:
        """The live object must exist and not be in ERROR."""
        if self.resource_id is None or not self.entity:
            return
        attributes = self._show_resource() or {}
        self.is_built(attributes)

    def find_created(self) -> str | None:
        """The object an interrupted create made, by the physical resource name it was
        given (only when the template gave no name: a user's name need not be unique).
        Several matches (cannot happen with a unique name) find none."""
        if not self.entity or "name" not in self.properties_schema or self.given("name") is not None:
            return None
        lister = getattr(self.client(), f"{self.client_plugin().sdk_name(self.entity)}s", None)
        if lister is None:
            return None
        found = [item for item in lister(name=self.physical_resource_name()) if item.name == self.physical_resource_name()]
        return str(found[0].id) if len(found) == 1 else None

    def created(self, found: Any) -> dict[str, Any]:
        """Record the physical id of a just-created object first (so a crash right after
        leaves it known to the stack), then give its fields."""
        self.resource_id_set(found.id)
        # What this action made exists: the constraints of the resources naming it
        # (a server's port) need not ask Neutron again.
        plugin = self.client_plugin()
        if self.entity is not None:  # (every type that calls this has one)
            CACHE.remember(plugin.context, (plugin.name, "find", self.entity, str(found.id)), found)
        return as_dict(found)
