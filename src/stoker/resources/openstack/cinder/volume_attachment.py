"""OS::Cinder::VolumeAttachment, as Heat has it: a volume attached to a server through
Nova's os-volume_attachments API.

Owns: attaching (retrying while Nova answers 409), detaching (until Cinder says the volume
is 'available' and Nova no longer lists the attachment), update by detaching and
attaching again (Heat's rule: any change re-attaches), and check.

Tokens are plain dicts and each check decides from the live volume: Nova reserves the
volume before its attach call returns, so a volume still 'available' means "ask (again)";
a restarted engine polling the stored token does not attach twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["CinderVolumeAttachment", "resource_mapping"]

# How often an attach Nova accepted but rolled back (the volume 'available' again) is asked anew.
ATTACH_ATTEMPTS = 3


class CinderVolumeAttachment(Resource):
    """Resource for associating volume to instance.

    Resource for associating existing volume to instance. Also, the location where the
    volume is exposed on the instance can be specified.
    """

    default_client_name = "cinder"

    PROPERTIES = (INSTANCE_ID, VOLUME_ID, DEVICE) = ("instance_uuid", "volume_id", "mountpoint")

    properties_schema = {
        INSTANCE_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the server to which the volume attaches.",
            required=True,
            update_allowed=True,
        ),
        VOLUME_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the volume to be attached.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("cinder.volume")],
        ),
        DEVICE: properties.Schema(
            properties.Schema.STRING,
            "The location where the volume is exposed on the instance. This assignment may not "
            "be honored and it is advised that the path /dev/disk/by-id/virtio-<VolumeId> be "
            "used instead.",
            update_allowed=True,
        ),
    }

    def attachment_request(self, prop_diff: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Server, volume and device (None for "Nova picks") after applying ``prop_diff``."""
        changed = dict(prop_diff or {})

        def value(key: str) -> Any:
            return changed[key] if key in changed else self.properties[key]

        return {
            "server": value(self.INSTANCE_ID),
            "volume": value(self.VOLUME_ID),
            "device": value(self.DEVICE) or None,
        }

    # -- attach -------------------------------------------------------------------------

    def _attach_step(self, token: dict[str, Any]) -> bool:
        """One poll of an attach described by ``token``; True when the volume is in-use."""
        volume = self.client().get_volume(token["volume"])
        if volume.status == "available" and not _attached_to(volume, token["server"]):
            if token.get("attempts", 0) >= ATTACH_ATTEMPTS:
                raise ResourceFailure(
                    f"Volume attachment failed - volume {volume.id} is still 'available' after "
                    f"{ATTACH_ATTEMPTS} attach requests to server {token['server']}"
                )
            token["attempts"] = token.get("attempts", 0) + 1
            attachment_id = self.client_plugin("nova").attach_volume(token["server"], token["volume"], token["device"])
            if attachment_id is not None:
                self.resource_id_set(attachment_id)
            return False
        return bool(self.client_plugin().check_attach_volume_complete(token["volume"]))

    def handle_create(self) -> dict[str, Any]:
        token = self.attachment_request()
        attachment_id = self.client_plugin("nova").attach_volume(token["server"], token["volume"], token["device"])
        token["attempts"] = 1
        if attachment_id is not None:
            self.resource_id_set(attachment_id)
        return token

    def check_create_complete(self, token: Any) -> bool:
        return self._attach_step(token)

    # -- detach -------------------------------------------------------------------------

    def _detach_step(self, token: dict[str, Any]) -> bool:
        """One poll of a detach; True when Cinder and Nova both see it done."""
        server, volume = token["server"], token["volume"]
        nova = self.client_plugin("nova")
        if not token.get("called"):
            token["called"] = nova.detach_volume(server, volume)
            return False
        if not self.client_plugin().check_detach_volume_complete(volume, server):
            return False
        return bool(nova.check_detach_volume_complete(server, volume))

    def handle_delete(self) -> dict[str, Any] | None:
        if not self.resource_id:
            return None
        request = self.attachment_request()
        token = {"server": request["server"], "volume": request["volume"]}
        token["called"] = self.client_plugin("nova").detach_volume(token["server"], token["volume"])
        return token

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        return self._detach_step(token)

    # -- update: detach, then attach again ------------------------------------------------

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any] | None:
        if not prop_diff:
            return None
        old = self.attachment_request()
        detach = {"server": old["server"], "volume": old["volume"]}
        detach["called"] = self.client_plugin("nova").detach_volume(detach["server"], detach["volume"])
        return {"detach": detach, "attach": self.attachment_request(prop_diff), "detached": False}

    def check_update_complete(self, token: Any) -> bool:
        if not token:
            return True
        if not token.get("detached"):
            token["detached"] = self._detach_step(token["detach"])
            return False
        return self._attach_step(token["attach"])

    # -- check --------------------------------------------------------------------------

    def handle_check(self) -> None:
        """The volume must be in-use and attached to the server."""
        request = self.attachment_request()
        volume = self.client().get_volume(request["volume"])
        if not _attached_to(volume, request["server"]):
            raise ResourceFailure(
                f"Volume {volume.id} is not attached to server {request['server']} (status '{volume.status}')"
            )


def _attached_to(volume: Any, server_id: str) -> bool:
    return any(attachment.get("server_id") == server_id for attachment in volume.attachments or [])


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Cinder::VolumeAttachment": CinderVolumeAttachment}
