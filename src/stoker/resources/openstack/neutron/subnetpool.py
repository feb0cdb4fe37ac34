"""OS::Neutron::SubnetPool, as Heat has it.

Owns: a subnet pool with its prefixes, prefix lengths, quota, address scope (by name or
id) and tags; every property but ``tenant_id`` and ``shared`` updated in place. Heat's
checks: prefix bounds that contradict each other are refused at validation, and an update
may only add prefixes (the new list covers the old one).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure, ValidationError

__all__ = ["SubnetPool", "resource_mapping"]


def _subnet_of(inner: ipaddress.IPv4Network | ipaddress.IPv6Network, outer: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """``inner`` lies within ``outer`` (False across IP versions)."""
    if isinstance(inner, ipaddress.IPv4Network) and isinstance(outer, ipaddress.IPv4Network):
        return inner.subnet_of(outer)
    if isinstance(inner, ipaddress.IPv6Network) and isinstance(outer, ipaddress.IPv6Network):
        return inner.subnet_of(outer)
    return False


def _length(description: str) -> properties.Schema:
    return properties.Schema(
        properties.Schema.INTEGER,
        description,
        constraints=[constraints.Range(min=0)],
        update_allowed=True,
    )


class SubnetPool(NeutronResource):
    """A resource that implements neutron subnet pool.

    This resource can be used to create a subnet pool with a large block of addresses and
    create subnets from it.
    """

    support_status = support.SupportStatus(version="6.0.0")
    entity = "subnetpool"

    PROPERTIES = (
        NAME, PREFIXES, ADDRESS_SCOPE, DEFAULT_QUOTA, DEFAULT_PREFIXLEN, MIN_PREFIXLEN, MAX_PREFIXLEN,
        IS_DEFAULT, TENANT_ID, SHARED, TAGS,
    ) = (
        "name", "prefixes", "address_scope", "default_quota", "default_prefixlen", "min_prefixlen",
        "max_prefixlen", "is_default", "tenant_id", "shared", "tags",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of the subnet pool.", update_allowed=True
        ),
        PREFIXES: properties.Schema(
            properties.Schema.LIST,
            "List of subnet prefixes to assign.",
            schema=properties.Schema(
                properties.Schema.STRING, constraints=[constraints.CustomConstraint("net_cidr")]
            ),
            constraints=[constraints.Length(min=1)],
            required=True,
            update_allowed=True,
        ),
        ADDRESS_SCOPE: properties.Schema(
            properties.Schema.STRING,
            "An address scope ID to assign to the subnet pool.",
            constraints=[constraints.CustomConstraint("neutron.address_scope")],
            update_allowed=True,
        ),
        DEFAULT_QUOTA: _length(
            "A per-tenant quota on the prefix space that can be allocated from the subnet pool for tenant subnets."
        ),
        DEFAULT_PREFIXLEN: _length(
            "The size of the prefix to allocate when the cidr or prefixlen attributes are not "
            "specified while creating a subnet."
        ),
        MIN_PREFIXLEN: _length("Smallest prefix size that can be allocated from the subnet pool."),
        MAX_PREFIXLEN: _length("Maximum prefix size that can be allocated from the subnet pool."),
        IS_DEFAULT: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this is default IPv4/IPv6 subnet pool. There can only be one default subnet "
            "pool for each IP family. Note that the default policy setting restricts "
            "administrative users to set this to True.",
            default=False,
            update_allowed=True,
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the tenant who owns the subnet pool. Only administrative users can specify "
            "a tenant ID other than their own.",
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether the subnet pool will be shared across all tenants. Note that the default "
            "policy setting restricts usage of this attribute to administrative users only.",
            default=False,
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "The tags to be added to the subnetpool.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
    }

    def validate(self) -> None:
        super().validate()
        given = self.properties.resolved()
        low, default, high = (
            given.get(key)
            for key in (self.MIN_PREFIXLEN, self.DEFAULT_PREFIXLEN, self.MAX_PREFIXLEN)
        )
        pairs = [
            (
                self.MAX_PREFIXLEN,
                high,
                self.MIN_PREFIXLEN,
                low,
                low is not None and high is not None and low > high,
            )
        ]
        if default is not None:
            pairs.append(
                (
                    self.MAX_PREFIXLEN,
                    high,
                    self.DEFAULT_PREFIXLEN,
                    default,
                    high is not None and default > high,
                )
            )
            pairs.append(
                (
                    self.MIN_PREFIXLEN,
                    low,
                    self.DEFAULT_PREFIXLEN,
                    default,
                    low is not None and low > default,
                )
            )
        for key1, value1, key2, value2, broken in pairs:
            if broken:
                raise ValidationError(
                    f"Illegal prefix bounds: {key1}={value1}, {key2}={value2}.",
                    path=f"resources.{self.name}.properties",
                    hint="min_prefixlen <= default_prefixlen <= max_prefixlen",
                )

    def _scope_id(self, scope: str | None) -> str | None:
        if not scope:
            return scope
        return self.client_plugin().find_resourceid_by_name_or_id("address_scope", scope)

    def handle_create(self) -> None:
        body = self.prepare_properties()
        tags = body.pop(self.TAGS, None)
        if self.ADDRESS_SCOPE in body:
            body["address_scope_id"] = self._scope_id(body.pop(self.ADDRESS_SCOPE))
        if "tenant_id" in body:
            body["project_id"] = body.pop("tenant_id")
        pool = self.client().create_subnet_pool(**body)
        self.created(pool)
        if tags:
            self.set_tags(pool, tags)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes = dict(prop_diff)
        if self.PREFIXES in changes:
            old = [ipaddress.ip_network(p, strict=False) for p in self.properties[self.PREFIXES]]
            new = [ipaddress.ip_network(p, strict=False) for p in changes[self.PREFIXES]]
            if not all(any(_subnet_of(o, n) for n in new) for o in old):
                raise ResourceFailure(
                    f"Property prefixes updated value {sorted(changes[self.PREFIXES])} should be superset "
                    f"of existing value {sorted(self.properties[self.PREFIXES])}."
                )
        if self.ADDRESS_SCOPE in changes:
            changes["address_scope_id"] = self._scope_id(changes.pop(self.ADDRESS_SCOPE))
        if self.TAGS in changes:
            self.set_tags(self.client().get_subnet_pool(self.resource_id), changes.pop(self.TAGS))
        self.prepare_update_properties(changes)
        if changes:
            self.client().update_subnet_pool(self.resource_id, **changes)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::SubnetPool": SubnetPool}
