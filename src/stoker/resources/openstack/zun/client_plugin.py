"""The ``zun`` client plugin: Zun's v1 API through openstacksdk's (generic) container proxy,
at the microversions Heat's plugin uses (1.12; 1.18 for updates and networks; 1.36 for
``tty``), and the refusal when the cloud has no Zun.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from stoker.resources.openstack.service_catalog import CatalogCheckedClientPlugin

__all__ = ["ZunClientPlugin", "client_mapping"]


class ZunClientPlugin(CatalogCheckedClientPlugin):
    """Zun through openstacksdk's ``connection.application_container``."""

    name = "zun"
    project = "Zun"
    service_type = "application-container"
    proxy_name = "application_container"
    microversioned = True
    # Heat's versions.
    V1_12, V1_18, V1_36 = "1.12", "1.18", "1.36"

    def request(self, method: str, path: str, body: Any = None, version: str = V1_12) -> Any:
        arguments: dict[str, Any] = {} if body is None else {"json": body}
        response = self.rest(method, path, microversion=version, **arguments)
        return response.json() if response.content else None

    def get_container(self, container_id: str) -> dict[str, Any]:
        return self.read(lambda: self.request("GET", f"/containers/{container_id}"))

    def update_container(self, container_id: str, **changes: Any) -> None:
        if changes:
            self.request("PATCH", f"/containers/{container_id}", changes, self.V1_18)

    def network_list(self, container_id: str) -> list[dict[str, Any]]:
        answer = self.request("GET", f"/containers/{container_id}/network_list", version=self.V1_18)
        return list(answer.get("networks", []))

    def network_detach(self, container_id: str, port_id: str) -> None:
        try:
            self.request(
                "POST", f"/containers/{container_id}/network_detach?{urlencode({'port': port_id})}",
                version=self.V1_18,
            )  # fmt: skip
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)

    def network_attach(self, container_id: str, **arguments: str) -> None:
        self.request(
            "POST", f"/containers/{container_id}/network_attach?{urlencode(arguments)}",
            version=self.V1_18,
        )  # fmt: skip


def client_mapping() -> dict[str, type[CatalogCheckedClientPlugin]]:
    return {"zun": ZunClientPlugin}


def constraint_mapping() -> dict[str, Any]:
    return {}  # Heat registers no Zun constraint
