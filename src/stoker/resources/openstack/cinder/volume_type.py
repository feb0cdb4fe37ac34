"""OS::Cinder::VolumeType, as Heat has it.

Owns: creating a volume type with its extra specs (Heat's ``metadata``) and project
access, updating name, description, visibility, extra specs and projects in place,
delete, check. Cinder's default policy lets administrators only manage volume types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["CinderVolumeType", "resource_mapping"]


class CinderVolumeType(Resource):
    """A resource for creating cinder volume types.

    Volume type resource allows to define, whether volume, which will be use this type,
    will public and which projects are allowed to work with it. Also, there can be some
    user-defined metadata.

    Note that default cinder security policy usage of this resource is limited to being
    used by administrators only.
    """

    support_status = support.SupportStatus(version="2015.1")
    default_client_name = "cinder"
    entity = "type"

    PROPERTIES = (NAME, METADATA, IS_PUBLIC, DESCRIPTION, PROJECTS) = (
        "name", "metadata", "is_public", "description", "projects",
    )

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Name of the volume type.", required=True, update_allowed=True),
        METADATA: properties.Schema(
            properties.Schema.MAP, "The extra specs key and value pairs of the volume type.", update_allowed=True
        ),
        IS_PUBLIC: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether the volume type is accessible to the public.",
            default=True,
            support_status=support.SupportStatus(version="5.0.0"),
            update_allowed=True,
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of the volume type.",
            update_allowed=True,
            support_status=support.SupportStatus(version="5.0.0"),
        ),
        PROJECTS: properties.Schema(
            properties.Schema.LIST,
            "Projects to add volume type access to. NOTE: This property is only supported since Cinder API V2.",
            support_status=support.SupportStatus(version="5.0.0"),
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.STRING, constraints=[constraints.CustomConstraint("keystone.project")]
            ),
            default=[],
        ),
    }

    def given(self, key: str) -> Any:
        return self.properties.resolved().get(key)

    def validate(self) -> None:
        super().validate()
        if self.properties[self.PROJECTS] and self.properties[self.IS_PUBLIC]:
            raise ValidationError(
                'Can not specify property "projects" if the volume type is public.',
                path=f"resources.{self.name}.properties.projects",
                hint="set is_public: false to give access to projects",
            )

    def create_arguments(self) -> dict[str, Any]:
        """The openstacksdk ``create_type`` arguments (extra specs sent with the create)."""
        arguments: dict[str, Any] = {"name": self.properties[self.NAME], "is_public": bool(self.properties[self.IS_PUBLIC])}
        if self.given(self.DESCRIPTION) is not None:
            arguments["description"] = self.given(self.DESCRIPTION)
        specs = self.given(self.METADATA)
        if specs:
            arguments["extra_specs"] = {str(key): str(value) for key, value in specs.items()}
        return arguments

    def _project_ids(self, projects: list[str]) -> set[str]:
        keystone = self.client_plugin("keystone")
        return {keystone.get_project_id(project) for project in projects}

    def handle_create(self) -> None:
        created = self.client().create_type(**self.create_arguments())
        self.resource_id_set(created.id)
        for project_id in sorted(self._project_ids(self.properties[self.PROJECTS] or [])):
            self.client().add_type_access(created.id, project_id)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        client = self.client()
        changes: dict[str, Any] = {}
        for key in (self.NAME, self.DESCRIPTION):
            if key in prop_diff:
                changes[key] = prop_diff[key]
        is_public = bool(self.properties[self.IS_PUBLIC])
        if self.IS_PUBLIC in prop_diff:
            is_public = bool(prop_diff[self.IS_PUBLIC])
            changes["is_public"] = is_public
        if changes:
            # Cinder's update takes "is_public" (its create, the extension's long name).
            self.client_plugin().rest("PUT", f"/types/{self.resource_id}", json={"volume_type": changes})
        if self.METADATA in prop_diff:
            self._replace_extra_specs(prop_diff[self.METADATA] or {})
        if self.PROJECTS in prop_diff and not is_public:
            current = {access["project_id"] for access in client.get_type_access(self.resource_id)}
            wanted = self._project_ids(prop_diff[self.PROJECTS] or [])
            for project_id in sorted(current - wanted):
                client.remove_type_access(self.resource_id, project_id)
            for project_id in sorted(wanted - current):
                client.add_type_access(self.resource_id, project_id)

    def _replace_extra_specs(self, specs: Mapping[str, Any]) -> None:
        client = self.client()
        wanted = {str(key): str(value) for key, value in specs.items()}
        current = client.get_type(self.resource_id).extra_specs or {}
        stale = [key for key in current if key not in wanted]
        if stale:
            client.delete_type_extra_specs(self.resource_id, stale)
        if wanted:
            client.update_type_extra_specs(self.resource_id, **wanted)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_type(self.resource_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_type(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_type(self.resource_id)
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Cinder::VolumeType": CinderVolumeType}
