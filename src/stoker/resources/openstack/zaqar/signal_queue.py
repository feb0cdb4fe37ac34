"""Zaqar queues a resource's agent talks through, as Heat has them: ZAQAR_SIGNAL (software
deployments and OS::Heat::WaitConditionHandle: the agent posts its signal to the
resource's queue) and ZAQAR_MESSAGE (a server's metadata posted to the server's queue,
which the agent's ``os-collect-config`` ``zaqar`` collector reads).

Owns: the queue (named by the resource's physical name, as Heat's
``_get_zaqar_signal_queue_id`` and a server's ``metadata_queue_id``; the name is kept in
the resource's data under Heat's keys before the queue is made, so a delete after a crash
finds it), the stack user the agent authenticates as (``keystone.stack_user``), taking
signals off the queue, posting metadata to it, and deleting it.

How signals are drained: as Heat 27's engine does, by polling. Heat pops the queue while
it waits (``SignalResponder._service_zaqar_signal`` for a handle,
``_refresh_zaqar_software_deployment`` when a deployment is shown); stoker pops it at each
check of a waiting deployment or wait condition. The queue lives in the stack user's
project (``stack_user.stack_user_project_id``). Without a stack user domain that is the
stack's own, and the stack's own Zaqar connection makes, reads and deletes it. A user of
the stack user domain has a project of its own there: the queue is then made, read,
posted to and deleted as the stack user (its password, scoped to that project), as Heat
does (``create_for_tenant(stack_user_project_id, user token)``).

Must not: put the stack user's password into a message or an exception.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from stoker.resources.openstack.keystone import stack_user
from stoker.resources.openstack.zaqar.client_plugin import ZaqarClientPlugin
from stoker.sdk.resource import Resource

__all__ = [
    "MAX_TAKEN",
    "METADATA_QUEUE_ID",
    "SIGNAL_QUEUE_ID",
    "credentials",
    "forget",
    "post",
    "queue_id",
    "take_signals",
]

# Keys of the resource's data, Heat's names.
SIGNAL_QUEUE_ID, METADATA_QUEUE_ID = "zaqar_signal_queue_id", "metadata_queue_id"
# Most messages one look takes (Zaqar's largest pop).
MAX_TAKEN = 20


def _plugin(resource: Resource) -> Any:
    """The ``zaqar`` client plugin the resource's queue is reached with: the stack's, or
    for a user of the stack user domain, one acting as that user in its project."""
    plugin = resource.client_plugin("zaqar")
    if not resource.data().get(stack_user.PROJECT_ID):
        return plugin
    return _StackUserZaqar(plugin, _user_connection(resource))


class _StackUserZaqar(ZaqarClientPlugin):
    """The stack's ``zaqar`` plugin, acting through ``connection`` (the stack user's)."""

    def __init__(self, base: Any, connection: Any):
        super().__init__(base.context, name="zaqar", settings=base.settings, environ=base.environ)
        self._connection = connection

    @property
    def connection(self) -> Any:
        return self._connection


# (auth URL, user, project, the password's digest) -> an openstacksdk connection as that
# stack user: one token per user, not one per look at its queue.
_CONNECTIONS: dict[tuple[str, ...], Any] = {}
_CONNECTIONS_KEPT = 64
_CONNECTIONS_LOCK = threading.Lock()


def _user_connection(resource: Resource) -> Any:
    import openstack.connection

    data = resource.data()
    digest = hashlib.sha256(str(data[stack_user.PASSWORD]).encode()).hexdigest()
    key = (stack_user.identity_url(resource), str(data[stack_user.USER_ID]), stack_user.stack_user_project_id(resource), digest)
    with _CONNECTIONS_LOCK:
        found = _CONNECTIONS.get(key)
        if found is None:
            found = openstack.connection.Connection(session=stack_user.user_session(resource), region_name=stack_user.region_name(resource))
            _CONNECTIONS[key] = found
            while len(_CONNECTIONS) > _CONNECTIONS_KEPT:
                _CONNECTIONS.pop(next(iter(_CONNECTIONS)))
        return found


def queue_id(resource: Resource, key: str = SIGNAL_QUEUE_ID) -> str:
    """The resource's queue, made once with the stack user who uses it."""
    found = resource.data().get(key)
    if found:
        return str(found)
    if not resource.data().get(stack_user.USER_ID):
        stack_user.create_stack_user(resource)
    name = resource.physical_resource_name()
    # Recorded first: Zaqar's PUT is idempotent, and a delete finds a queue made by a
    # create cut short.
    resource.data_set(key, name)
    _plugin(resource).create_queue(name)
    return name


def credentials(resource: Resource) -> dict[str, Any]:
    """What the agent authenticates to Zaqar with (os-collect-config's ``zaqar`` keys,
    Heat's ``_get_heat_signal_credentials``)."""
    return {
        **stack_user.stack_user_credentials(resource),
        "region_name": stack_user.region_name(resource),
    }


def take_signals(resource: Resource, count: int = 1) -> list[Any]:
    """The bodies of up to ``count`` signals posted to the resource's queue since the last
    look, oldest first, taken off the queue (none before the queue is made)."""
    name = resource.data().get(SIGNAL_QUEUE_ID)
    if not name:
        return []
    plugin = _plugin(resource)
    try:
        messages = plugin.pop_messages(str(name), count)
    except Exception as error:  # noqa: BLE001 - a queue deleted behind the stack's back
        plugin.ignore_not_found(error)
        return []
    return [message.get("body") for message in messages]


def post(resource: Resource, body: Any, key: str = METADATA_QUEUE_ID) -> None:
    """Post ``body`` to the resource's queue, with Heat's TTL."""
    plugin = _plugin(resource)
    plugin.post_messages(queue_id(resource, key), [{"body": body, "ttl": plugin.DEFAULT_TTL}])


def forget(resource: Resource, key: str = SIGNAL_QUEUE_ID) -> None:
    """Delete the resource's queue (tolerating one already gone) and forget it; the stack
    user is deleted by its owner."""
    name = resource.data().get(key)
    if name:
        _plugin(resource).delete_queue(str(name))
        resource.data_delete(key)
