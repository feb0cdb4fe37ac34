"""OS::Magnum::Bay, as Heat 27 keeps it: a HIDDEN placeholder that accepts any property and
creates nothing, with the HIDDEN type's warning naming OS::Magnum::Cluster."""

from __future__ import annotations

from stoker.resources.heat.none import NoneResource
from stoker.sdk import support
from stoker.sdk.resource import Resource

__all__ = ["Bay", "resource_mapping"]

_DEPRECATION = "Please use OS::Magnum::Cluster instead."


class Bay(NoneResource):
    """A resource that creates a Magnum Bay.

    This resource has been deprecated in favor of OS::Magnum::Cluster.
    """

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        message=_DEPRECATION,
        version="11.0.0",
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            message=_DEPRECATION,
            version="9.0.0",
            previous_status=support.SupportStatus(status=support.SUPPORTED, version="6.0.0"),
        ),
    )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Magnum::Bay": Bay}
