"""``StackResource``: a resource whose physical resource is a nested stack.

This is Heat's ``StackResource`` contract for plugin authors: a subclass says what the
child stack is (``child_template`` and ``child_params``) and this base creates, updates,
deletes, suspends, resumes and checks that child through the engine, reports the
child's failure as its own, and reads the child's outputs and members. The child is a
stack of its own (listed with ``stoker stack list --nested``), run as its own job, so
it keeps every guarantee a stack has: persisted state, locks, recovery after a crash.

What this module must not do: run the child itself or touch the store. It only talks to
the engine through ``NestedStacks`` (the hooks' ``nested_stacks``), from handler threads.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Protocol

from stoker.sdk.attributes import select_path
from stoker.sdk.exceptions import InvalidTemplateAttribute, ResourceFailure, StokerError
from stoker.sdk.resource import Resource

__all__ = ["NestedStacks", "NestedView", "StackResource"]


class NestedView(Protocol):
    """Read-only access to a finished child stack (outputs, members, their attributes)."""

    def outputs(self) -> dict[str, Any]:
        """Every output's value (None for one that cannot be computed)."""
        ...

    def resource_names(self) -> list[str]: ...

    def definition(self, name: str) -> dict[str, Any] | None:
        """Member ``name`` as the child's current template defines it (template form)."""
        ...

    def reference(self, name: str) -> Any:
        """What ``get_resource`` of member ``name`` gives inside the child."""
        ...

    def resource_state(self, name: str) -> tuple[str, str] | None:
        """Member ``name``'s (action, status), or None before it has a record."""
        ...

    def attribute(self, name: str, attribute: str, path: tuple[Any, ...] = ()) -> Any:
        """What ``get_attr`` of member ``name`` gives inside the child."""
        ...


class NestedStacks(Protocol):
    """What the engine offers a ``StackResource`` (called from handler threads).

    Each action method moves the child stack to ``<ACTION>_IN_PROGRESS`` in the store
    before it returns and queues the child's job; ``state`` then reports the child's
    progress, restarting its job if the engine that ran it is gone.
    """

    def create(
        self,
        resource: Resource,
        template: Mapping[str, Any],
        params: Mapping[str, Any],
        timeout_mins: int | None,
    ) -> str:
        """Validate and create the child stack; returns its id (already the resource's physical id)."""
        ...

    def update(
        self,
        resource: Resource,
        template: Mapping[str, Any],
        params: Mapping[str, Any],
        timeout_mins: int | None,
    ) -> None: ...

    def act(self, resource: Resource, action: str) -> bool:
        """Run DELETE, SUSPEND, RESUME or CHECK on the child; False when there is no child."""
        ...

    def state(self, resource: Resource) -> tuple[str, str, str] | None:
        """The child's (action, status, reason), or None when it does not exist (any more)."""
        ...

    def view(self, resource: Resource) -> NestedView: ...

    def validate(
        self,
        resource: Resource,
        template: Mapping[str, Any],
        params: Mapping[str, Any],
        resource_count: int | None = None,
    ) -> None:
        """Validate a would-be child (raises ValidationError naming every problem),
        and count the stack tree it would join against the resource limit, which holds
        for the whole tree under one root stack. ``resource_count``: how many members
        ``template`` stands for (a group validates one member of many)."""
        ...


class StackResource(Resource):
    """Base of resources made of a nested stack (``OS::Heat::Stack``, template resources,
    ``OS::Heat::ResourceGroup``).

    Subclasses implement ``child_template`` (a HOT template as data) and, if they pass
    parameters, ``child_params``. Every update of the parent reaches the child (as in
    Heat) unless the child's template and parameters are the ones it already has.
    """

    # What the last create or update sent to the child (resource data key).
    DIGEST_KEY = "nested_digest"

    def child_template(self) -> Mapping[str, Any]:
        raise NotImplementedError

    def child_params(self) -> dict[str, Any]:
        return {}

    def child_timeout_mins(self) -> int | None:
        return None

    def member_count_property(self) -> str | None:
        """The property that says how many members the child has (a group's ``count``),
        named when the stack tree would be over the resource limit; None: no such one."""
        return None

    def child_source(self) -> tuple[str, str] | None:
        """The child template's text and a name for it, when it was written as text
        (so errors in it point at its own lines); None for a generated template."""
        return None

    # -- the engine's side ---------------------------------------------------------

    def nested_stacks(self) -> NestedStacks:
        hooks: Any = self._hooks
        nested = getattr(hooks, "nested_stacks", None)
        if nested is None:
            raise StokerError(
                f"{self.type} needs the engine to run a nested stack", path=f"resources.{self.name}"
            )
        return nested(self)

    def nested_view(self) -> NestedView | None:
        """The child stack, once it exists (None before create)."""
        if self.resource_id is None:
            return None
        return self.nested_stacks().view(self)

    def child_digest(self) -> str:
        """A digest of what the child would be given now (template and parameters)."""
        text = json.dumps([self.child_template(), self.child_params()], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def validate_nested(self) -> None:
        self.nested_stacks().validate(self, self.child_template(), self.child_params())

    def needs_replace_failed(self) -> bool:
        """A failed nested stack is updated, not replaced: its own update replaces what
        failed inside it (as in Heat). One never created, or whose child a crash kept
        from being made, is replaced."""
        return self.resource_id is None or self.nested_stacks().state(self) is None

    # -- lifecycle -----------------------------------------------------------------

    # Heat's StackResource names, for plugins written against it.

    def create_with_template(self, child_template: Mapping[str, Any], user_params: Mapping[str, Any] | None = None, timeout_mins: int | None = None) -> str:
        """Create the child stack; returns its id (already this resource's physical id)."""
        return self.nested_stacks().create(self, child_template, dict(user_params or {}), timeout_mins)

    def update_with_template(self, child_template: Mapping[str, Any], user_params: Mapping[str, Any] | None = None, timeout: int | None = None) -> None:
        self.nested_stacks().update(self, child_template, dict(user_params or {}), timeout)

    def delete_nested(self) -> bool:
        """Start deleting the child stack; False when there is none."""
        return self.resource_id is not None and self.nested_stacks().act(self, self.DELETE)

    def get_output(self, op: str) -> Any:
        """The value of one output of the child stack. One the child cannot compute
        raises Heat's ``Error in <resource> output <op>: <the child's output_error>``."""
        view = self.nested_view()
        single = getattr(view, "output", None)
        if single is None:  # a view that offers only every output at once
            outputs = view.outputs() if view is not None else {}
            if op not in outputs:
                raise InvalidTemplateAttribute(self.name, op)
            return outputs[op]
        try:
            value, error = single(op)
        except KeyError:
            raise InvalidTemplateAttribute(self.name, op) from None
        if error is not None:
            raise StokerError(f"Error in {self.name} output {op}: {error}")
        return value

    def handle_create(self) -> Any:
        template, params = self.child_template(), self.child_params()
        self.data_set(self.DIGEST_KEY, self.child_digest())
        self.create_with_template(template, params, self.child_timeout_mins())
        return self.CREATE

    def check_create_complete(self, token: Any) -> bool:
        return self._child_done(self.CREATE)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> Any:
        # The engine has bound the new definition; the new properties decide the child.
        self.properties = json_snippet.properties(
            self.properties_schema, self.context, accept_any=self.accepts_any_property
        )
        template, params = self.child_template(), self.child_params()
        self.data_set(self.DIGEST_KEY, self.child_digest())
        if self.resource_id is None or self.nested_stacks().state(self) is None:
            self.create_with_template(template, params, self.child_timeout_mins())
            return self.CREATE
        self.update_with_template(template, params, self.child_timeout_mins())
        return self.UPDATE

    def check_update_complete(self, token: Any) -> bool:
        return self._child_done(token or self.UPDATE)

    def handle_delete(self) -> Any:
        return self.DELETE if self.delete_nested() else None

    def check_delete_complete(self, token: Any) -> bool:
        if token is None:
            return True
        return self._child_done(self.DELETE, gone_is_done=True)

    def handle_suspend(self) -> Any:
        return self._act(self.SUSPEND)

    def check_suspend_complete(self, token: Any) -> bool:
        return token is None or self._child_done(self.SUSPEND)

    def handle_resume(self) -> Any:
        return self._act(self.RESUME)

    def check_resume_complete(self, token: Any) -> bool:
        return token is None or self._child_done(self.RESUME)

    def handle_check(self) -> Any:
        return self._act(self.CHECK)

    def check_check_complete(self, token: Any) -> bool:
        return token is None or self._child_done(self.CHECK)

    def _act(self, action: str) -> Any:
        if self.resource_id is None:
            return None
        return action if self.nested_stacks().act(self, action) else None

    def _child_done(self, action: str, gone_is_done: bool = False) -> bool:
        state = self.nested_stacks().state(self)
        if state is None:
            if gone_is_done:
                return True
            raise ResourceFailure(
                f"resources.{self.name}: the nested stack {self.resource_id} does not exist"
            )
        child_action, status, reason = state
        if child_action != action or status == self.IN_PROGRESS:
            return False
        if status == self.FAILED:
            raise ResourceFailure(f"resources.{self.name}: nested stack {action} failed: {reason}")
        return True

    # -- attributes ---------------------------------------------------------------------

    # ``resource.<name>`` is a member's reference, ``resource.<name>.<attribute>`` (or
    # ``resource.<name>`` with the attribute as the first path item) a member's attribute.
    MEMBER_PREFIX = "resource."

    def get_attribute(self, key: str) -> Any:
        if key.startswith(self.MEMBER_PREFIX):
            return self.attribute_with_path(key, ())
        return super().get_attribute(key)

    def attribute_with_path(self, key: str, path: tuple[Any, ...]) -> Any:
        """An attribute with its path applied, for attributes whose path means more than
        selecting from the value (members' attributes)."""
        if not key.startswith(self.MEMBER_PREFIX):
            return select_path(self.get_attribute(key), path)
        view = self.nested_view()
        if view is None:
            return None
        member, _, attribute = key[len(self.MEMBER_PREFIX) :].partition(".")
        if member not in view.resource_names():
            raise InvalidTemplateAttribute(self.name, key)
        if not attribute:
            if not path:
                return view.reference(member)
            attribute, path = str(path[0]), tuple(path[1:])
        return view.attribute(member, attribute, tuple(path))
