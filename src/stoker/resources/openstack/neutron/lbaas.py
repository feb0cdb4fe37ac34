"""Neutron LBaaS, v1 (OS::Neutron::HealthMonitor, Pool, PoolMember, LoadBalancer) and v2
(OS::Neutron::LBaaS::*), as Heat 27 keeps them: HIDDEN placeholders that accept any
property and create nothing, so an old template still runs (Neutron LBaaS is gone from
OpenStack; Octavia's OS::Octavia::* types balance load now). A template naming one is
accepted with the HIDDEN type's warning, which names the replacement.
"""

from __future__ import annotations

from stoker.resources.heat.none import NoneResource
from stoker.sdk import support
from stoker.sdk.resource import Resource

__all__ = ["resource_mapping"]

_V1_DEPRECATED = (
    "Neutron LBaaS v1 is deprecated in the Liberty release and is planned to be removed in a "
    "future release. Going forward, the LBaaS V2 should be used."
)


def _v1_status(since: str | None = None) -> support.SupportStatus:
    first = support.SupportStatus(version=since) if since else None
    deprecated = support.SupportStatus(
        status=support.DEPRECATED, message=_V1_DEPRECATED, version="7.0.0", previous_status=first
    )
    return support.SupportStatus(
        status=support.HIDDEN,
        version="9.0.0",
        message="Use LBaaS V2 instead.",
        previous_status=deprecated,
    )


def _v2_status(since: str) -> support.SupportStatus:
    return support.SupportStatus(
        status=support.HIDDEN,
        version="21.0.0",
        message="Use octavia instead.",
        previous_status=support.SupportStatus(version=since),
    )


def _placeholder(name: str, description: str, status: support.SupportStatus) -> type[Resource]:
    return type(
        name,
        (NoneResource,),
        {"__doc__": description, "support_status": status, "__module__": __name__},
    )


_TYPES = {
    "OS::Neutron::HealthMonitor": _placeholder(
        "HealthMonitor",
        "A resource for managing health monitors for loadbalancers in Neutron.",
        _v1_status(),
    ),
    "OS::Neutron::Pool": _placeholder(
        "Pool", "A resource for managing load balancer pools in Neutron.", _v1_status()
    ),
    "OS::Neutron::PoolMember": _placeholder(
        "PoolMember", "A resource to handle loadbalancer members.", _v1_status("2014.1")
    ),
    "OS::Neutron::LoadBalancer": _placeholder(
        "LoadBalancer", "A resource to link a neutron pool with servers.", _v1_status("2014.1")
    ),
    "OS::Neutron::LBaaS::LoadBalancer": _placeholder(
        "LBaaSLoadBalancer", "A resource for creating LBaaS v2 Load Balancers.", _v2_status("6.0.0")
    ),
    "OS::Neutron::LBaaS::Listener": _placeholder(
        "LBaaSListener", "A resource for managing LBaaS v2 Listeners.", _v2_status("6.0.0")
    ),
    "OS::Neutron::LBaaS::Pool": _placeholder(
        "LBaaSPool", "A resource for managing LBaaS v2 Pools.", _v2_status("6.0.0")
    ),
    "OS::Neutron::LBaaS::PoolMember": _placeholder(
        "LBaaSPoolMember", "A resource for managing LBaaS v2 Pool Members.", _v2_status("6.0.0")
    ),
    "OS::Neutron::LBaaS::HealthMonitor": _placeholder(
        "LBaaSHealthMonitor",
        "A resource to handle load balancer health monitors.",
        _v2_status("6.0.0"),
    ),
    "OS::Neutron::LBaaS::L7Policy": _placeholder(
        "LBaaSL7Policy", "A resource for managing LBaaS v2 L7Policies.", _v2_status("7.0.0")
    ),
    "OS::Neutron::LBaaS::L7Rule": _placeholder(
        "LBaaSL7Rule", "A resource for managing LBaaS v2 L7Rules.", _v2_status("7.0.0")
    ),
}


def resource_mapping() -> dict[str, type[Resource]]:
    return dict(_TYPES)
