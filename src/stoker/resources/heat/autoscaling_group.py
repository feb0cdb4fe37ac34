"""OS::Heat::AutoScalingGroup: a group of members in a nested stack whose size a
ScalingPolicy adjusts, with Heat's bounds, cooldown and rolling updates.

Owns the group's membership (names in age order, in the resource's data), the
child's template for each step, and the scaling state (cooldown, scaling in
progress). The nested stack's lifecycle is ``StackResource``'s and the members'
attributes are ``MemberAttributes``' (shared with ResourceGroup). What runs an
adjustment under the stack's lock is the engine's (engine/scaling.py).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from typing import Any

from stoker.resources.heat import capacity
from stoker.resources.heat.resource_group import (
    NESTED_VERSION,
    MemberAttributes,
    ResourceGroup,
    _batch_schema,
)
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import InvalidTemplateAttribute, ResourceFailure, ValidationError
from stoker.sdk.stack_resource import NestedView, StackResource


def _new_member_name() -> str:
    """A short random name, as Heat names a scaling group's members."""
    return base64.b32encode(uuid.uuid4().bytes).decode().lower()[:12]


def not_performed(group: str, reason: str) -> str:
    """Heat's words for a scaling adjustment that is not made."""
    return f"The resource {group} could not perform scaling action: {reason}"


class AutoScalingGroup(MemberAttributes, StackResource):
    """An autoscaling group that can scale arbitrary resources.

    ``resource`` is the members' definition, as if declared in the template itself;
    the group starts with ``desired_capacity`` (or ``min_size``) members, and an
    OS::Heat::ScalingPolicy signal resizes it within ``min_size`` and ``max_size``,
    unless the group is in its ``cooldown``. Shrinking removes the oldest members
    first. A changed ``resource`` is rolled out in batches (``rolling_updates``).

    Attributes: ``outputs`` (with an attribute path: member name -> that attribute),
    ``outputs_list`` (the same as a list), ``current_size``, ``refs``, ``refs_map``;
    ``resource.<n>`` is the n-th member (oldest first) and ``resource.<n>.<attribute>``
    its attribute.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (RESOURCE, MAX_SIZE, MIN_SIZE, COOLDOWN, DESIRED_CAPACITY, ROLLING_UPDATES) = (
        "resource",
        "max_size",
        "min_size",
        "cooldown",
        "desired_capacity",
        "rolling_updates",
    )
    _ROLLING_KEYS = (MIN_IN_SERVICE, MAX_BATCH_SIZE, PAUSE_TIME) = ("min_in_service", "max_batch_size", "pause_time")
    ATTRIBUTES: tuple[str, ...]
    ATTRIBUTES = (OUTPUTS, OUTPUTS_LIST, CURRENT_SIZE, REFS, REFS_MAP) = (
        "outputs",
        "outputs_list",
        "current_size",
        "refs",
        "refs_map",
    )

    properties_schema = {
        RESOURCE: properties.Schema(
            properties.Schema.MAP,
            "Resource definition for the resources in the group, in HOT format, as if it were declared in the "
            "template itself.",
            required=True,
            update_allowed=True,
        ),
        MAX_SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "Maximum number of resources in the group.",
            required=True,
            update_allowed=True,
            constraints=[constraints.Range(min=0)],
        ),
        MIN_SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "Minimum number of resources in the group.",
            required=True,
            update_allowed=True,
            constraints=[constraints.Range(min=0)],
        ),
        COOLDOWN: properties.Schema(properties.Schema.INTEGER, "Cooldown period, in seconds.", update_allowed=True),
        DESIRED_CAPACITY: properties.Schema(
            properties.Schema.INTEGER, "Desired initial number of resources.", update_allowed=True
        ),
        ROLLING_UPDATES: properties.Schema(
            properties.Schema.MAP,
            "Policy for rolling updates for this scaling group.",
            update_allowed=True,
            schema={
                MIN_IN_SERVICE: properties.Schema(
                    properties.Schema.INTEGER,
                    "The minimum number of resources in service while rolling updates are being executed.",
                    constraints=[constraints.Range(min=0)],
                    default=0,
                ),
                **_batch_schema("replace"),
            },
            default={MIN_IN_SERVICE: 0, MAX_BATCH_SIZE: 1, PAUSE_TIME: 0},
        ),
    }

    attributes_schema = {
        OUTPUTS: attributes.Schema(
            "A map of resource names to the specified attribute of each member of the group (give the attribute "
            "as the path).",
            type=attributes.Schema.MAP,
            support_status=support.SupportStatus(version="2014.2"),
        ),
        OUTPUTS_LIST: attributes.Schema(
            "A list of the specified attribute of each member of the group (give the attribute as the path).",
            type=attributes.Schema.LIST,
            support_status=support.SupportStatus(version="2014.2"),
        ),
        CURRENT_SIZE: attributes.Schema(
            "The current size of the group.",
            type=attributes.Schema.INTEGER,
            support_status=support.SupportStatus(version="2015.1"),
        ),
        REFS: attributes.Schema(
            "A list of resource IDs for the resources in the group.",
            type=attributes.Schema.LIST,
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        REFS_MAP: ResourceGroup.attributes_schema[ResourceGroup.REFS_MAP],
    }

    # Resource data: the members oldest first; those given the new definition in the
    # step in flight; the rolling update in progress; the scaling state.
    MEMBERS_KEY, FRESH_KEY, ROLLING_KEY = "members", "fresh_members", "rolling"
    COOLDOWN_END_KEY, COOLDOWN_REASON_KEY, SCALING_KEY = "cooldown_end", "cooldown_reason", "scaling_in_progress"

    # The adjustment type the cooldown's reason names for a size set outright.
    EXACT = capacity.EXACT_CAPACITY

    def _optional(self, key: str) -> Any:
        """A property without a default: None when not given (not its type's zero)."""
        return self.properties[key] if self.properties.data.get(key) is not None else None

    # -- what a subclass (the AWS groups) names differently --------------------------------

    def desired_size(self) -> int | None:
        """The size the template asks for, None when it leaves it to the group."""
        return self._optional(self.DESIRED_CAPACITY)

    def rolling_policy(self) -> dict[str, Any]:
        """The rolling update's min_in_service, max_batch_size and pause_time (seconds)."""
        policy = self.properties[self.ROLLING_UPDATES]
        return {
            "min_in_service": policy[self.MIN_IN_SERVICE],
            "max_batch_size": policy[self.MAX_BATCH_SIZE],
            "pause_time": float(policy[self.PAUSE_TIME]),
        }

    def rollout_wanted(self, prop_diff: Mapping[str, Any]) -> bool:
        """Whether this update gives the members a new definition, in batches."""
        return self.RESOURCE in prop_diff

    # -- members ----------------------------------------------------------------------

    def member_names(self) -> list[str]:
        return list(self.data().get(self.MEMBERS_KEY) or [])

    def _member_definition(self) -> dict[str, Any]:
        """The members' definition in the form the child's template renders it."""
        definition = {key: value for key, value in dict(self.properties[self.RESOURCE]).items() if value not in (None, {}, [])}
        return json.loads(json.dumps(definition, default=str))

    def _view(self) -> NestedView | None:
        if self.resource_id is None or self.nested_stacks().state(self) is None:
            return None
        return self.nested_view()

    def _failed(self, view: NestedView | None) -> set[str]:
        """The members whose last action failed."""
        if view is None:
            return set()
        states = {name: view.resource_state(name) for name in view.resource_names()}
        return {name for name, state in states.items() if state is not None and state[1] == self.FAILED}

    def _size(self) -> int:
        """The group's size as Heat counts it: its members that have not failed."""
        failed = self._failed(self._view())
        return sum(1 for name in self.member_names() if name not in failed)

    def _current_definitions(self) -> list[tuple[str, dict[str, Any]]]:
        """The members in the order they go (failed ones first, then the oldest), with
        the definition the child has for each."""
        view = self._view()
        present = set(view.resource_names()) if view is not None else set()
        failed = self._failed(view)
        new = self._member_definition()
        found = []
        for name in sorted(self.member_names(), key=lambda member: member not in failed):
            definition = view.definition(name) if view is not None and name in present else None
            found.append((name, definition if definition is not None else new))
        return found

    def _layout(self, size: int, num_new: int) -> None:
        """Make the membership ``size`` members, ``num_new`` of them (new ones first)
        with the new definition: failed members go first, then the oldest, and the
        first of those left with another definition are the ones given the new one. A member given the new
        definition is replaced, so it counts as the newest from now on."""
        members = self._current_definitions()
        members = members[max(len(members) - size, 0) :] if size else []
        new = self._member_definition()
        replace = num_new - (size - len(members))
        kept, fresh = [], []
        for name, definition in members:
            if replace > 0 and definition != new:
                replace -= 1
                fresh.append(name)
            else:
                kept.append(name)
        created = [_new_member_name() for _ in range(size - len(members))]
        self.data_set(self.MEMBERS_KEY, kept + fresh + created)
        self.data_set(self.FRESH_KEY, fresh + created)

    def child_template(self) -> Mapping[str, Any]:
        view = self._view()
        present = set(view.resource_names()) if view is not None else set()
        fresh = set(self.data().get(self.FRESH_KEY) or [])
        new = self._member_definition()
        resources = {}
        for name in self.member_names():
            kept = view.definition(name) if view is not None and name in present and name not in fresh else None
            resources[name] = kept if kept is not None else new
        return {"heat_template_version": NESTED_VERSION, "resources": resources}

    # -- validation ---------------------------------------------------------------------

    def _initial_size(self) -> int:
        return self.desired_size() or self.properties[self.MIN_SIZE]

    def validate(self) -> None:
        super().validate()
        low, high = self.properties[self.MIN_SIZE], self.properties[self.MAX_SIZE]
        desired = self._optional(self.DESIRED_CAPACITY)
        if high < low:
            raise ValidationError("MinSize can not be greater than MaxSize", path=f"resources.{self.name}.properties")
        if desired is not None and not low <= desired <= high:
            raise ValidationError(
                "DesiredCapacity must be between MinSize and MaxSize",
                path=f"resources.{self.name}.properties.{self.DESIRED_CAPACITY}",
            )

    def member_count_property(self) -> str | None:
        return self.DESIRED_CAPACITY if self._optional(self.DESIRED_CAPACITY) else self.MIN_SIZE

    def validate_nested(self) -> None:
        size = self._initial_size()
        if size:
            template = {"heat_template_version": NESTED_VERSION, "resources": {"member": self._member_definition()}}
            self.nested_stacks().validate(self, template, {}, resource_count=size)

    # -- create and update --------------------------------------------------------------

    def handle_create(self) -> Any:
        self.validate_nested()  # the tree counted with one member before the layout is written
        self._layout(self._initial_size(), self._initial_size())
        return super().handle_create()

    def check_create_complete(self, token: Any) -> bool:
        done = super().check_create_complete(token)
        if done:
            self._finished_scaling(self._optional(self.COOLDOWN), f"{self.EXACT} : {self._size()}")
        return done

    def _bounded(self, size: int) -> int:
        return capacity.new_capacity(size, size, capacity.EXACT_CAPACITY, None, self.properties[self.MIN_SIZE], self.properties[self.MAX_SIZE])

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> Any:
        self.properties = json_snippet.properties(self.properties_schema, self.context)
        if self._view() is None:
            self._layout(self._initial_size(), self._initial_size())
            return super().handle_update(json_snippet, tmpl_diff, prop_diff)
        current = len(self.member_names())
        steps: list[tuple[int, int]] = []
        policy = self.rolling_policy()
        if self.rollout_wanted(prop_diff):
            # The rollout keeps the size it has, or shrinks to the desired one first.
            target = min(self.desired_size() or current, current)
            steps = list(capacity.batches(target, current, policy["max_batch_size"], policy["min_in_service"]))
        plan = {"steps": steps, "done": 0, "since": None, "pause": policy["pause_time"]}
        self.data_set(self.ROLLING_KEY, plan)
        self._next_step(plan)
        return self.ROLLING_KEY

    def _next_step(self, plan: dict[str, Any]) -> None:
        """Send the child the next batch, or after the last one the final size."""
        if plan["done"] < len(plan["steps"]):
            size, num_new = plan["steps"][plan["done"]]
        else:
            size = self._bounded(self.desired_size() or self._size())
            num_new = 0
        plan["done"] += 1
        plan["since"] = None
        self.data_set(self.ROLLING_KEY, plan)
        self._layout(size, num_new)
        self.data_set(self.DIGEST_KEY, self.child_digest())
        self.update_with_template(self.child_template(), {}, self.child_timeout_mins())

    def check_update_complete(self, token: Any) -> bool:
        if token != self.ROLLING_KEY:
            return super().check_update_complete(token)
        if not self._child_done(self.UPDATE):
            return False
        plan = dict(self.data()[self.ROLLING_KEY])
        if plan["done"] > len(plan["steps"]):
            self.data_delete(self.ROLLING_KEY)
            self.data_set(self.FRESH_KEY, [])
            self._finished_scaling(self._optional(self.COOLDOWN), f"{self.EXACT} : {self._size()}")
            return True
        # Heat pauses between batches, not after the last one.
        if plan["pause"] > 0 and 0 < plan["done"] < len(plan["steps"]):
            now = self._hooks.now()
            if plan["since"] is None:
                plan["since"] = now
                self.data_set(self.ROLLING_KEY, plan)
                return False
            if now - plan["since"] < plan["pause"]:
                return False
        self._next_step(plan)
        return False

    # -- scaling (called by OS::Heat::ScalingPolicy, under the stack's lock) -------------

    def _membership_of_child(self) -> None:
        """The members as the child stack has them, after an adjustment an engine stop
        cut short: a member recorded but never made is dropped, one the child still has
        is kept (an interrupted scale-in), so the next signal counts what exists."""
        view = self._view()
        if view is None:
            return
        present = list(view.resource_names())
        recorded = self.member_names()
        members = [name for name in recorded if name in present] + [name for name in present if name not in recorded]
        if members != recorded:
            self.data_set(self.MEMBERS_KEY, members)
            self.data_set(self.FRESH_KEY, [])

    def _finished_scaling(self, cooldown: float | None, reason: str, size_changed: bool = True) -> None:
        if size_changed:
            end = self._hooks.now() + max(0.0, float(cooldown or 0))
            self.data_set(self.COOLDOWN_END_KEY, max(end, float(self.data().get(self.COOLDOWN_END_KEY) or 0)))
            self.data_set(self.COOLDOWN_REASON_KEY, reason)
        self.data_set(self.SCALING_KEY, False)

    def adjust(self, adjustment: float, adjustment_type: str, min_step: int | None, cooldown: float | None) -> tuple[bool, str, str]:
        """Start resizing the group by a policy's adjustment: (True, what is being done,
        the reason the cooldown will record) once the child's update is under way, or
        (False, why nothing is done, "")."""
        if self.status != self.COMPLETE or self.action in (self.SUSPEND, self.DELETE):
            return False, not_performed(self.name, f"the group is {self.action}_{self.status}"), ""
        if self.data().get(self.SCALING_KEY):
            state = self.nested_stacks().state(self)
            if state is not None and state[1] == self.IN_PROGRESS:
                return False, not_performed(self.name, "due to scaling activity"), ""
            # An engine stopped before it could finish the last adjustment (this runs
            # under the stack's lock, so none is running): it did not happen.
            self._membership_of_child()
            self.data_set(self.SCALING_KEY, False)
        current = self._size()
        wanted = capacity.new_capacity(
            current, adjustment, adjustment_type, min_step, self.properties[self.MIN_SIZE], self.properties[self.MAX_SIZE]
        )
        if wanted == current:
            return False, f"{self.name} NOT performing scaling adjustment, as there is no change in capacity.", ""
        if cooldown is None:
            cooldown = self._optional(self.COOLDOWN)
        if self._hooks.now() < float(self.data().get(self.COOLDOWN_END_KEY) or 0):
            return False, not_performed(self.name, f"due to cooldown, cooldown {cooldown if cooldown is not None else 0}"), ""
        self.data_set(self.SCALING_KEY, True)
        self._layout(wanted, 0)
        self.data_set(self.DIGEST_KEY, self.child_digest())
        # The membership is durable before the child's update starts.
        self.resource_id_set(self.resource_id)
        self.update_with_template(self.child_template(), {}, self.child_timeout_mins())
        reason = f"{adjustment_type} : {adjustment:g}"
        return True, f"Resized the group {self.name} from {current} to {wanted} ({reason})", reason

    def finish_adjust(self, cooldown: float | None, reason: str) -> None:
        """After the child's update ended: the cooldown starts; a failed update (which
        raises here) only ends the scaling, as in Heat."""
        if cooldown is None:
            cooldown = self._optional(self.COOLDOWN)
        try:
            self._child_done(self.UPDATE)
        except ResourceFailure:
            self._finished_scaling(cooldown, reason, size_changed=False)
            raise
        self.data_set(self.FRESH_KEY, [])
        self._finished_scaling(cooldown, reason)

    # -- attributes ---------------------------------------------------------------------

    def own_attribute(self, key: str, view: NestedView, names: list[str]) -> tuple[bool, Any]:
        if key == self.REFS_MAP:
            return True, {name: view.reference(name) for name in names}
        if key == self.CURRENT_SIZE:
            failed = self._failed(view)
            return True, sum(1 for name in names if name not in failed)
        raise InvalidTemplateAttribute(self.name, key)

    def attribute_with_path(self, key: str, path: tuple[Any, ...]) -> Any:
        if key.startswith(self.MEMBER_PREFIX):
            index, _, attribute = key[len(self.MEMBER_PREFIX) :].partition(".")
            names = self.member_names()
            try:
                member = names[int(index)]
            except (ValueError, IndexError):
                raise InvalidTemplateAttribute(self.name, key) from None
            return super().attribute_with_path(f"{self.MEMBER_PREFIX}{member}" + (f".{attribute}" if attribute else ""), path)
        if key in (self.OUTPUTS, self.OUTPUTS_LIST):
            view = self.nested_view()
            if view is None:
                return None
            if not path:
                raise InvalidTemplateAttribute(self.name, key)
            present = set(view.resource_names())
            values = {name: view.attribute(name, str(path[0]), tuple(path[1:])) for name in self.member_names() if name in present}
            return values if key == self.OUTPUTS else list(values.values())
        if key == self.CURRENT_SIZE:
            return self._size() if self.resource_id is not None else None
        return super().attribute_with_path(key, path)


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"OS::Heat::AutoScalingGroup": AutoScalingGroup}
