"""AWS::CloudFormation::Stack: a nested stack whose template is at ``TemplateURL``.

Owns where the template text comes from and the ``Outputs.<name>`` attributes. The
text is the request's ``files`` entry under that URL (a client sends it as it sends a
``get_file`` target); only when the files do not hold it, and the operator allows it
(``allow_template_urls``, STOKER_ALLOW_TEMPLATE_URLS), does this server fetch an
http(s) URL itself, as Heat's urlfetch does, at most ``max_template_bytes`` long. The
nested stack's lifecycle is ``StackResource``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import quote, urlparse

from stoker.sdk import attributes, properties
from stoker.sdk.exceptions import InvalidTemplateAttribute, ValidationError
from stoker.sdk.stack_resource import StackResource
from stoker.template import loader
from stoker.template import parameters as parameters_module
from stoker.template.errors import TemplateError

# Heat's urlfetch.get: the schemes it fetches.
FETCHED_SCHEMES = ("http", "https")
# Heat's max_template_size, when no setting says otherwise.
DEFAULT_MAX_TEMPLATE_BYTES = 512 * 1024
OUTPUTS_PREFIX = "Outputs."


class FetchError(Exception):
    """A TemplateURL that cannot be read (Heat's URLFetchError)."""


class NestedStack(StackResource):
    """Represents a child stack to allow composition of templates.

    ``TemplateURL`` names the child's template: the request's ``files`` entry of that
    name, else (when the operator allows template URLs) the http(s) document there.
    ``Fn::GetAtt: [name, Outputs.<output>]`` reads one of the child's outputs; the
    reference is the child stack's ARN.
    """

    PROPERTIES = (TEMPLATE_URL, TIMEOUT_IN_MINS, PARAMETERS) = (
        "TemplateURL",
        "TimeoutInMinutes",
        "Parameters",
    )

    properties_schema = {
        TEMPLATE_URL: properties.Schema(
            properties.Schema.STRING,
            "The URL of a template that specifies the stack to be created as a resource.",
            required=True,
            update_allowed=True,
        ),
        TIMEOUT_IN_MINS: properties.Schema(
            properties.Schema.INTEGER,
            "The length of time, in minutes, to wait for the nested stack creation.",
            update_allowed=True,
        ),
        PARAMETERS: properties.Schema(
            properties.Schema.MAP,
            "The set of parameters passed to this nested stack.",
            update_allowed=True,
        ),
    }

    # The ``Outputs.<name>`` attributes are the child's outputs: this plugin checks them.
    attributes_schema: ClassVar[dict[str, attributes.Schema]] = {}

    # -- the template ------------------------------------------------------------------

    def _owner(self, name: str) -> Any:
        """The stack's ``name`` (registry, template): the running stack's, or while
        validating the validation context's."""
        for holder in (self.stack, self.context):
            found = getattr(holder, name, None)
            if found is not None:
                return found
        return None

    def _settings(self) -> Mapping[str, Any]:
        return getattr(self._owner("registry"), "client_settings", None) or {}

    def _files(self) -> Mapping[str, str]:
        return getattr(self._owner("template"), "files", None) or {}

    def _fetch(self, url: str) -> str:
        """The text at ``url``, as Heat's urlfetch.get reads it."""
        import httpx

        scheme = urlparse(url).scheme
        if scheme not in FETCHED_SCHEMES:
            raise FetchError(f"Invalid URL scheme {scheme}")
        if not self._settings().get("allow_template_urls"):
            raise FetchError(
                "this server fetches no URL (the operator setting allow_template_urls is off)"
            )
        limit = int(self._settings().get("max_template_bytes") or DEFAULT_MAX_TEMPLATE_BYTES)
        try:
            with httpx.stream("GET", url, timeout=30.0, follow_redirects=True) as response:
                response.raise_for_status()
                body = b""
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise FetchError(f"Template exceeds maximum allowed size ({limit} bytes)")
        except httpx.HTTPError as error:
            raise FetchError(str(error)) from error
        return body.decode("utf-8", errors="replace")

    def _template_text(self) -> str:
        url = self.properties[self.TEMPLATE_URL]
        text = self._files().get(url)
        if text is not None:
            return text
        try:
            return self._fetch(url)
        except FetchError as error:
            raise ValidationError(
                f"Could not fetch remote template '{url}': {error}",
                path=f"resources.{self.name}.properties.{self.TEMPLATE_URL}",
                hint="send the template in the request's files under this URL, or have the operator set "
                "allow_template_urls",
            ) from None

    def child_template(self) -> Mapping[str, Any]:
        url = self.properties[self.TEMPLATE_URL]
        try:
            data = loader.parse(self._template_text(), url).data
        except TemplateError as error:
            raise ValidationError(
                f"The template at {url} is not valid YAML or JSON: {error}",
                path=f"resources.{self.name}.properties.{self.TEMPLATE_URL}",
            ) from None
        if not isinstance(data, dict):
            raise ValidationError(
                f"The template at {url} must be a map",
                path=f"resources.{self.name}.properties.{self.TEMPLATE_URL}",
            )
        return data

    def child_source(self) -> tuple[str, str] | None:
        # Problems in the child's template are placed in the file the URL names.
        return self._template_text(), self.properties[self.TEMPLATE_URL]

    def child_params(self) -> dict[str, Any]:
        return dict(self.properties[self.PARAMETERS] or {})

    def child_timeout_mins(self) -> int | None:
        return self.properties[self.TIMEOUT_IN_MINS]

    def validate(self) -> None:
        super().validate()
        self.child_template()

    # -- reference and attributes ------------------------------------------------------

    def get_reference_id(self) -> str:
        """The child stack's ARN (arn:openstack:heat::<project>:stacks/<name>/<id>), or the
        resource's name before the child exists."""
        if self.resource_id is None:
            return self.name
        parameter = getattr(self.stack, "parameter", None)
        project = parameter(parameters_module.PROJECT_ID) if parameter is not None else ""
        parts = (project, self.physical_resource_name(), self.resource_id)
        project, stack_name, stack_id = (quote(str(part), safe="") for part in parts)
        return f"arn:openstack:heat::{project}:stacks/{stack_name}/{stack_id}"

    def get_attribute(self, key: str) -> Any:
        if not key.startswith(OUTPUTS_PREFIX):
            raise InvalidTemplateAttribute(self.name, key)
        if self.nested_view() is None:
            return None
        try:
            return self.get_output(key[len(OUTPUTS_PREFIX) :])
        except InvalidTemplateAttribute:
            raise InvalidTemplateAttribute(self.name, key) from None

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name (seed 001)
        return attributes.select_path(self.get_attribute(key), path)


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"AWS::CloudFormation::Stack": NestedStack}
