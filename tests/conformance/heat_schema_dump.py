"""Run with the Python of a venv holding ``openstack-heat``: prints, as JSON, what Heat's
``resource_types`` API lists (``list_resource_types`` with no filter: every type of the
global environment that is not HIDDEN, template-backed ones included) and each type's
``resource_schema``, both taken from Heat's own engine code with its default environment
(``etc/heat/environment.d/default.yaml``, its ``file:///etc/heat/templates`` pointed at the
copies the wheel installs).

No context is passed, as an admin with the default policy sees it: that policy lets an
admin use every type, and the service-availability filter needs a live catalog, which a
list of Heat's code does not depend on. Standard library plus Heat only; run by
``tests/conformance/heat_schemas.py``, never imported by the suite.
"""

import itertools
import json
import os
import sys
import tempfile


def main() -> None:
    from heat.common import config  # noqa: F401  (registers environment_dir)
    from heat.engine import attributes, properties, resources, support
    from oslo_config import cfg

    etc = os.path.join(sys.prefix, "etc", "heat")
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(etc, "environment.d", "default.yaml")) as source:
            text = source.read().replace(
                "file:///etc/heat/templates/", "file://" + os.path.join(etc, "templates") + "/"
            )
        with open(os.path.join(directory, "default.yaml"), "w") as target:
            target.write(text)
        cfg.CONF([], project="heat", default_config_files=[], default_config_dirs=[])
        cfg.CONF.set_override("environment_dir", directory)
        resources.initialise()
        environment = resources.global_env()
        names = sorted(str(name) for name in environment.get_types())
        listing = {}
        for name in names:
            cls = environment.get_class(name)
            property_schemas = {}
            for key, schema_data in cls.properties_schema.items():
                schema = properties.Schema.from_legacy(schema_data)
                if schema.implemented and schema.support_status.status != support.HIDDEN:
                    property_schemas[key] = dict(schema)
            attribute_schemas = {}
            for key, schema_data in itertools.chain(
                cls.attributes_schema.items(), cls.base_attributes_schema.items()
            ):
                schema = attributes.Schema.from_attribute(schema_data)
                if schema.support_status.status != support.HIDDEN:
                    attribute_schemas[key] = dict(schema)
            listing[name] = {
                "properties": property_schemas,
                "attributes": attribute_schemas,
                "support_status": cls.support_status.to_dict(),
                "default_client_name": getattr(cls, "default_client_name", None),
            }
        hidden = sorted(
            str(name)
            for name, info in environment.registry._registry.items()
            if type(info).__name__ == "ClassResourceInfo"
            and info.get_class().support_status.status == support.HIDDEN
        )
    json.dump(
        {"heat_version": _version(), "resource_types": listing, "hidden_types": hidden},
        sys.stdout,
        indent=1,
        sort_keys=True,
        default=str,
    )


def _version() -> str:
    from importlib.metadata import version

    return version("openstack-heat")


if __name__ == "__main__":
    main()
