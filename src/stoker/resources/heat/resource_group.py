"""OS::Heat::ResourceGroup: ``count`` identically configured resources in a nested stack."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.attributes import select_path
from stoker.sdk.exceptions import InvalidTemplateAttribute
from stoker.sdk.stack_resource import StackResource

# The nested template's version: the one Heat uses for groups.
NESTED_VERSION = "2015-04-30"


class ResourceGroup(StackResource):
    """Creates one or more identically configured nested resources.

    Members are named "0", "1", ... in a nested stack. ``index_var`` (default ``%index%``)
    in the members' properties becomes the member's name. Besides ``refs``, ``refs_map``,
    ``removed_rsrc_list`` and ``attributes``, any other attribute name gives the list of
    that attribute over the members, ``resource.<n>`` the member's reference and
    ``resource.<n>.<attribute>`` one member's attribute. ``removal_policies`` name members
    to remove (by name or reference); a removed name is never used again.
    """

    support_status = support.SupportStatus(version="2014.1")

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

    def validate_nested(self) -> None:
        # A zero count may disable a feature whose type is not even available (as in Heat).
        if self.properties[self.COUNT]:
            template = {
                "heat_template_version": NESTED_VERSION,
                "resources": {"0": self._member_definition("0")},
            }
            self.nested_stacks().validate(self, template, {})

    def _remember_blacklist(self) -> None:
        blacklist = self._blacklist()
        if ",".join(blacklist) != str(self.data().get(self.BLACKLIST_KEY) or ""):
            self.data_set(self.BLACKLIST_KEY, ",".join(blacklist))

    def handle_create(self) -> Any:
        self._remember_blacklist()
        return super().handle_create()

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> Any:
        self.properties = json_snippet.properties(self.properties_schema, self.context)
        self._remember_blacklist()
        return super().handle_update(json_snippet, tmpl_diff, prop_diff)

    # -- attributes ---------------------------------------------------------------------

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
        if key == self.REFS_MAP:
            return select_path({name: view.reference(name) for name in names}, path)
        if key == self.REMOVED_RSRC_LIST:
            return select_path(self._blacklist(), path)
        if key == self.ATTR_ATTRIBUTES:
            if not path:
                raise InvalidTemplateAttribute(self.name, key)
            return {name: view.attribute(name, str(path[0]), tuple(path[1:])) for name in names}
        # Heat applies the path to each member's attribute, not to the list.
        return [view.attribute(name, key, path) for name in names]


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"OS::Heat::ResourceGroup": ResourceGroup}
