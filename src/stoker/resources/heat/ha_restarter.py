"""OS::Heat::HARestarter: removed in Heat 10 and kept HIDDEN as a placeholder that does
nothing (an OS::Heat::None), so that old stacks holding one still load and delete."""

from __future__ import annotations

from stoker.resources.heat.none import NoneResource
from stoker.sdk import support
from stoker.sdk.resource import Resource


class Restarter(NoneResource):
    """A placeholder for the removed HARestarter: accepts any properties, makes nothing."""

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        version="10.0.0",
        message=(
            "The HARestarter resource type has been removed. Existing stacks containing HARestarter resources can "
            "still be used, but the HARestarter resource will be a placeholder that does nothing."
        ),
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            message=(
                "The HARestarter resource type is deprecated and will be removed in a future release of Heat, once "
                "it has support for auto-healing any type of resource. Note that HARestarter does *not* actually "
                "restart servers - it deletes and then recreates them. It also does the same to all dependent "
                "resources, and may therefore exhibit unexpected and undesirable behaviour. Instead, use the "
                "mark-unhealthy API to mark a resource as needing replacement, and then a stack update to perform "
                "the replacement while respecting  the dependencies and not deleting them unnecessarily."
            ),
            version="2015.1",
        ),
    )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::HARestarter": Restarter}
