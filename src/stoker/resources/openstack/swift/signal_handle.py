"""OS::Heat::SwiftSignalHandle, as Heat has it: a Swift temp URL an agent PUTs its
signals to.

Owns: the handle's object (named ``physical_resource_name()``) in the stack's container
(named by the stack's id, shared by every handle of the stack, keeping each PUT as a
version of the object), its temp URL (the handle's reference and ``endpoint``), and
deleting every version of the object, then the container once it is empty.

The physical id (the object's name) is recorded before anything is made in Swift, so a
crash mid-create leaves nothing the stack does not know: its delete removes what
exists. The URL holds a signature (a credential): it is kept redacted and never put
into a message.
"""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.sdk import attributes, support
from stoker.sdk.resource import Resource

__all__ = ["SwiftSignalHandle", "resource_mapping"]

# Versions of the object one delete removes at most (each signal PUT made one).
MAX_VERSIONS = 2000


class SwiftSignalHandle(Resource):
    """Resource for managing signals from Swift resources.

    This resource is same as WaitConditionHandle, but designed for using by Swift
    resources.
    """

    support_status = support.SupportStatus(version="2014.2")
    default_client_name = "swift"

    properties_schema: ClassVar[dict[str, Any]] = {}

    ATTRIBUTES = (TOKEN, ENDPOINT, CURL_CLI) = ("token", "endpoint", "curl_cli")

    attributes_schema = {
        TOKEN: attributes.Schema(
            "Tokens are not needed for Swift TempURLs. This attribute is being kept for "
            "compatibility with the OS::Heat::WaitConditionHandle resource.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
        ENDPOINT: attributes.Schema(
            "Endpoint/url which can be used for signalling handle.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
        CURL_CLI: attributes.Schema(
            "Convenience attribute, provides curl CLI command prefix, which can be used for "
            "signalling handle completion or failure. You can signal success by adding "
            '--data-binary \'{"status": "SUCCESS"}\' , or signal failure by adding '
            '--data-binary \'{"status": "FAILURE"}\'.',
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
    }

    def _container(self) -> str:
        return str(self.stack.id)

    def handle_create(self) -> None:
        name = self.physical_resource_name()
        self.resource_id_set(name)
        url = self.client_plugin().get_signal_url(self._container(), name)
        self.data_set(self.ENDPOINT, url, redact=True)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.TOKEN:
            return ""  # OS::Heat::WaitConditionHandle's attribute, kept for templates
        endpoint = self.data().get(self.ENDPOINT)
        if name == self.ENDPOINT:
            return endpoint
        if name == self.CURL_CLI:
            return f"curl -i -X PUT '{endpoint}'"
        return None

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        plugin = self.client_plugin()
        # Each delete brings the previous version back: delete until none is left.
        for _ in range(MAX_VERSIONS):
            try:
                plugin.delete_object(self._container(), self.resource_id)
            except Exception as error:  # noqa: BLE001 - openstacksdk's types
                plugin.ignore_not_found(error)
                break
        # Other handles of the stack may still have objects in it (409): left to them.
        try:
            plugin.delete_container(self._container())
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            if not (plugin.is_not_found(error) or plugin.is_conflict(error)):
                raise
        self.data_delete(self.ENDPOINT)

    def handle_check(self) -> None:
        self.client_plugin().head_object(self._container(), self.resource_id)

    def get_reference_id(self) -> str:
        endpoint = self.data().get(self.ENDPOINT)
        return str(endpoint) if endpoint else self.name


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::SwiftSignalHandle": SwiftSignalHandle}
