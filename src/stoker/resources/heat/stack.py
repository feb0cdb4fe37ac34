"""OS::Heat::Stack: a nested stack from a template given inline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.stack_resource import StackResource
from stoker.template import loader
from stoker.template.errors import NestedStackErrors, TemplateError
from stoker.template.functions.files import GetFile

# Settings.region_name's default, when the context names no registry (a plugin test).
DEFAULT_REGION = "RegionOne"


class NestedStack(StackResource):
    """A resource representing a stack of resources, from a template given inline.

    The ``template`` property holds the nested template (YAML or JSON text, or a map);
    ``parameters`` are its parameters. The nested stack's outputs are the ``outputs``
    attribute. A ``context.region_name`` naming this server's own region (the
    ``region_name`` setting, STOKER_REGION_NAME, default RegionOne) makes the stack
    here, as Heat's remote stack in its own region does; another region, or a remote
    cloud's credential (``credential_secret_id``, which needs Barbican), is refused with
    Heat's messages, since stoker knows no other orchestration endpoint.
    """

    support_status = support.SupportStatus()

    PROPERTIES = (CONTEXT, TEMPLATE, TIMEOUT, PARAMETERS) = (
        "context",
        "template",
        "timeout",
        "parameters",
    )
    ATTRIBUTES = (STACK_NAME, OUTPUTS) = ("stack_name", "outputs")
    _CONTEXT_KEYS = (REGION_NAME, CREDENTIAL_SECRET_ID, CA_CERT, SSL_INSECURE) = (
        "region_name",
        "credential_secret_id",
        "ca_cert",
        "insecure",
    )

    properties_schema = {
        CONTEXT: properties.Schema(
            properties.Schema.MAP,
            "Context for this stack.",
            update_allowed=True,
            schema={
                REGION_NAME: properties.Schema(
                    properties.Schema.STRING, "Region name in which this stack will be created."
                ),
                CREDENTIAL_SECRET_ID: properties.Schema(
                    properties.Schema.STRING,
                    "A Barbican secret ID. The Barbican secret should contain an OpenStack "
                    "credential that can be used to access a remote cloud.",
                    update_allowed=True,
                    support_status=support.SupportStatus(version="12.0.0"),
                ),
                CA_CERT: properties.Schema(
                    properties.Schema.STRING,
                    "CA Cert for SSL.",
                    update_allowed=True,
                    support_status=support.SupportStatus(version="12.0.0"),
                ),
                SSL_INSECURE: properties.Schema(
                    properties.Schema.BOOLEAN,
                    "If set, then the server's certificate will not be verified.",
                    default=False,
                    update_allowed=True,
                    support_status=support.SupportStatus(version="12.0.0"),
                ),
            },
        ),
        TEMPLATE: properties.Schema(
            properties.Schema.STRING,
            "Template that specifies the stack to be created as a resource.",
            required=True,
            update_allowed=True,
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.INTEGER,
            "Number of minutes to wait for this stack creation.",
            constraints=[constraints.Range(min=1)],
            update_allowed=True,
        ),
        PARAMETERS: properties.Schema(
            properties.Schema.MAP,
            "Set of parameters passed to this nested stack.",
            update_allowed=True,
            default={},
        ),
    }

    attributes_schema = {
        STACK_NAME: attributes.Schema("Name of the stack.", type=attributes.Schema.STRING),
        OUTPUTS: attributes.Schema(
            "A dict of key-value pairs output from the stack.", type=attributes.Schema.MAP
        ),
    }

    # -- where the stack is made ----------------------------------------------------------

    def _own_region(self) -> str:
        registry = getattr(self.context, "registry", None)
        return str(getattr(registry, "region_name", None) or DEFAULT_REGION)

    def _location(self) -> str:
        context = self.properties[self.CONTEXT] or {}
        if context.get(self.CREDENTIAL_SECRET_ID):
            return "remote cloud"
        return f'region "{context.get(self.REGION_NAME) or self._own_region()}"'

    def _check_endpoint(self) -> None:
        """Heat's RemoteStack.validate: the stack's Heat endpoint must be reachable;
        stoker's only endpoint is itself, in its own region."""
        context = self.properties[self.CONTEXT] or {}
        region = context.get(self.REGION_NAME) or self._own_region()
        if context.get(self.CREDENTIAL_SECRET_ID):
            reason = (
                "credential_secret_id needs a Barbican secret store, which stoker does not have"
            )
        elif region != self._own_region():
            reason = f"publicURL endpoint for orchestration service in {region} region not found"
        else:
            return
        error = ValidationError(
            f'Cannot establish connection to Heat endpoint at {self._location()} due to "{reason}"',
            path=f"resources.{self.name}.properties.context",
            hint=f"stoker orchestrates region {self._own_region()} only; omit context.region_name or name that region",
        )
        error.verbatim = True  # Heat's words, which its clients match
        raise error

    def validate(self) -> None:
        super().validate()
        self._check_endpoint()
        self.child_template()

    def validate_nested(self) -> None:
        try:
            super().validate_nested()
        except ValidationError as error:
            # Heat validates the template through the (remote) endpoint and says so, in
            # words its clients match: the nested problems' own texts, places apart.
            inner = error.errors if isinstance(error, NestedStackErrors) else [TemplateError.of(error)]
            failed = NestedStackErrors(
                # Heat's stops at the first problem; every one, placed, is in the details.
                f'Failed validating stack template using Heat endpoint at {self._location()} due to "ERROR: {inner[0].message}"',
                inner,
                path=error.path,
            )
            failed.verbatim = True
            raise failed from error

    def needs_replace_with_prop_diff(
        self, changed_properties_set: Any, after_props: Any, before_props: Any
    ) -> bool:
        """A changed region replaces the stack (as Heat's RemoteStack)."""
        if self.CONTEXT in changed_properties_set:
            after = (after_props.get(self.CONTEXT) or {}).get(self.REGION_NAME)
            before = (before_props.get(self.CONTEXT) or {}).get(self.REGION_NAME)
            return after != before
        return False

    def child_template(self) -> Mapping[str, Any]:
        text = self.properties[self.TEMPLATE]
        try:
            data = loader.parse(text, f"resources.{self.name}.properties.template").data
        except TemplateError as error:
            raise ValidationError(
                f"The nested template is not valid YAML or JSON: {error}",
                path=f"resources.{self.name}.properties.template",
            )
        if not isinstance(data, dict):
            raise ValidationError(
                "The nested template must be a map (a HOT template)",
                path=f"resources.{self.name}.properties.template",
            )
        return data

    def child_source(self) -> tuple[str, str] | None:
        # A template read with get_file is named by its file, so its errors name it too.
        raw = (
            getattr(self.t, "properties_data", {}).get(self.TEMPLATE)
            if self.t is not None
            else None
        )
        name = (
            raw.args
            if isinstance(raw, GetFile) and isinstance(raw.args, str)
            else f"resources.{self.name}.properties.template"
        )
        return self.properties[self.TEMPLATE], name

    def child_params(self) -> dict[str, Any]:
        return dict(self.properties[self.PARAMETERS] or {})

    def child_timeout_mins(self) -> int | None:
        return self.properties[self.TIMEOUT]

    def _resolve_attribute(self, name: str) -> Any:
        view = self.nested_view()
        if view is None:
            return None
        if name == self.OUTPUTS:
            return view.outputs()
        if name == self.STACK_NAME:
            return self.physical_resource_name()
        return None


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"OS::Heat::Stack": NestedStack}
