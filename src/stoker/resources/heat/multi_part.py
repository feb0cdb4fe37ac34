"""OS::Heat::MultipartMime: software configs assembled into one MIME multipart message
(built with the ``email`` package, as Heat builds it), stored as a software config."""

from __future__ import annotations

import email
import os
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

from stoker.resources.heat.software_config import SoftwareConfig, is_uuid_like
from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import StokerError
from stoker.sdk.resource import Resource
from stoker.sdk.software_config import SoftwareConfigNotFoundError, SoftwareConfigs


def text_part(content: str, subtype: str | None, filename: str | None) -> MIMEText:
    """One text part: us-ascii when the content is ASCII, else utf-8; a filename
    becomes an attachment's; with no subtype, the filename without its extension is the
    subtype (Heat's rule), else ``plain``."""
    if not subtype and filename:
        subtype = os.path.splitext(filename)[0]
    charset = "us-ascii" if content.isascii() else "utf-8"
    part = MIMEText(content, _subtype=subtype, _charset=charset) if subtype else MIMEText(content, _charset=charset)
    if filename:
        part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def _parts_of(message_text: str) -> list[Message]:
    """The parts of a multipart message, each again as a text part (its content
    decoded, subtype and filename kept); nothing when the text is not multipart."""
    message = email.message_from_string(message_text)
    if not message.is_multipart():
        return []
    parts: list[Message] = []
    for part in message.get_payload():
        if not isinstance(part, Message):  # a multipart message's payload is its parts
            continue
        payload = part.get_payload(decode=True)
        content = payload.decode(part.get_content_charset() or "us-ascii", "replace") if isinstance(payload, bytes) else str(part.get_payload())
        parts.append(text_part(content, part.get_content_subtype(), part.get_filename()))
    return parts


def build_message(parts: list[dict[str, Any]], configs: SoftwareConfigs | None) -> str:
    """The multipart message of ``parts`` (each: config, type, filename, subtype). A part
    whose config is a config's id holds that config's stored value (the id itself when
    there is no such config); a ``multipart`` part's parts are appended one by one."""
    subparts: list[Message] = []
    for index, item in enumerate(parts):
        content = item.get("config")
        if isinstance(content, str) and is_uuid_like(content) and configs is not None:
            try:
                content = configs.show(content)["config"]
            except SoftwareConfigNotFoundError:
                pass
        if not isinstance(content, str):
            raise StokerError(
                f"parts[{index}]: the config of a part must be text; config {item.get('config')} holds {type(content).__name__}",
                hint="a structured config cannot be a MIME part; use OS::Heat::SoftwareConfig or OS::Heat::CloudConfig",
            )
        if (item.get("type") or MultipartMime.TEXT) == MultipartMime.MULTIPART:
            subparts.extend(_parts_of(content))
        else:
            subparts.append(text_part(content, item.get("subtype") or "", item.get("filename") or ""))
    return MIMEMultipart(_subparts=subparts).as_string()


class MultipartMime(SoftwareConfig):
    """Software configs joined into one MIME multipart message, stored as a config.

    Each part is text given inline or the id of another config (whose stored config is
    used); a part of type ``multipart`` contributes the parts of the multipart message it
    holds. The usual use is cloud-init user_data made of scripts and cloud-config: it
    runs at boot only, so a change replaces the message and the servers that use it.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (PARTS, CONFIG, FILENAME, TYPE, SUBTYPE, GROUP) = ("parts", "config", "filename", "type", "subtype", "group")
    TYPES = (TEXT, MULTIPART) = ("text", "multipart")

    properties_schema = {
        GROUP: properties.Schema(
            properties.Schema.STRING,
            "The group the message is delivered under to a server, usually naming the tool that applies it.",
            support_status=support.SupportStatus(version="14.0.0"),
            default="Heat::Ungrouped",
        ),
        PARTS: properties.Schema(
            properties.Schema.LIST,
            "The parts of the message, in order.",
            default=[],
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    CONFIG: properties.Schema(
                        properties.Schema.STRING,
                        "The part's content: text, or the id of a software config whose config is used.",
                        required=True,
                    ),
                    FILENAME: properties.Schema(properties.Schema.STRING, "A file name for the part (an attachment's)."),
                    TYPE: properties.Schema(
                        properties.Schema.STRING,
                        "Whether the content is text, or a multipart message whose parts are added.",
                        default=TEXT,
                        constraints=[constraints.AllowedValues(list(TYPES))],
                    ),
                    SUBTYPE: properties.Schema(properties.Schema.STRING, "The MIME subtype of a text part (text/<subtype>)."),
                },
            ),
        ),
    }

    def get_message(self) -> str:
        """The message to store (built once per plugin object)."""
        message = getattr(self, "_message", None)
        if message is None:
            message = self._message = build_message(self.properties[self.PARTS], self.configs())
        return message

    def config_fields(self) -> dict[str, Any]:
        return {"group": self.properties[self.GROUP], "config": self.get_message()}


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::MultipartMime": MultipartMime}
