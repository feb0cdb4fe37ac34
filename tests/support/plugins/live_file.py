"""Test::LiveFile: a resource whose live object is a file, for drift detection.

The file at ``path`` holds ``content`` and has permission bits ``mode``; ``labels`` are
kept in a sidecar file (``<path>.labels``, one per line), and the resource that owns the
path in another (``<path>.owner``). Its live state is
read back from the disk (``get_live_resource_data``), so a test edits, chmods or removes
the file to make drift, as an operator would change a cloud object out of band.
"""

import os
from pathlib import Path

from stoker.sdk import constraints, properties, resource
from stoker.sdk.exceptions import EntityNotFound


class LiveFile(resource.Resource):
    """A file on the local disk, standing for an object of a service."""

    properties_schema = {
        "path": properties.Schema(properties.Schema.STRING, "Where the file is.", required=True),
        "content": properties.Schema(
            properties.Schema.STRING, "What it holds.", default="", update_allowed=True
        ),
        "mode": properties.Schema(
            properties.Schema.STRING,
            "Its permission bits, in octal.",
            default="0644",
            update_allowed=True,
        ),
        "labels": properties.Schema(
            properties.Schema.LIST, "Labels, kept beside it.", default=[], update_allowed=True
        ),
    }

    def _write(self, values):
        path = Path(values["path"])
        path.write_text(values["content"])
        os.chmod(path, int(values["mode"], 8))
        Path(f"{path}.labels").write_text("".join(f"{label}\n" for label in values["labels"]))

    def handle_create(self):
        self._write(self.properties)
        # Whose file it is: a replacement writes the same path, and the old resource's
        # delete must then leave it (as a cloud would delete the old object only).
        Path(f"{self.properties['path']}.owner").write_text(self.uuid)
        self.resource_id_set(self.properties["path"])

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        self._write({**self.properties.resolved(), **prop_diff})

    def handle_delete(self):
        if self.resource_id is None:
            return
        owner = Path(f"{self.resource_id}.owner")
        if owner.exists() and owner.read_text() != self.uuid:
            return
        for suffix in ("", ".labels", ".owner"):
            Path(f"{self.resource_id}{suffix}").unlink(missing_ok=True)

    def get_live_resource_data(self):
        if self.resource_id is None:
            return None
        path = Path(self.resource_id)
        if not path.exists():
            raise EntityNotFound("Resource", self.name)
        labels = Path(f"{path}.labels")
        return {
            "content": path.read_text(),
            "mode": f"0{path.stat().st_mode & 0o777:o}",
            "labels": labels.read_text().splitlines() if labels.exists() else [],
        }


def resource_mapping():
    return {"Test::LiveFile": LiveFile}


class Colour(constraints.BaseCustomConstraint):
    """``test.colour``: one of three colours; it lists them (``values``), as a cloud's
    constraints list flavors or images, for the API and the launch form without a cloud."""

    COLOURS = ("blue", "green", "red")

    def validate_with_client(self, client, value):
        if value not in self.COLOURS:
            raise ValueError(f"{value!r} is not a colour: {', '.join(self.COLOURS)}")

    def values(self, context, limit=500):
        return [{"value": c, "id": c, "label": c.title()} for c in self.COLOURS][:limit], False


def constraint_mapping():
    return {"test.colour": Colour}
