"""The user data of an AWS::EC2::Instance, as Heat 27 builds it (its nova plugin's
``build_userdata`` with the HEAT_CFNTOOLS format and the ``ec2-user`` user): a multipart
MIME message for cloud-init carrying a cloud-config that adds the user, a boothook, the
part handler, the template's ``UserData`` as ``cfn-userdata`` with a script that runs it,
the resource's Metadata as ``cfn-init-data``, and where the cfn tools reach the CFN
metadata API (``cfn-metadata-server``, ``cfn-boto-cfg``).

Owns: that message, and the seam for the metadata API's address,
``cfn_metadata_server_url``: the CFN metadata API (and the stack users that sign requests
to it) belongs to another part of stoker; until it answers, the two parts that name it are
left out, as OS::Nova::Server leaves them out (``server_requests`` docstring).

Must not: call a cloud.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from email.mime import multipart
from typing import Any
from urllib import parse

from stoker.resources.openstack.nova import server_requests

__all__ = [
    "INSTANCE_USER",
    "build_instance_user_data",
    "cfn_metadata_server_url",
    "set_cfn_metadata_server_url_source",
]

INSTANCE_USER = "ec2-user"

# Heat's heat/cloudinit/config, with the user line filled in.
_CLOUD_CONFIG = """user: {user}

# Capture all subprocess output into a logfile
# Useful for troubleshooting cloud-init issues
output: {{all: '| tee -a /var/log/cloud-init-output.log'}}
"""

# Heat's heat/cloudinit/boothook.sh: the user for old cloud-init, and the cfn tools' links.
_BOOTHOOK = """#!/bin/bash

# For cloud-init releases that do not create the user themselves.
useradd -m {user}
echo -e '{user}\\tALL=(ALL)\\tNOPASSWD: ALL' >> /etc/sudoers

# in case heat-cfntools has been installed from package but no symlinks
# are yet in /opt/aws/bin/
cfn-create-aws-symlinks

# Do not remove - the cloud boothook should always return success
exit 0
"""

# Who answers "where is the CFN metadata API?" (None: nobody yet). The part of stoker that
# serves the API sets it; it is given the resource, so it can answer per stack.
_url_source: Callable[[Any], str | None] | None = None


def set_cfn_metadata_server_url_source(source: Callable[[Any], str | None] | None) -> None:
    """Install (or, with None, remove) the function that gives the CFN metadata API's
    URL for a resource (Heat's ``heat_metadata_server_url``, ending in ``/v1/``)."""
    global _url_source
    _url_source = source


def cfn_metadata_server_url(resource: Any) -> str | None:
    """The URL the instance's cfn tools reach the CFN metadata API at, or None when stoker
    serves no such API (the seam the stack-user and CFN API work fills)."""
    return _url_source(resource) if _url_source is not None else None


def _boto_config(url: str, is_secure: bool = False, validate_certificates: bool = True) -> str:
    """Heat's ``cfn-boto-cfg``: where boto in the cfn tools finds the CFN API."""
    return "\n".join(
        [
            "[Boto]",
            "debug = 0",
            f"is_secure = {is_secure}",
            f"https_validate_certificates = {validate_certificates}",
            "cfn_region_name = heat",
            f"cfn_region_endpoint = {parse.urlparse(url).hostname}",
        ]
    )


def build_instance_user_data(
    user_data: str | None,
    metadata: Mapping[str, Any] | None,
    metadata_url: str | None,
    user: str = INSTANCE_USER,
) -> str:
    """The MIME message (before base64), parts in Heat's order."""
    part = server_requests._part
    parts = [
        part(_CLOUD_CONFIG.format(user=user), "cloud-config", "cloud-config"),
        part(_BOOTHOOK.format(user=user), "boothook.sh", "cloud-boothook"),
        part(server_requests._PART_HANDLER, "part-handler.py", "part-handler"),
        part(user_data or "", "cfn-userdata", "x-cfninitdata"),
        part(server_requests._RUN_CFN_USERDATA, "loguserdata.py", "x-shellscript"),
    ]
    if metadata:
        parts.append(part(json.dumps(metadata), "cfn-init-data", "x-cfninitdata"))
    if metadata_url:
        parts.append(part(metadata_url, "cfn-metadata-server", "x-cfninitdata"))
        parts.append(
            part(
                _boto_config(metadata_url, is_secure=metadata_url.startswith("https")),
                "cfn-boto-cfg",
                "x-cfninitdata",
            )
        )
    return multipart.MIMEMultipart(_subparts=parts).as_string()
