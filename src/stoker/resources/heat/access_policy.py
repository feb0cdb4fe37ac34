"""OS::Heat::AccessPolicy: which of the stack's resources an AWS::IAM::User may read
through the DescribeStackResource API. It makes nothing; validation checks that every
resource it names is in the stack."""

from __future__ import annotations

import uuid

from stoker.sdk import properties
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource


class AccessPolicy(Resource):
    """Resource for defining which resources can be accessed by users.

    NOTE: Now this resource is actually associated with an AWS user resource, not any
    OS:: resource though it is registered under the OS namespace below.

    Resource for defining resources that users are allowed to access by the
    DescribeStackResource API.
    """

    PROPERTIES = (ALLOWED_RESOURCES,) = ("AllowedResources",)

    properties_schema = {
        ALLOWED_RESOURCES: properties.Schema(
            properties.Schema.LIST,
            "Resources that users are allowed to access by the DescribeStackResource API.",
            required=True,
        ),
    }

    def validate(self) -> None:
        super().validate()
        template = getattr(self.stack, "template", None) or getattr(self.context, "template", None)
        names = getattr(template, "resources", None)
        if names is None:  # outside a stack (the type's documentation)
            return
        for name in self.properties[self.ALLOWED_RESOURCES] or []:
            if name not in names:
                raise ValidationError(
                    f"AccessPolicy resource {name} not in stack",
                    path=f"resources.{self.name}.properties.{self.ALLOWED_RESOURCES}",
                    hint="name resources of this stack only",
                )

    def handle_create(self) -> None:
        self.resource_id_set(str(uuid.uuid4()))

    def access_allowed(self, resource_name: str) -> bool:
        return resource_name in (self.properties[self.ALLOWED_RESOURCES] or [])


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::AccessPolicy": AccessPolicy}
