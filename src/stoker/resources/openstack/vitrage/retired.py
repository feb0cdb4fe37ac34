"""OS::Vitrage::Template, as Heat 27 keeps it: a HIDDEN placeholder that accepts any property
and creates nothing (Vitrage is retired), so an old template still runs, with the HIDDEN
type's warning. Its message is Heat 27's, copied as it is ("Senlin project was retired")."""

from __future__ import annotations

from stoker.resources.heat.none import NoneResource
from stoker.sdk import support
from stoker.sdk.resource import Resource

__all__ = ["VitrageTemplate", "resource_mapping"]


class VitrageTemplate(NoneResource):
    """A resource for managing Vitrage templates.

    A Vitrage template defines conditions and actions, based on the Vitrage topology graph.
    For example, if there is an "instance down" alarm on an instance, then execute a Mistral
    healing workflow.

    The VitrageTemplate resource generates and adds to Vitrage a template based on the input
    parameters.
    """

    support_status = support.SupportStatus(
        version="27.0.0",
        status=support.HIDDEN,
        message="Senlin project was retired",
        previous_status=support.SupportStatus(
            version="26.0.0",
            status=support.DEPRECATED,
            message="Vitrage project was marked inactive",
            previous_status=support.SupportStatus(version="16.0.0", status=support.SUPPORTED),
        ),
    )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Vitrage::Template": VitrageTemplate}
