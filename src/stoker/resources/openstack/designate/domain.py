"""OS::Designate::Domain: Designate's v1 domain, HIDDEN in Heat since 10.0.0, working here
as a v2 zone.

Heat 10 dropped its v1 implementation and keeps the type as a placeholder that creates
nothing; Designate has not served v1 since its Queens release. So that templates written for
it (openstack/heat-templates' ``hot/designate``) still do what they say, stoker keeps the
type's last schema (Heat 9) and makes the domain a zone: same name, e-mail, TTL and
description, updated in place as Heat updated them, the ``serial`` attribute, waits and
delete as OS::Designate::Zone (whose code it shares). Being HIDDEN, it is left out of the
type list, its schema is not shown, and validating it warns with Heat's message.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.designate.zone import DesignateZone
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["DesignateDomain", "resource_mapping"]


class DesignateDomain(DesignateZone):
    """Heat Template Resource for Designate Domain.

    Designate provides DNS-as-a-Service services for OpenStack. So, domain is a realm with
    an identification string, unique in DNS.
    """

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        version="10.0.0",
        message="This resource has been removed, use OS::Designate::Zone instead.",
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            version="8.0.0",
            previous_status=support.SupportStatus(version="5.0.0"),
        ),
    )

    PROPERTIES = (NAME, TTL, DESCRIPTION, EMAIL) = ("name", "ttl", "description", "email")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Domain name.",
            required=True,
            constraints=[constraints.Length(max=255)],
        ),
        TTL: properties.Schema(
            properties.Schema.INTEGER,
            "Time To Live (Seconds).",
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=2147483647)],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of domain.",
            update_allowed=True,
            constraints=[constraints.Length(max=160)],
        ),
        EMAIL: properties.Schema(
            properties.Schema.STRING, "Domain email.", update_allowed=True, required=True
        ),
    }

    attributes_schema = {
        DesignateZone.SERIAL: attributes.Schema(
            "DNS domain serial.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[Any]:
        return []

    def validate(self) -> None:
        # The schema's checks only: a domain has no zone type.
        Resource.validate(self)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Designate::Domain": DesignateDomain}
