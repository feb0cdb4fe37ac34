"""OS::Sahara::*, as Heat 27 keeps them: HIDDEN placeholders that accept any property and
create nothing (Sahara is retired), so an old template still runs, with the HIDDEN type's
warning ("Sahara project was retired")."""

from __future__ import annotations

from stoker.resources.heat.none import NoneResource
from stoker.sdk import support
from stoker.sdk.resource import Resource

__all__ = ["resource_mapping"]


def _status(since: str) -> support.SupportStatus:
    return support.SupportStatus(
        version="23.0.0",
        status=support.HIDDEN,
        message="Sahara project was retired",
        previous_status=support.SupportStatus(
            version="22.0.0",
            status=support.DEPRECATED,
            message="Sahara project was marked inactive",
            previous_status=support.SupportStatus(version=since, status=support.SUPPORTED),
        ),
    )


def _placeholder(name: str, description: str, since: str = "5.0.0") -> type[Resource]:
    return type(
        name,
        (NoneResource,),
        {"__doc__": description, "support_status": _status(since), "__module__": __name__},
    )


_TYPES = {
    "OS::Sahara::Cluster": _placeholder(
        "SaharaCluster",
        """A resource for managing Sahara clusters.

    The Cluster entity represents a collection of VM instances that all have the same data
    processing framework installed. It is mainly characterized by a VM image with a
    pre-installed framework which will be used for cluster deployment. Users may choose one
    of the pre-configured Cluster Templates to start a Cluster. To get access to VMs after a
    Cluster has started, the user should specify a keypair.
    """,
    ),
    "OS::Sahara::DataSource": _placeholder(
        "DataSource",
        """A resource for creating sahara data source.

    A data source stores an URL which designates the location of input or output data and
    any credentials needed to access the location.
    """,
    ),
    "OS::Sahara::ImageRegistry": _placeholder(
        "SaharaImageRegistry",
        """A resource for registering an image in sahara.

    Allows to register an image in the sahara image registry and add tags.
    """,
    ),
    "OS::Sahara::Job": _placeholder(
        "SaharaJob",
        """A resource for creating Sahara Job.

    A job specifies the type of the job and lists all of the individual job binary objects.
    Can be launched using resource-signal.
    """,
        since="8.0.0",
    ),
    "OS::Sahara::JobBinary": _placeholder(
        "JobBinary",
        """A resource for creating sahara job binary.

    A job binary stores an URL to a single script or Jar file and any credentials needed to
    retrieve the file.
    """,
    ),
    "OS::Sahara::NodeGroupTemplate": _placeholder(
        "SaharaNodeGroupTemplate",
        """A resource for managing Sahara node group templates.

    A Node Group Template describes a group of nodes within cluster. It contains a list of
    hadoop processes that will be launched on each instance in a group. Also a Node Group
    Template may provide node scoped configurations for those processes.
    """,
        since="2014.2",
    ),
    "OS::Sahara::ClusterTemplate": _placeholder(
        "SaharaClusterTemplate",
        """A resource for managing Sahara cluster templates.

    A Cluster Template is designed to bring Node Group Templates together to form a Cluster.
    A Cluster Template defines what Node Groups will be included and how many instances will
    be created in each. Some data processing framework configurations can not be applied to
    a single node, but to a whole Cluster. A user can specify these kinds of configurations
    in a Cluster Template. Sahara enables users to specify which processes should be added
    to an anti-affinity group within a Cluster Template. If a process is included into an
    anti-affinity group, it means that VMs where this process is going to be launched should
    be scheduled to different hardware hosts.
    """,
        since="2014.2",
    ),
}


def resource_mapping() -> dict[str, type[Resource]]:
    return dict(_TYPES)
