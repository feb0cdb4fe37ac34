"""OS::Monasca::AlarmDefinition and OS::Monasca::Notification, as Heat 27 keeps them: HIDDEN
placeholders that accept any property and create nothing (Monasca is retired), so an old
template still runs, with the HIDDEN type's warning ("Monasca project was retired")."""

from __future__ import annotations

from stoker.resources.heat.none import NoneResource
from stoker.sdk import support
from stoker.sdk.resource import Resource

__all__ = ["resource_mapping"]


def _status(seven: str) -> support.SupportStatus:
    # The alarm definition was UNSUPPORTED in 5.0.0, the notification SUPPORTED.
    return support.SupportStatus(
        version="25.0.0",
        status=support.HIDDEN,
        message="Monasca project was retired",
        previous_status=support.SupportStatus(
            version="22.0.0",
            status=support.DEPRECATED,
            message="Monasca project was marked inactive",
            previous_status=support.SupportStatus(
                version="7.0.0",
                status=support.SUPPORTED,
                previous_status=support.SupportStatus(version="5.0.0", status=seven),
            ),
        ),
    )


def _placeholder(name: str, description: str, first_status: str) -> type[Resource]:
    return type(
        name,
        (NoneResource,),
        {"__doc__": description, "support_status": _status(first_status), "__module__": __name__},
    )


_TYPES = {
    "OS::Monasca::AlarmDefinition": _placeholder(
        "MonascaAlarmDefinition",
        """Heat Template Resource for Monasca Alarm definition.

    Monasca Alarm definition helps to define the required expression for a given alarm
    situation. This plugin helps to create, update and delete the alarm definition.

    Alarm definitions is necessary to describe and manage alarms in a one-to-many
    relationship in order to avoid having to manually declare each alarm even though they
    may share many common attributes and differ in only one, such as hostname.
    """,
        support.UNSUPPORTED,
    ),
    "OS::Monasca::Notification": _placeholder(
        "MonascaNotification",
        """Heat Template Resource for Monasca Notification.

    A resource which is used to notificate if there is some alarm. Monasca Notification
    helps to declare the hook points, which will be invoked once alarm is generated. This
    plugin helps to create, update and delete the notification.
    """,
        support.SUPPORTED,
    ),
}


def resource_mapping() -> dict[str, type[Resource]]:
    return dict(_TYPES)
