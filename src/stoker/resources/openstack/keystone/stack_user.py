"""Stack users: Keystone users a stack makes for the agents of its servers, wait
conditions and IAM users (Heat's ``StackUser`` mixin and ``heat_keystoneclient``'s
stack users), so that software on a server can read its metadata and signal back with
credentials of its own, which grant nothing but what Heat's policy gives the
``heat_stack_user`` role (read this stack's resource metadata, signal its resources).

Where the user lives, as in Heat (``create_stack_domain_user``):

- With a stack user domain (the operator's ``stack_user_domain``, ``stack_domain_admin``
  and its password: ``stack_domain.py``), in that domain, made by its admin: the first
  stack user of a stack tree makes the tree's project there, named
  ``<stack project id>-<root stack id>`` (Heat's ``create_stack_domain_project``; found by
  that name again after a crash, never made twice), recorded on the stack (Heat's
  ``stack_user_project_id``) before any user is made; every user of the tree is made in
  the domain with that project as its default and gets the stack user role on it. Its
  EC2 keypairs are made by the domain admin (``create_stack_domain_user_keypair``); a
  user or keypair is deleted only once the domain admin has checked the user is the
  domain's and the project's (``_check_stack_domain_user``; a user that is not, made
  before the domain was set up, is deleted the legacy way, as Heat does). The root
  stack's delete deletes the project (``engine/delete.py``). The stack's own
  credentials are not used, so a plain member's stack (in keystone mode, the member's
  trust) gets its users.
- Without one, Heat's legacy placement: the stack's own project (the cloud connection of
  the stack makes the user there and grants it the stack user role). Making users takes
  Keystone's admin in the default policy, so the stack's credentials must be an admin's.
  A server's EC2 keypair (POLL_SERVER_CFN, ``create_own_keypair``) is then made by the
  stack user itself: stoker authenticates as the user (its password, scoped to its
  project) and creates the user's own EC2 credential, which Keystone's default policy
  lets any user do. The stack's own token could not: in keystone mode it is
  trust-scoped, and Keystone refuses credentials to a delegated token ("Delegated tokens
  cannot access credentials directly").

The role is ``STOKER_HEAT_STACK_USER_ROLE`` (Heat's ``heat_stack_user_role``, default
``heat_stack_user``), created when Keystone lacks it.

What is kept, in the resource's data: ``user_id`` and ``stack_user_project_id`` (plain:
shown nowhere, but no secret), the password and the EC2 keypair (redacted: sealed at
rest, never in events, logs or responses). The user is named by the resource's physical
name, which only this resource uses: a create interrupted after Keystone made the user
and before its id was written finds it by that name (and sets a new password), and a
delete without an id deletes the user that name finds, so a SIGKILL never orphans one. A
legacy delete whose lookup Keystone refuses (403: the stack's owner may not list users)
deletes nothing: Keystone's default policy lets list users whoever it lets make them, so
these credentials made none (their create was refused too), and the stack still
deletes, as Heat's does. An EC2 keypair's access key is written before it is sent:
Keystone names an EC2 credential by the SHA-256 of its access key, so a keypair sent
again is found, not made twice.

Must not: put a password or secret key into a message or an exception.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from stoker.identifiers import new_secret
from stoker.resources.openstack.client_plugin import http_status
from stoker.resources.openstack.keystone.stack_domain import StackDomainUserError
from stoker.sdk.exceptions import ClientPluginError
from stoker.sdk.resource import Resource

__all__ = [
    "ACCESS_KEY",
    "PASSWORD",
    "SECRET_KEY",
    "USER_ID",
    "create_keypair",
    "create_own_keypair",
    "delete_own_keypair",
    "create_stack_user",
    "delete_keypair",
    "delete_stack_user",
    "find_created_user",
    "get_user",
    "stack_user_project_id",
]

# Keys of the resource's data, Heat's names (and the stack user domain's project the user
# was made in, which Heat reads from its stack).
USER_ID, PASSWORD, ACCESS_KEY, SECRET_KEY, CREDENTIAL_ID, PROJECT_ID = (
    "user_id",
    "password",
    "access_key",
    "secret_key",
    "credential_id",
    "stack_user_project_id",
)
DEFAULT_STACK_USER_ROLE = "heat_stack_user"


def _plugin(resource: Resource) -> Any:
    return resource.client_plugin("keystone")


def stack_user_role(resource: Resource) -> str:
    """The role stack users get (Heat's ``heat_stack_user_role``)."""
    plugin = _plugin(resource)
    return str(
        plugin.settings.get("heat_stack_user_role")
        or plugin.environ.get("STOKER_HEAT_STACK_USER_ROLE")
        or DEFAULT_STACK_USER_ROLE
    )


def _domain(resource: Resource) -> Any:
    """The stack user domain (``stack_domain.StackDomain``), None without one."""
    stack_domain = getattr(_plugin(resource), "stack_domain", None)
    return stack_domain() if stack_domain is not None else None


def _domain_set(resource: Resource) -> bool:
    """Whether the operator set a stack user domain (the settings alone: no request)."""
    from stoker.resources.openstack.keystone.stack_domain import DOMAIN

    return bool(getattr(_plugin(resource), "settings", {}).get(DOMAIN))


def _recorded_project(resource: Resource) -> str | None:
    """The stack user domain's project: the one this resource's user was made in, else
    the one its stack tree recorded (None: none yet)."""
    recorded = resource.data().get(PROJECT_ID) or getattr(resource.stack, "stack_user_project_id", None)
    return None if recorded is None else str(recorded)


def stack_user_project_id(resource: Resource) -> str:
    """The project the stack's users live in (Heat's ``stack_user_project_id``): with a
    stack user domain, the stack's project there; else the stack's own."""
    if _domain_set(resource):
        recorded = _recorded_project(resource)
        if recorded is not None:
            return recorded
    return str(_plugin(resource).connection.current_project_id)


def _ensure_project(resource: Resource, domain: Any) -> str:
    """The stack tree's project in the stack user domain, made on its first user (Heat's
    ``create_stack_user_project_id``) and recorded on the stack before a user is made."""
    stack = resource.stack
    project_id = getattr(stack, "stack_user_project_id", None)
    if project_id is None:
        name = getattr(stack, "stack_user_project_name", None) or (
            f"{_plugin(resource).connection.current_project_id}-{stack.id}"[:64]
        )
        project_id = domain.create_project(name)
    record = getattr(stack, "set_stack_user_project_id", None)
    if record is not None:
        record(str(project_id))
    return str(project_id)


def identity_url(resource: Resource) -> str:
    """Keystone's v3 public URL, where an agent authenticates as the stack user (Heat's
    ``server_keystone_endpoint_url``)."""
    return str(_plugin(resource).identity_url())


def _password() -> str:
    # Heat's generate_openstack_password: 32 characters, letters and digits.
    return new_secret(32)


def _role_id(resource: Resource, identity: Any) -> str:
    name = stack_user_role(resource)
    role = identity.find_role(name, ignore_missing=True)
    if role is None:
        try:
            role = identity.create_role(name=name)
        except Exception as error:  # noqa: BLE001 - made at the same time by another stack
            if not _plugin(resource).is_conflict(error):
                raise
            role = identity.find_role(name, ignore_missing=False)
    return str(role.id)


def find_user(resource: Resource, identity: Any, project_id: str) -> Any:
    for user in _plugin(resource).read(
        lambda: list(identity.users(name=resource.physical_resource_name()))
    ):
        if getattr(user, "default_project_id", None) == project_id:
            return user
    return None


def create_stack_user(resource: Resource, password: str | None = None) -> str:
    """The resource's stack user's id, made (or found: an earlier, interrupted create)
    with ``password`` (a new random one if None), both kept in the resource's data; in
    the stack user domain when there is one."""
    domain = _domain(resource)
    if domain is not None:
        return _create_domain_user(resource, domain, password)
    plugin = _plugin(resource)
    identity = plugin.client()
    project_id = stack_user_project_id(resource)
    password = password or resource.data().get(PASSWORD) or _password()
    resource.data_set(PASSWORD, password, redact=True)
    user_id = resource.data().get(USER_ID)
    user = None
    if user_id is None:
        user = find_user(resource, identity, project_id)
    if user is None and user_id is None:
        user = identity.create_user(
            name=resource.physical_resource_name(),
            password=password,
            default_project_id=project_id,
            domain_id=identity.get_project(project_id).domain_id,
            description=f"stack user of {resource.stack.name}'s {resource.name}",
        )
        resource.data_set(USER_ID, str(user.id))
    else:
        user_id = str(user_id if user_id is not None else getattr(user, "id", None))
        resource.data_set(USER_ID, user_id)
        # An earlier create may have died before its password was written: set ours.
        identity.update_user(user_id, password=password)
    user_id = str(resource.data()[USER_ID])
    identity.assign_project_role_to_user(project_id, user_id, _role_id(resource, identity))
    return user_id


def _create_domain_user(resource: Resource, domain: Any, password: str | None) -> str:
    """``create_stack_user`` in the stack user domain, as its admin (Heat's
    ``create_stack_domain_user``)."""
    project_id = _ensure_project(resource, domain)
    resource.data_set(PROJECT_ID, project_id)
    password = password or resource.data().get(PASSWORD) or _password()
    resource.data_set(PASSWORD, password, redact=True)
    name = resource.physical_resource_name()
    user_id = resource.data().get(USER_ID) or domain.find_user(name, project_id)
    if user_id is None:
        user_id = domain.create_user(name, password, project_id, f"stack user of {resource.stack.name}'s {resource.name}")
    else:
        # An earlier create may have died before its password was written: set ours.
        domain.set_password(str(user_id), password)
    resource.data_set(USER_ID, str(user_id))
    domain.grant(domain.role_id(stack_user_role(resource)), str(user_id), project_id)
    return str(user_id)


def find_created_user(resource: Resource) -> str | None:
    """The id of the user an interrupted create of the resource made, found by its name
    in the stack users' project (the stack user domain's, when there is one)."""
    domain = _domain(resource)
    if domain is not None:
        project_id = _recorded_project(resource)
        return None if project_id is None else domain.find_user(resource.physical_resource_name(), project_id)
    found = find_user(resource, _plugin(resource).client(), stack_user_project_id(resource))
    return None if found is None else str(found.id)


def get_user(resource: Resource, user_id: str) -> dict[str, Any]:
    """The user as Keystone shows it (as the stack domain admin for a user of the
    domain); not found raises the cloud's error."""
    domain = _domain(resource)
    if domain is not None and resource.data().get(PROJECT_ID):
        return domain.get_user(user_id)
    return dict(_plugin(resource).client().get_user(user_id).to_dict())


def stack_user_credentials(resource: Resource) -> dict[str, str]:
    """What an agent authenticates with: the user's id and password, its project and
    Keystone's URL (the keys os-collect-config's heat and zaqar collectors take)."""
    data = resource.data()
    return {
        "user_id": str(data[USER_ID]),
        "password": str(data[PASSWORD]),
        "project_id": stack_user_project_id(resource),
        "auth_url": identity_url(resource),
    }


def create_keypair(resource: Resource) -> tuple[str, str]:
    """An EC2 keypair of the stack user (made first if needed), kept in the data:
    (access key, secret key). Sent again after a crash, it is found, not made twice."""
    user_id = resource.data().get(USER_ID) or create_stack_user(resource)
    data = resource.data()
    access, secret = data.get(ACCESS_KEY), data.get(SECRET_KEY)
    if not access or not secret:
        access, secret = secrets.token_hex(16), secrets.token_hex(16)
        resource.data_set(ACCESS_KEY, access, redact=True)
        resource.data_set(SECRET_KEY, secret, redact=True)
    plugin = _plugin(resource)
    identity = plugin.client()
    credential_id = hashlib.sha256(access.encode()).hexdigest()
    if _exists(plugin, identity, credential_id):
        resource.data_set(CREDENTIAL_ID, credential_id)
        return access, secret
    made = identity.create_credential(
        type="ec2",
        user_id=user_id,
        project_id=stack_user_project_id(resource),
        blob=json.dumps({"access": access, "secret": secret}),
    )
    resource.data_set(CREDENTIAL_ID, str(made.id))
    return access, secret


def user_session(resource: Resource, password: str | None = None) -> Any:
    """A keystoneauth session authenticated as the resource's stack user (its password,
    or ``password``: a user another resource made and holds the password of; scoped to the
    stack users' project), with the stack's cloud's TLS settings."""
    from keystoneauth1.identity import v3

    from stoker.clouds.source import keystone_session

    data = resource.data()
    auth = v3.Password(
        auth_url=identity_url(resource),
        user_id=str(data[USER_ID]),
        password=str(password if password is not None else data[PASSWORD]),
        project_id=stack_user_project_id(resource),
    )
    cloud_session = _plugin(resource).connection.session
    return keystone_session(auth=auth, verify=cloud_session.verify, cert=cloud_session.cert)


def create_own_keypair(
    resource: Resource, access: str, secret: str, password: str | None = None
) -> str:
    """Make (access, secret) an EC2 keypair of the resource's stack user (made first if
    needed), as the user itself (with ``password`` if the user is another resource's);
    answers the credential's id. Sent again after a crash, it is found (Keystone names
    an EC2 credential by the SHA-256 of its access key)."""
    if not resource.data().get(USER_ID):
        create_stack_user(resource)
    user_id = str(resource.data()[USER_ID])
    domain = _domain(resource)
    if domain is not None and _recorded_project(resource) is not None:
        return _create_domain_keypair(resource, domain, user_id, access, secret)
    session = user_session(resource, password)
    url = f"{identity_url(resource)}/credentials"
    credential_id = hashlib.sha256(access.encode()).hexdigest()
    if session.get(f"{url}/{credential_id}", raise_exc=False).status_code != 200:
        blob = json.dumps({"access": access, "secret": secret})
        body = {"type": "ec2", "user_id": user_id, "project_id": stack_user_project_id(resource), "blob": blob}
        answer = session.post(url, json={"credential": body}, raise_exc=False)
        if answer.status_code not in (201, 409):  # 409: made meanwhile by a repeat
            raise ClientPluginError(
                f"Keystone refused to make the stack user's EC2 keypair (HTTP {answer.status_code})",
                hint="the stack user must be allowed to create its own credentials (Keystone's identity:create_credential)",
            )
    resource.data_set(CREDENTIAL_ID, credential_id)
    return credential_id


def _create_domain_keypair(resource: Resource, domain: Any, user_id: str, access: str, secret: str) -> str:
    """``create_own_keypair`` made by the stack domain admin (Heat's
    ``create_stack_domain_user_keypair``), on the user's project in the domain."""
    credential_id = hashlib.sha256(access.encode()).hexdigest()
    if not domain.credential_exists(credential_id):
        blob = json.dumps({"access": access, "secret": secret})
        domain.create_ec2_credential(user_id, stack_user_project_id(resource), blob)
    resource.data_set(CREDENTIAL_ID, credential_id)
    return credential_id


def _delete_domain_keypair(resource: Resource, domain: Any) -> bool:
    """Delete the user's EC2 keypair as the stack domain admin, once the user is checked
    to be the domain's and the project's (Heat's ``delete_stack_domain_user_keypair``);
    False (nothing done) for a user that is not: the caller's legacy path deletes it."""
    data = resource.data()
    credential_id, user_id, project_id = data.get(CREDENTIAL_ID), data.get(USER_ID), _recorded_project(resource)
    if credential_id and user_id:
        if project_id is None:
            return False  # a user of a stack without a project in the domain
        try:
            if domain.check_user(str(user_id), project_id, "delete_keypair"):
                domain.delete_credential(str(credential_id))
        except StackDomainUserError:
            return False
    resource.data_delete(CREDENTIAL_ID)
    return True


def delete_own_keypair(resource: Resource, password: str | None = None) -> None:
    """Delete the stack user's EC2 keypair as the user (with ``password`` if the user is
    another resource's), or as the stack domain admin for a user of the domain,
    tolerating a user or keypair already gone (deleting the user deletes its credentials
    too)."""
    domain = _domain(resource)
    if domain is not None and _delete_domain_keypair(resource, domain):
        return
    data = resource.data()
    credential_id = data.get(CREDENTIAL_ID)
    password = password if password is not None else data.get(PASSWORD)
    if credential_id and data.get(USER_ID) and password:
        from keystoneauth1 import exceptions as keystone_exceptions

        try:
            user_session(resource, password).delete(f"{identity_url(resource)}/credentials/{credential_id}", raise_exc=False)
        except keystone_exceptions.ClientException:
            pass  # the user is gone (it cannot authenticate): so is its keypair
    resource.data_delete(CREDENTIAL_ID)


def _exists(plugin: Any, identity: Any, credential_id: str) -> bool:
    try:
        identity.get_credential(credential_id)
    except Exception as error:  # noqa: BLE001 - openstacksdk's errors
        plugin.ignore_not_found(error)
        return False
    return True


def delete_keypair(resource: Resource) -> None:
    """Delete the stack user's EC2 keypair, tolerating "already gone"."""
    data = resource.data()
    access = data.get(ACCESS_KEY)
    credential_id = data.get(CREDENTIAL_ID) or (
        hashlib.sha256(access.encode()).hexdigest() if access else None
    )
    if credential_id:
        plugin = _plugin(resource)
        try:
            # Sent again on a lost answer (a delete of what is gone is no error).
            plugin.read(
                lambda: plugin.client().delete_credential(credential_id, ignore_missing=True)
            )
        except Exception as error:  # noqa: BLE001 - openstacksdk's errors
            plugin.ignore_not_found(error)
    for key in (CREDENTIAL_ID, ACCESS_KEY, SECRET_KEY):
        resource.data_delete(key)


def delete_stack_user(resource: Resource) -> None:
    """Delete the stack user (and its keypair), tolerating "already gone"; without a
    recorded id, the user the physical name finds (a create cut short), or none if the
    stack's credentials may not look (they could not have made one). A user of the stack
    user domain is deleted by its admin, once checked to be the domain's and project's."""
    domain = _domain(resource)
    project_id = _recorded_project(resource) if domain is not None else None
    if domain is not None and project_id is not None and _delete_domain_user(resource, domain, project_id):
        return
    delete_keypair(resource)
    plugin = _plugin(resource)
    identity = plugin.client()
    user_id = resource.data().get(USER_ID)
    if user_id is None:
        try:
            found = find_user(resource, identity, stack_user_project_id(resource))
        except Exception as error:  # noqa: BLE001 - openstacksdk's errors
            # Refused (identity:list_users, e.g. a member's trust): Keystone's default
            # policy lets list users whoever it lets make them, so nothing was made to
            # delete. Without this, a stack whose user was refused could never be deleted.
            if http_status(error) != 403:
                raise
            found = None
        user_id = None if found is None else found.id
    if user_id is not None:
        try:
            plugin.read(lambda: identity.delete_user(user_id, ignore_missing=True))
        except Exception as error:  # noqa: BLE001 - openstacksdk's errors
            plugin.ignore_not_found(error)
    resource.data_delete(USER_ID)
    resource.data_delete(PASSWORD)


def _delete_domain_user(resource: Resource, domain: Any, project_id: str) -> bool:
    """``delete_stack_user`` by the stack domain admin (Heat's
    ``delete_stack_domain_user``); False, with nothing deleted, for a user that is not
    the domain's and project's (made before the domain was set up, or imported): the
    legacy path deletes that one, as Heat falls back to it."""
    if not _delete_domain_keypair(resource, domain):
        return False
    user_id = resource.data().get(USER_ID) or domain.find_user(resource.physical_resource_name(), project_id)
    if user_id is not None:
        try:
            domain.delete_user(str(user_id), project_id)
        except StackDomainUserError:
            return False
    for key in (ACCESS_KEY, SECRET_KEY, USER_ID, PASSWORD, PROJECT_ID):
        resource.data_delete(key)
    return True


def region_name(resource: Resource) -> str | None:
    """The region whose catalog entries the agent uses (the stack's cloud's)."""
    return _plugin(resource).connection.config.get_region_name() or None
