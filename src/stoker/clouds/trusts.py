"""Acting for the user in keystone mode: Keystone trusts, as Heat's
``deferred_auth_method = trusts``.

When a user creates (or adopts) a stack through ``stoker serve --auth-mode keystone``,
the API, holding the user's token, has Keystone create a **trust**: the user (trustor)
delegates their roles in the stack's project to stoker's service user (trustee), with
impersonation, no expiry. Every cloud call of that stack's actions (nested stacks
included) is then made with a trust-scoped token the service user gets from Keystone
with its own password and the trust's id: resources are created *as the user*, and
updates, deletes, scaling signals and actions resumed after a restart keep working
after the user's token has expired.

Why trusts and not application credentials: a trust is useless without the trustee's
own password (a leaked trust id alone grants nothing), it is what Heat does (operators
know it: ``openstack trust list``), and Keystone revokes it by itself when the user
loses a delegated role. An application credential is a bearer secret that anyone who
reads it can use, and creating one from a token needs an unrestricted credential.

What is kept: the trust's id, trustor and project, in ``stack_credentials``, always
sealed (store/sealing.py), never shown by any API. It is deleted with the stack. The
trust itself is deleted in Keystone at the end of the stack's delete with the token of
the user who asked for the delete, while it is valid: Keystone lets only the trustor or
an admin delete a trust, and never with a trust-scoped token. A delete that finishes
without such a token (resumed after a restart) leaves the trust in Keystone and says so
in the log, with its id, for an operator (``openstack trust delete``); stoker forgets
it either way.

Validation and preview, which run before any trust exists, act with the request's own
token (``acting_user``).

Who uses it: the API server (api/app.py) and ``stoker worker`` (cli/worker.py) make the
``Trusts``; ``serving.Serving.act_for_users`` installs its ``TrustCloudSource`` as the
process's cloud source (clouds/source.py), from which the OpenStack plugins' connections
are made. Must not: put a trust's id anywhere but the sealed stack credential and, when
a trust is left in Keystone, the log line that tells an operator to delete it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stoker.clouds.source import (
    DEFAULT_API_TIMEOUT_S,
    CloudConfigurationError,
    keystone_session,
)
from stoker.sdk.exceptions import StokerError

LOG = logging.getLogger(__name__)

KIND = "trust"
# The auth options that scope a token to something; a trust-scoped token has none.
SCOPE_OPTIONS = frozenset({"system_scope", "domain_id", "domain_name", "project_id", "project_name", "project_domain_id", "project_domain_name"})


@dataclass(frozen=True)
class User:
    """Who a request acts for: a validated Keystone token and what it says."""

    token: str
    project_id: str
    user_id: str
    roles: tuple[str, ...]


# The user of the request being served (set by the API in keystone mode; copied into the
# worker thread that serves it).
acting_user: contextvars.ContextVar[User | None] = contextvars.ContextVar("stoker_acting_user", default=None)


class DelegationError(StokerError):
    """Keystone refused to create the trust a stack needs: the stack is not created."""


class Trustee:
    """stoker's service user, the trustee of the users' trusts. Its credentials are the
    ``[keystone_authtoken]`` ones it validates tokens with (api/auth.py)."""

    def __init__(self, conf: Any, group: str, region_name: str, allow_redelegation: bool = False):
        from keystoneauth1 import loading

        # Heat's allow_trusts_redelegation: the trusts made may be delegated on (Keystone
        # lets a trust-scoped token create a trust only from such a trust), as Aodh does
        # for a trust+ alarm action when stoker creates the alarm through the trust.
        self.allow_redelegation = allow_redelegation
        options = conf[group]
        self.auth_type = options.auth_type
        names = [option.dest for option in loading.get_auth_plugin_conf_options(self.auth_type)]
        self._options = {name: options[name] for name in names if name in options and options[name] not in (None, "")}
        self.auth_url = self._options.get("auth_url")
        self.region_name = (options.region_name if "region_name" in options else None) or region_name
        self._session = keystone_session(auth=loading.load_auth_from_conf_options(conf, group), timeout=DEFAULT_API_TIMEOUT_S)
        self._user_id: str | None = None

    @property
    def user_id(self) -> str:
        if self._user_id is None:
            self._user_id = self._session.get_user_id()
        return self._user_id

    def service_session(self) -> Any:
        """A keystoneauth session authenticated as the service user itself (for the
        calls Keystone lets only services make: ``ec2tokens``, api/cfn.py)."""
        return self._session

    def trust_auth(self, trust_id: str) -> dict[str, Any]:
        """The service user's auth options, scoped to the trust instead of its project."""
        auth = {name: value for name, value in self._options.items() if name not in SCOPE_OPTIONS}
        auth["trust_id"] = trust_id
        return auth

    def _user_session(self, user: User) -> Any:
        from keystoneauth1.identity import v3

        return keystone_session(auth=v3.Token(auth_url=str(self.auth_url), token=user.token, project_id=user.project_id), timeout=DEFAULT_API_TIMEOUT_S)

    def create_trust(self, user: User) -> dict[str, str]:
        from keystoneauth1 import exceptions as ksa_exceptions
        from keystoneclient.v3 import client

        keystone = client.Client(session=self._user_session(user))
        try:
            trust = keystone.trusts.create(
                trustor_user=user.user_id,
                trustee_user=self.user_id,
                project=user.project_id,
                role_names=list(user.roles),
                impersonation=True,
                allow_redelegation=self.allow_redelegation,
            )
        except ksa_exceptions.ClientException as error:
            raise DelegationError(
                f"Keystone did not let stoker act for user {user.user_id} in project {user.project_id}: {error}",
                hint="the user needs a role in the project, and stoker's service user must exist in Keystone",
            )
        return {"trust_id": trust.id, "trustor_user_id": user.user_id, "project_id": user.project_id}

    def delete_trust(self, trust_id: str, user: User) -> None:
        from keystoneauth1 import exceptions as ksa_exceptions
        from keystoneclient.v3 import client

        try:
            client.Client(session=self._user_session(user)).trusts.delete(trust_id)
        except ksa_exceptions.NotFound:
            pass


class Trusts:
    """The delegation of keystone mode: makes a stack's trust, gives its actions a cloud
    acting for the user, and deletes the trust with the stack."""

    # How often, and how long, the API server that took a delete looks for its end when
    # workers run it (seconds): the user's token is in this process only.
    WATCH_INTERVAL_S = 2.0
    WATCH_LIMIT_S = 3600.0

    def __init__(self, trustee: Trustee, store: Any, remote_jobs: bool = False):
        self.trustee = trustee
        self.store = store
        # Stack actions run on workers (workers.py): the API server that took a delete
        # deletes the trust when the workers have deleted the stack, and a worker leaves
        # the stored credential to it.
        self.remote_jobs = remote_jobs
        # stack id -> who asked for its delete, while the delete runs (memory only).
        self._deleters: dict[str, User] = {}

    def delegate(self, user: User) -> tuple[str, dict[str, str]]:
        return KIND, self.trustee.create_trust(user)

    def discard(self, credential: tuple[str, Mapping[str, str]], user: User) -> None:
        """A trust made for a stack that was then not created."""
        self._delete_trust(credential[1], user, "the stack was not created")

    def deleting(self, stack_id: str, user: User | None) -> None:
        if user is None:
            return
        self._deleters[stack_id] = user
        if self.remote_jobs:
            threading.Thread(target=self._watch_delete, args=(stack_id, user), name=f"trust-{stack_id}", daemon=True).start()

    async def stack_deleted(self, stack: Any) -> None:
        credential = self.store.serving.stack_credential(stack.id)
        user = self._deleters.pop(stack.id, None)
        if credential is None:
            return
        if user is None and self.remote_jobs:
            return  # the API server that took the delete holds the user's token
        await asyncio.to_thread(self._delete_trust, credential[1], user, f"stack {stack.name} ({stack.id}) was deleted")
        self.store.serving.delete_stack_credential(stack.id)

    def _watch_delete(self, stack_id: str, user: User) -> None:
        """Workers run the delete: wait here for its end, then delete the trust with the
        token of the user who asked (a failed delete keeps it for the next try)."""
        deadline = time.monotonic() + self.WATCH_LIMIT_S
        while time.monotonic() < deadline:
            time.sleep(self.WATCH_INTERVAL_S)
            try:
                stack = self.store.get_stack(stack_id)
                if stack is None or stack.deleted_at is not None:
                    credential = self.store.serving.stack_credential(stack_id)
                    if credential is not None:
                        self._delete_trust(credential[1], user, f"stack {stack_id} was deleted")
                        self.store.serving.delete_stack_credential(stack_id)
                    break
                if stack.action == "DELETE" and stack.status == "FAILED":
                    break
            except Exception:  # noqa: BLE001 - a store that is closing: stop watching
                LOG.exception("watching the delete of stack %s failed", stack_id)
                break
        self._deleters.pop(stack_id, None)

    def forget(self, stack: Any, user: User | None) -> None:
        """A stack abandoned: its resources stay, stoker no longer acts for it."""
        credential = self.store.serving.stack_credential(stack.id)
        if credential is not None:
            self._delete_trust(credential[1], user, f"stack {stack.name} ({stack.id}) was abandoned")
            self.store.serving.delete_stack_credential(stack.id)

    def _delete_trust(self, credential: Mapping[str, str], user: User | None, why: str) -> None:
        trust_id = credential.get("trust_id")
        if not trust_id:
            return
        if user is None or user.user_id != credential.get("trustor_user_id") and "admin" not in user.roles:
            LOG.warning(
                "%s; its Keystone trust %s was left in place: only its trustor (user %s) or an admin may delete it "
                "(openstack trust delete %s)", why, trust_id, credential.get("trustor_user_id"), trust_id,
            )
            return
        try:
            self.trustee.delete_trust(trust_id, user)
        except Exception as error:  # noqa: BLE001 - the stack is gone either way: say what is left
            LOG.warning("%s; deleting its Keystone trust %s failed (%s: %s): openstack trust delete %s", why, trust_id, type(error).__name__, error, trust_id)

    # -- the cloud of a stack's actions ----------------------------------------------

    def cloud_source(self) -> TrustCloudSource:
        return TrustCloudSource(self)

    def credential_of(self, stack: Any) -> dict[str, str] | None:
        """The credential of ``stack``'s top-level stack (a nested stack acts with it)."""
        for _ in range(64):  # far beyond max_nested_depth: a bound, not a limit
            if stack is None or stack.owner_id is None:
                break
            stack = self.store.get_stack(stack.owner_id)
        if stack is None:
            return None
        found = self.store.serving.stack_credential(stack.id)
        return found[1] if found is not None and found[0] == KIND else None


class TrustCloudSource:
    """Cloud regions for keystone mode: a stack's actions act through its trust; work
    done within a request (validation, preview) acts with the request's token."""

    def __init__(self, trusts: Trusts):
        self.trusts = trusts

    def cloud_region(self, context: Any) -> Any:
        from openstack import config as openstack_config

        trustee = self.trusts.trustee
        stack = getattr(context, "stack", None)
        credential = self.trusts.credential_of(stack) if stack is not None and getattr(stack, "id", None) else None
        if credential is not None:
            auth_type, auth = trustee.auth_type, trustee.trust_auth(credential["trust_id"])
        else:
            user = acting_user.get()
            if user is None:
                raise CloudConfigurationError(
                    "This stack has no credentials to act for its user in the cloud (it was created without Keystone)",
                    hint="create the stack again through stoker serve --auth-mode keystone",
                )
            auth_type, auth = "v3token", {"auth_url": trustee.auth_url, "token": user.token, "project_id": user.project_id}
        loader = openstack_config.OpenStackConfig(load_yaml_config=False, load_envvars=False)
        return loader.get_one(auth_type=auth_type, auth=auth, region_name=trustee.region_name, api_timeout=DEFAULT_API_TIMEOUT_S)
