"""Which backend a ``stoker`` command talks to, from the global options.

* no ``--url`` (nor ``STOKER_URL``): the embedded engine on the local store;
  ``--os-cloud`` is then the cloud OpenStack resources are made in.
* ``--url URL``: the server at URL (``http://HOST:PORT``, or with the project:
  ``http://HOST:PORT/v1/PROJECT``). How the command authenticates:

  - ``--os-token``/``STOKER_TOKEN``: that token as ``X-Auth-Token`` (a static token of
    ``--auth-mode token``, or a Keystone token); the project is the URL's, else
    ``OS_PROJECT_ID``, else ``default``;
  - else ``--os-cloud NAME`` (clouds.yaml), or the ``OS_*`` variables (``OS_CLOUD``,
    ``OS_AUTH_URL``, ...): Keystone, through openstacksdk's config and a keystoneauth1
    session; the project is the token's;
  - else nothing (``--auth-mode none``); the project is the URL's, else ``default``.

* ``--url catalog``: as above with Keystone, the server being the ``orchestration``
  endpoint of the cloud's catalog.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from stoker.sdk.exceptions import StokerError

CATALOG = "catalog"
DEFAULT_PROJECT = "default"
_WITH_PROJECT = re.compile(r"^(?P<base>.*?)/v1/(?P<project>[^/]+)/?$")


def split_url(url: str) -> tuple[str, str | None]:
    """(the server's root, the project the URL names, if it does)."""
    url = url.rstrip("/")
    found = _WITH_PROJECT.match(url)
    if found:
        return found.group("base"), found.group("project")
    return url.removesuffix("/v1"), None


def _keystone(os_cloud: str | None) -> tuple[Any, Any]:
    """(keystoneauth1 session, openstacksdk cloud region) for ``os_cloud`` (None: the
    OS_* variables)."""
    try:
        import openstack.config
        from keystoneauth1 import exceptions as keystone_errors
        from openstack import exceptions as sdk_errors
    except ImportError as error:  # pragma: no cover - both are dependencies
        raise StokerError(f"Keystone authentication needs openstacksdk: {error}")
    try:
        region = openstack.config.OpenStackConfig(load_envvars=True).get_one(cloud=os_cloud)
        return region.get_session(), region
    except (sdk_errors.SDKException, keystone_errors.ClientException, KeyError) as error:
        where = f"cloud {os_cloud}" if os_cloud else "the OS_* variables"
        raise StokerError(f"Cannot authenticate with {where}: {error}", hint="see clouds.yaml or the OS_* variables")


def remote_backend(url: str, token: str | None, os_cloud: str | None, environ: Mapping[str, str] = os.environ) -> Any:
    from keystoneauth1 import exceptions as keystone_errors

    from stoker.cli.remote import RemoteBackend
    from stoker.cli.transport import HttpxTransport, KeystoneTransport
    from stoker.settings import Settings

    settings = Settings.from_env()
    from stoker.template import loader

    limits = loader.Limits(max_bytes=settings.max_template_bytes, max_expanded_bytes=settings.max_template_expanded_bytes)
    if url != CATALOG and not re.match(r"https?://[^/\s]+", url):
        raise StokerError(f"--url {url}: not an http:// or https:// URL", hint="e.g. http://127.0.0.1:8004, or 'catalog' for the Keystone catalog's")
    keystone = not token and (os_cloud or environ.get("OS_CLOUD") or environ.get("OS_AUTH_URL"))
    if url == CATALOG and not keystone:
        raise StokerError("--url catalog takes the server from a Keystone catalog", hint="give --os-cloud NAME or the OS_* variables")
    if keystone:
        session, region = _keystone(os_cloud)
        try:
            project = session.get_project_id()
            if url == CATALOG:
                endpoint = session.get_endpoint(service_type="orchestration", interface=region.get_interface() or "public", region_name=region.get_region_name())
                if not endpoint:
                    raise StokerError("The cloud's catalog has no orchestration endpoint", hint="give the server with --url URL")
                root, named = split_url(endpoint)
            else:
                root, named = split_url(url)
        except keystone_errors.ClientException as error:
            raise StokerError(f"Keystone authentication failed: {error}")
        return RemoteBackend(f"{root}/v1/{quote(named or project, safe='')}", KeystoneTransport(session), limits)
    root, named = split_url(url)
    project = named or (environ.get("OS_PROJECT_ID") if token else None) or DEFAULT_PROJECT
    return RemoteBackend(f"{root}/v1/{quote(project, safe='')}", HttpxTransport(token), limits)
