"""OS::Senlin::*, as Heat 27 keeps them: HIDDEN placeholders that accept any property and
create nothing (Senlin is retired), so an old template still runs, with the HIDDEN type's
warning ("Senlin project was retired")."""

from __future__ import annotations

from stoker.resources.heat.none import NoneResource
from stoker.sdk import support
from stoker.sdk.resource import Resource

__all__ = ["resource_mapping"]

_STATUS = support.SupportStatus(
    version="23.0.0",
    status=support.HIDDEN,
    message="Senlin project was retired",
    previous_status=support.SupportStatus(
        version="22.0.0",
        status=support.DEPRECATED,
        message="Senlin project was marked inactive",
        previous_status=support.SupportStatus(version="6.0.0"),
    ),
)


def _placeholder(name: str, description: str) -> type[Resource]:
    return type(
        name,
        (NoneResource,),
        {"__doc__": description, "support_status": _STATUS, "__module__": __name__},
    )


_TYPES = {
    "OS::Senlin::Cluster": _placeholder(
        "Cluster",
        """A resource that creates a Senlin Cluster.

    Cluster resource in senlin can create and manage objects of the same nature, e.g. Nova
    servers, Heat stacks, Cinder volumes, etc. The collection of these objects is referred
    to as a cluster.
    """,
    ),
    "OS::Senlin::Node": _placeholder(
        "Node",
        """A resource that creates a Senlin Node.

    Node is an object that belongs to at most one Cluster, it can be created based on a
    profile.
    """,
    ),
    "OS::Senlin::Policy": _placeholder(
        "Policy",
        """A resource that creates a Senlin Policy.

    A policy is a set of rules that can be checked and/or enforced when an action is
    performed on a Cluster.
    """,
    ),
    "OS::Senlin::Profile": _placeholder(
        "Profile",
        """A resource that creates a Senlin Profile.

    Profile resource in senlin is a template describing how to create nodes in cluster.
    """,
    ),
    "OS::Senlin::Receiver": _placeholder(
        "Receiver",
        """A resource that creates Senlin Receiver.

    Receiver is an abstract resource created at the senlin engine that can be used to hook
    the engine to some external event/alarm sources.
    """,
    ),
}


def resource_mapping() -> dict[str, type[Resource]]:
    return dict(_TYPES)
