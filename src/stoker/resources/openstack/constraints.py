"""Custom constraints that look a value up in the cloud (``neutron.network``,
``nova.flavor``...), answered once per context and value.

Owns: ``LookupConstraint`` (the base a service's constraints extend) and ``CACHE``, which
the client plugins' finders share. A context is one validation or one stack action, so a
template with 500 servers naming one flavor asks the cloud once, for the constraint and the
name-to-id translation together; the cache goes with the context (weakly held), so a later
validation sees the cloud as it is then.

A create or update validates, then its action runs: the validation's answers are handed
to that stack's action in this process (``validates_stack`` of the validation context,
``id`` of the action's), for a minute (Heat's constraint validation cache keeps answers
for 60 s too), so the action asks nothing the validation asked. Only validations hand
answers over; an action never hands its answers to a later one.

Must not: hold a client itself (the client plugin of the context does), or swallow a
lookup failure that is not the user's (a cloud that cannot be reached is reported as such).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

from stoker.sdk.exceptions import StokerError

__all__ = ["LookupCache", "LookupConstraint"]


# Seconds a validation's answers wait for its stack's action.
HAND_OVER_S = 60.0
# At most this many values a constraint lists (a form's list; a cloud may hold thousands).
VALUES_LIMIT = 500


class LookupCache:
    """Results of lookups per context: a key (what was asked, and the value) -> the answer.
    An ``ask`` that raises is not remembered: a finder's failure is asked again."""

    def __init__(self) -> None:
        # stack id -> (when they expire, answers) a validation of that stack found
        self._handed: dict[str, tuple[float, dict[tuple[str, ...], Any]]] = {}
        # Properties of several resources are validated from several handler threads.
        self._lock = threading.Lock()
        self._by_context: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], Any]] = (
            weakref.WeakKeyDictionary()
        )
        # (context, key) -> a lock its first asker holds while it asks.
        self._pending: dict[tuple[int, tuple[str, ...]], threading.Lock] = {}

    def answer(self, context: Any, key: tuple[str, ...], ask: Callable[[], Any]) -> Any:
        """The cached answer for ``key`` in ``context``, asking once when there is none:
        threads wanting the same new value at once wait for the first one's answer (20
        servers naming one image ask Glance once, not once per thread). A context that
        cannot be weakly referenced is not cached."""
        with self._lock:
            try:
                answers = self._by_context.setdefault(context, {})
            except TypeError:
                answers = None
            if answers is None:
                pending = None
            elif key in answers or self._handed_answer(context, key, answers):
                return answers[key]
            else:
                pending = self._pending.get((id(context), key))
                if pending is None:
                    pending = self._pending[(id(context), key)] = threading.Lock()
                    pending.acquire()
                    owner = True
                else:
                    owner = False
        if answers is None or pending is None:  # a context not cached (both are None then)
            return ask()
        if not owner:
            # Another thread asks; its answer (or failure) decides. Asked outside the
            # cache's lock: a slow cloud must not hold up other contexts.
            with pending:
                pass
            with self._lock:
                if key in answers:
                    return answers[key]
            return self.answer(context, key, ask)  # it failed: ask again (not cached)
        try:
            found = ask()
            with self._lock:
                answers[key] = found
                self._hand_over(context, key, found)
            return found
        finally:
            with self._lock:
                self._pending.pop((id(context), key), None)
            pending.release()


    def _handed_answer(self, context: Any, key: tuple[str, ...], answers: dict[tuple[str, ...], Any]) -> bool:
        """Take the answer a validation of this action's stack found (under the lock)."""
        stack_id = getattr(context, "id", None)
        if not isinstance(stack_id, str):
            return False
        handed = self._handed.get(stack_id)
        if handed is None or key not in handed[1]:
            return False
        if handed[0] < time.monotonic():
            del self._handed[stack_id]
            return False
        answers[key] = handed[1][key]
        return True

    def _hand_over(self, context: Any, key: tuple[str, ...], found: Any) -> None:
        """Keep a validation's answer for its stack's action (under the lock)."""
        stack_id = getattr(context, "validates_stack", None)
        if not isinstance(stack_id, str):
            return
        now = time.monotonic()
        for expired in [sid for sid, (until, _) in self._handed.items() if until < now]:
            del self._handed[expired]
        until, answers = self._handed.setdefault(stack_id, (now + HAND_OVER_S, {}))
        answers[key] = found

    def remember(self, context: Any, key: tuple[str, ...], value: Any) -> None:
        """Take ``value`` as the answer for ``key`` (an object this context just made:
        a port a server then names is not looked up again)."""
        with self._lock:
            try:
                self._by_context.setdefault(context, {})[key] = value
            except TypeError:
                pass


CACHE = LookupCache()


class LookupConstraint:
    """A value must name one existing object: ``finder`` of the client plugin
    ``client_plugin_name`` finds it by name or id. Subclasses set the three names."""

    name: ClassVar[str] = ""
    client_plugin_name: ClassVar[str] = ""
    # The plugin's finder method, called as finder(entity, value) or finder(value).
    finder: ClassVar[str] = "find"
    entity: ClassVar[str | None] = None
    # openstacksdk's listing of the objects on the plugin's client (``flavors``): a
    # constraint with one lists the values it accepts (``values``); None: it does not.
    listing: ClassVar[str | None] = None

    def values(self, context: Any, limit: int = VALUES_LIMIT) -> tuple[list[dict[str, str]], bool]:
        """The values this constraint accepts in the cloud, as many as ``limit``: each
        ``value`` (the object's name, or its id where the name is not unique), ``id``
        and ``label``; and whether there were more. Sorted by label."""
        from stoker.resources.openstack import client_plugin_class

        if self.listing is None:
            raise StokerError(f"The custom constraint {self.name} does not list its values", hint="type the value")
        plugin = client_plugin_class(self.client_plugin_name)(context, name=self.client_plugin_name)
        found = []
        for item in getattr(plugin.client(), self.listing)():
            found.append(item)
            if len(found) > limit:
                break
        truncated = len(found) > limit
        found = found[:limit]
        names = Counter(getattr(item, "name", None) for item in found)
        listed = []
        for item in found:
            identifier, name = str(item.id), getattr(item, "name", None) or ""
            listed.append(
                {
                    "value": name if name and names[name] == 1 else identifier,
                    "id": identifier,
                    "label": self.describe(item),
                }
            )
        return sorted(listed, key=lambda entry: (entry["label"].lower(), entry["id"])), truncated

    def describe(self, item: Any) -> str:
        """How a listed object is shown: its name (and id when it has none)."""
        return getattr(item, "name", None) or str(item.id)

    def __init__(self) -> None:
        self._error_message: str | None = None

    def error(self, value: Any) -> str:
        return self._error_message or f'"{value}" does not validate {self.name}'

    def validate(self, value: Any, context: Any, template: Any = None) -> bool:
        if not isinstance(value, str) or not value:
            self._error_message = f'"{value}" does not validate {self.name}: a name or id is needed'
            return False
        key = (self.name, value)
        try:
            self._error_message = CACHE.answer(context, key, lambda: self._ask(value, context))
        except Exception as error:  # noqa: BLE001 - the cloud's own errors, reported in words
            # Not remembered: a cloud that failed to answer may answer the next ask.
            self._error_message = f"could not look up {value!r} in the cloud to check {self.name}: {error}"
        return self._error_message is None

    def _ask(self, value: str, context: Any) -> str | None:
        from stoker.resources.openstack import client_plugin_class

        plugin = client_plugin_class(self.client_plugin_name)(context, name=self.client_plugin_name)
        method = getattr(plugin, self.finder)
        try:
            if self.entity is not None:
                method(self.entity, value)
            else:
                method(value)
        except StokerError as error:  # an answer (none or several found): remembered
            return error.message if not error.hint else f"{error.message} ({error.hint})"
        return None
