"""OS::Heat::ResourceGroup: ``count`` identically configured resources in a nested stack."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.attributes import select_path
from stoker.sdk.exceptions import InvalidTemplateAttribute, ValidationError
from stoker.sdk.stack_resource import NestedView, StackResource

# The nested template's version: the one Heat uses for groups.
NESTED_VERSION = "2015-04-30"


def _batch_schema(verb: str) -> dict[str, properties.Schema]:
    """max_batch_size and pause_time, shared by both update policies."""
    return {
        "max_batch_size": properties.Schema(
            properties.Schema.INTEGER,
            f"The maximum number of resources to {verb} at once.",
            constraints=[constraints.Range(min=1)],
            default=1,
        ),
        "pause_time": properties.Schema(
            properties.Schema.NUMBER,
            "The number of seconds to wait between batches.",
            constraints=[constraints.Range(min=0)],
            default=0,
        ),
    }


# The mixin's base for type checkers only: at run time it is a plain mixin.
if TYPE_CHECKING:
    _MixinBase = StackResource
else:
    _MixinBase = object


class MemberAttributes(_MixinBase):
    """Attributes of a group of members in a nested stack, as Heat's groups give them
    (mixed into a ``StackResource`` that names its members with ``member_names()``):
    ``refs`` (the members' references), ``attributes`` (a map of member name to the
    attribute the path names), ``resource.<n>[.<attribute>]`` (one member), and any
    other name the list of that attribute over the members, the path applied to each.
    ``own_attribute`` answers the names a type adds."""

    REFS, ATTR_ATTRIBUTES = "refs", "attributes"

    def member_names(self) -> list[str]:
        raise NotImplementedError

    def own_attribute(self, key: str, view: NestedView, names: list[str]) -> tuple[bool, Any]:
        """(True, value) for an attribute of the type's own, else (False, None)."""
        return False, None

    def get_attribute(self, key: str) -> Any:
        return self.attribute_with_path(key, ())

    def attribute_with_path(self, key: str, path: tuple[Any, ...]) -> Any:
        if key.startswith(self.MEMBER_PREFIX):
            return super().attribute_with_path(key, path)
        view = self.nested_view()
        if view is None:
            return None
        present = set(view.resource_names())
        names = [name for name in self.member_names() if name in present]
        if key == self.REFS:
            return select_path([view.reference(name) for name in names], path)
        if key == self.ATTR_ATTRIBUTES:
            if not path:
                raise InvalidTemplateAttribute(self.name, key)
            return {name: view.attribute(name, str(path[0]), tuple(path[1:])) for name in names}
        found, value = self.own_attribute(key, view, names)
        if found:
            return select_path(value, path)
        # Heat applies the path to each member's attribute, not to the list.
        return [view.attribute(name, key, path) for name in names]


class ResourceGroup(MemberAttributes, StackResource):
    """Creates one or more identically configured nested resources.

    Members are named "0", "1", ... in a nested stack. ``index_var`` (default ``%index%``)
    in the members' properties becomes the member's name. Besides ``refs``, ``refs_map``,
    ``removed_rsrc_list`` and ``attributes``, any other attribute name gives the list of
    that attribute over the members, ``resource.<n>`` the member's reference and
    ``resource.<n>.<attribute>`` one member's attribute. ``removal_policies`` name members
    to remove (by name or reference); a removed name is never used again.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (COUNT, INDEX_VAR, RESOURCE_DEF, REMOVAL_POLICIES, REMOVAL_POLICIES_MODE) = (
        "count",
        "index_var",
        "resource_def",
        "removal_policies",
        "removal_policies_mode",
    )
    _RESOURCE_DEF_KEYS = (RESOURCE_DEF_TYPE, RESOURCE_DEF_PROPERTIES, RESOURCE_DEF_METADATA) = (
        "type",
        "properties",
        "metadata",
    )
    REMOVAL_RSRC_LIST = "resource_list"
    REMOVAL_POLICY_APPEND, REMOVAL_POLICY_UPDATE = "append", "update"
    ATTRIBUTES: tuple[str, ...]
    ATTRIBUTES = (REFS, REFS_MAP, ATTR_ATTRIBUTES, REMOVED_RSRC_LIST) = (
        "refs",
        "refs_map",
        "attributes",
        "removed_rsrc_list",
    )
    # Resource data: names removed by removal_policies, never reused.
    BLACKLIST_KEY = "name_blacklist"

    properties_schema = {
        COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of resources to create.",
            default=1,
            constraints=[constraints.Range(min=0)],
            update_allowed=True,
        ),
        INDEX_VAR: properties.Schema(
            properties.Schema.STRING,
            "A variable that this resource will use to replace with the current index of a given resource in the group.",
            default="%index%",
            constraints=[constraints.Length(min=3)],
            support_status=support.SupportStatus(version="2014.2"),
        ),
        RESOURCE_DEF: properties.Schema(
            properties.Schema.MAP,
            "Resource definition for the resources in the group, as if declared in the template itself.",
            schema={
                RESOURCE_DEF_TYPE: properties.Schema(
                    properties.Schema.STRING,
                    "The type of the resources in the group.",
                    required=True,
                ),
                RESOURCE_DEF_PROPERTIES: properties.Schema(
                    properties.Schema.MAP, "Property values for the resources in the group."
                ),
                RESOURCE_DEF_METADATA: properties.Schema(
                    properties.Schema.MAP,
                    "Supplied metadata for the resources in the group.",
                    support_status=support.SupportStatus(version="5.0.0"),
                ),
            },
            required=True,
            update_allowed=True,
        ),
        REMOVAL_POLICIES: properties.Schema(
            properties.Schema.LIST,
            "Policies for removal of resources on update.",
            schema=properties.Schema(
                properties.Schema.MAP,
                "Policy to be processed when doing an update which requires removal of specific resources.",
                schema={
                    REMOVAL_RSRC_LIST: properties.Schema(
                        properties.Schema.LIST,
                        "List of resources to be removed when doing an update which requires removal of specific "
                        "resources: member names, or references as in the refs attribute. A removed name is never reused.",
                        default=[],
                    )
                },
            ),
            update_allowed=True,
            default=[],
            support_status=support.SupportStatus(version="2015.1"),
        ),
        REMOVAL_POLICIES_MODE: properties.Schema(
            properties.Schema.STRING,
            "How to handle the removal_policies: append to the names already removed, or replace them.",
            default=REMOVAL_POLICY_APPEND,
            constraints=[constraints.AllowedValues([REMOVAL_POLICY_APPEND, REMOVAL_POLICY_UPDATE])],
            update_allowed=True,
            support_status=support.SupportStatus(version="10.0.0"),
        ),
    }

    attributes_schema = {
        REFS: attributes.Schema(
            "A list of resource IDs for the resources in the group.", type=attributes.Schema.LIST
        ),
        REFS_MAP: attributes.Schema(
            "A map of resource names to IDs for the resources in the group.",
            type=attributes.Schema.MAP,
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        ATTR_ATTRIBUTES: attributes.Schema(
            "A map of resource names to the specified attribute of each individual resource (give the attribute as the path).",
            type=attributes.Schema.MAP,
            support_status=support.SupportStatus(version="2014.2"),
        ),
        REMOVED_RSRC_LIST: attributes.Schema(
            "A list of removed resource names.",
            type=attributes.Schema.LIST,
            support_status=support.SupportStatus(version="7.0.0"),
        ),
    }

    # Any attribute name is a list over the members (checked by the members' types).
    dynamic_attributes = True

    # update_policy: rolling_update replaces members in batches when resource_def
    # changes; batch_create creates them in batches. Replacements are created before the
    # members they replace are deleted, so min_in_service members always stay.
    UPDATE_POLICIES = (ROLLING_UPDATE, BATCH_CREATE) = ("rolling_update", "batch_create")
    _BATCH_KEYS = (MIN_IN_SERVICE, MAX_BATCH_SIZE, PAUSE_TIME) = ("min_in_service", "max_batch_size", "pause_time")
    # Resource data: the batched action in progress (which members are done, the pause).
    BATCHES_KEY = "batches"

    update_policy_schema = {
        ROLLING_UPDATE: properties.Schema(
            properties.Schema.MAP,
            "Replace members in batches when resource_def changes.",
            schema={
                MIN_IN_SERVICE: properties.Schema(
                    properties.Schema.INTEGER,
                    "The minimum number of resources in service while rolling updates are being executed.",
                    constraints=[constraints.Range(min=0)],
                    default=0,
                ),
                **_batch_schema("replace"),
            },
            support_status=support.SupportStatus(version="5.0.0"),
        ),
        BATCH_CREATE: properties.Schema(
            properties.Schema.MAP,
            "Create members in batches.",
            schema=_batch_schema("create"),
            support_status=support.SupportStatus(version="5.0.0"),
        ),
    }

    # -- members ----------------------------------------------------------------------

    def _blacklist(self) -> list[str]:
        """Names removed so far plus those the removal policies name now (nothing is written)."""
        stored = [
            name for name in str(self.data().get(self.BLACKLIST_KEY) or "").split(",") if name
        ]
        if self.properties[self.REMOVAL_POLICIES_MODE] == self.REMOVAL_POLICY_UPDATE:
            stored = []
        wanted = [
            str(name)
            for policy in self.properties[self.REMOVAL_POLICIES] or []
            for name in policy.get(self.REMOVAL_RSRC_LIST) or []
        ]
        if not wanted:
            return stored
        view = self.nested_view() if self.resource_id is not None else None
        names = set(view.resource_names()) if view is not None else set()
        by_reference = (
            {str(view.reference(name)): name for name in names} if view is not None else {}
        )
        for item in wanted:
            name = item if item in names else by_reference.get(item)
            if name is not None and name not in stored:
                stored.append(name)
        return stored

    def member_names(self, blacklist: list[str] | None = None) -> list[str]:
        removed = set(self._blacklist() if blacklist is None else blacklist)
        candidates: Iterator[str] = (str(index) for index in itertools.count())
        return list(
            itertools.islice(
                (name for name in candidates if name not in removed), self.properties[self.COUNT]
            )
        )

    def _member_definition(self, name: str) -> dict[str, Any]:
        definition = self.properties[self.RESOURCE_DEF]
        index_var = self.properties[self.INDEX_VAR]

        def substitute(value: Any) -> Any:
            if isinstance(value, str):
                return value.replace(index_var, name)
            if isinstance(value, list):
                return [substitute(item) for item in value]
            if isinstance(value, Mapping):
                return {key: substitute(item) for key, item in value.items()}
            return value

        member: dict[str, Any] = {"type": definition[self.RESOURCE_DEF_TYPE]}
        if definition.get(self.RESOURCE_DEF_PROPERTIES):
            member["properties"] = substitute(dict(definition[self.RESOURCE_DEF_PROPERTIES]))
        if definition.get(self.RESOURCE_DEF_METADATA):
            member["metadata"] = dict(definition[self.RESOURCE_DEF_METADATA])
        return member

    def child_template(self) -> Mapping[str, Any]:
        return {
            "heat_template_version": NESTED_VERSION,
            "resources": {name: self._member_definition(name) for name in self.member_names()},
        }

    def member_count_property(self) -> str | None:
        return self.COUNT

    def validate_nested(self) -> None:
        # A zero count may disable a feature whose type is not even available (as in Heat).
        count = self.properties[self.COUNT]
        if count:
            template = {
                "heat_template_version": NESTED_VERSION,
                "resources": {"0": self._member_definition("0")},
            }
            self.nested_stacks().validate(self, template, {}, resource_count=count)

    def _remember_blacklist(self) -> None:
        blacklist = self._blacklist()
        if ",".join(blacklist) != str(self.data().get(self.BLACKLIST_KEY) or ""):
            self.data_set(self.BLACKLIST_KEY, ",".join(blacklist))

    # -- update policies: members created and replaced in batches -----------------------

    def _policy(self, name: str, definition: Any = None) -> tuple[int, float] | None:
        """(max_batch_size, pause_time) of the update_policy ``name``, if it is set."""
        policy = (definition or self.t).update_policy_properties(self.update_policy_schema, self.context)
        value = policy[name]
        if not value:
            return None
        return int(value[self.MAX_BATCH_SIZE]), float(value[self.PAUSE_TIME])

    def validate(self) -> None:
        super().validate()
        policy = self.t.update_policy_properties(self.update_policy_schema, self.context)
        policy.validate()
        for name in (self.ROLLING_UPDATE, self.BATCH_CREATE):
            pause = (policy[name] or {}).get(self.PAUSE_TIME) or 0
            if pause > 3600:
                raise ValidationError(
                    f"Maximum {self.PAUSE_TIME} allowed is 1hr(3600s), provided {pause} seconds.",
                    path=f"resources.{self.name}.update_policy.{name}.{self.PAUSE_TIME}",
                )

    def _step_template(self, plan: Mapping[str, Any]) -> dict[str, Any]:
        """The child's template for the batches done so far: members not reached yet are
        absent (batch_create) or keep their old definition (rolling_update)."""
        done = set(plan["order"][: plan["done"]])
        resources = {}
        for name in plan["names"]:
            if name in done:
                resources[name] = self._member_definition(name)
            elif name in plan["old"]:
                resources[name] = plan["old"][name]
        return {"heat_template_version": NESTED_VERSION, "resources": resources}

    def _start_batches(self, action: str, order: list[str], old: Mapping[str, Any], policy: tuple[int, float]) -> str:
        size, pause = policy
        plan = {
            "action": action,
            "names": self.member_names(),
            "order": order,
            "old": dict(old),
            "done": min(size, len(order)),
            "size": size,
            "pause": pause,
            "since": None,
            # what the child is doing for the current step
            "child_action": action,
        }
        self.data_set(self.BATCHES_KEY, plan)
        template = self._step_template(plan)
        if action == self.CREATE:
            self.create_with_template(template, {}, self.child_timeout_mins())
        else:
            self.update_with_template(template, {}, self.child_timeout_mins())
        return self.BATCHES_KEY

    def _next_batch(self, action: str) -> bool:
        """Poll a batched action: the current step's child action, then the pause, then
        the next step; the last step is the whole new template (and any resize)."""
        plan = dict(self.data()[self.BATCHES_KEY])
        if not self._child_done(plan["child_action"]):
            return False
        if plan["done"] >= len(plan["order"]):
            if plan.get("final"):
                self.data_delete(self.BATCHES_KEY)
                return True
            plan["final"] = True
            plan["child_action"] = self.UPDATE
            self.data_set(self.BATCHES_KEY, plan)
            self.update_with_template(self.child_template(), {}, self.child_timeout_mins())
            return False
        now = self._hooks.now()
        if plan["pause"] > 0:
            if plan["since"] is None:
                plan["since"] = now
                self.data_set(self.BATCHES_KEY, plan)
                return False
            if now - plan["since"] < plan["pause"]:
                return False
        plan["done"] = min(plan["done"] + plan["size"], len(plan["order"]))
        plan["since"] = None
        plan["child_action"] = self.UPDATE
        self.data_set(self.BATCHES_KEY, plan)
        self.update_with_template(self._step_template(plan), {}, self.child_timeout_mins())
        return False

    def handle_create(self) -> Any:
        # The count may be known only now (get_attr, a parameter given by an update):
        # the tree is counted with one member before the members are written out.
        self.validate_nested()
        self._remember_blacklist()
        names = self.member_names()
        policy = self._policy(self.BATCH_CREATE)
        if policy is None or policy[0] >= len(names):
            return super().handle_create()
        self.data_set(self.DIGEST_KEY, self.child_digest())
        return self._start_batches(self.CREATE, names, {}, policy)

    def check_create_complete(self, token: Any) -> bool:
        if token == self.BATCHES_KEY:
            return self._next_batch(self.CREATE)
        return super().check_create_complete(token)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> Any:
        self.properties = json_snippet.properties(self.properties_schema, self.context)
        self.validate_nested()  # as at create: counted before the members are written out
        self._remember_blacklist()
        policy = self._policy(self.ROLLING_UPDATE, json_snippet)
        view = self.nested_view() if self.resource_id is not None else None
        if policy is None or not self.members_changed(prop_diff) or view is None or self.nested_stacks().state(self) is None:
            return super().handle_update(json_snippet, tmpl_diff, prop_diff)
        existing = set(view.resource_names())
        # Members that stay are replaced batch by batch; new ones come with the last step.
        order = [name for name in self.member_names() if name in existing]
        old = {name: view.definition(name) for name in order}
        self.data_set(self.DIGEST_KEY, self.child_digest())
        return self._start_batches(self.UPDATE, order, old, policy)

    def members_changed(self, prop_diff: Mapping[str, Any]) -> bool:
        """Whether the update changes the members' definition (rolling_update replaces
        them in batches then)."""
        return self.RESOURCE_DEF in prop_diff

    def check_update_complete(self, token: Any) -> bool:
        if token == self.BATCHES_KEY:
            return self._next_batch(self.UPDATE)
        return super().check_update_complete(token)

    # -- attributes ---------------------------------------------------------------------

    def own_attribute(self, key: str, view: NestedView, names: list[str]) -> tuple[bool, Any]:
        if key == self.REFS_MAP:
            return True, {name: view.reference(name) for name in names}
        if key == self.REMOVED_RSRC_LIST:
            return True, self._blacklist()
        return False, None


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"OS::Heat::ResourceGroup": ResourceGroup}
