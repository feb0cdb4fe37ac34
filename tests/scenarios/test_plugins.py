"""Plugins from plugin_dirs: loaded through resource_mapping(), tests/ never loaded,
broken plugins reported and skipped."""

from __future__ import annotations

import textwrap

from tests.support.stacks import template

GOOD = '''
from stoker.sdk import attributes, constraints, properties, resource


class Greeting(resource.Resource):
    """Says hello to someone."""

    properties_schema = {
        "name": properties.Schema(properties.Schema.STRING, "Who to greet.", required=True,
                                  constraints=[constraints.Length(max=10)]),
        "times": properties.Schema(properties.Schema.INTEGER, "How often.", default=1, update_allowed=True),
    }
    attributes_schema = {"text": attributes.Schema("The greeting.", type=attributes.Schema.STRING)}

    def handle_create(self):
        self.resource_id_set("greeting-" + self.properties["name"])

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        return None

    def _resolve_attribute(self, name):
        if name == "text":
            return " ".join(["hello " + self.properties["name"]] * self.properties["times"])


def resource_mapping():
    return {"Demo::Greeting": Greeting, "Demo::Hello": Greeting}
'''


def write(directory, relative, text):
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_plugin_dir_types_are_usable(make_service, tmp_path):
    plugins = tmp_path / "plugins"
    write(plugins, "greeting.py", GOOD)
    service = make_service(plugin_dirs=[str(plugins)])
    assert {"Demo::Greeting", "Demo::Hello"} <= set(service.registry.known_types())
    body = """
    heat_template_version: 2021-04-16
    resources:
      g:
        type: Demo::Hello
        properties: {name: ada, times: "2"}
    outputs:
      text: {value: {get_attr: [g, text]}}
    """
    stack = service.create_stack("hi", template(body))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.outputs("hi")[0]["output_value"] == "hello ada hello ada"
    assert service.list_resources("hi")[0].physical_resource_id == "greeting-ada"


def test_plugin_tests_directory_is_never_loaded(make_service, tmp_path):
    plugins = tmp_path / "plugins"
    write(plugins, "greeting.py", GOOD)
    write(plugins, "tests/test_greeting.py", "raise RuntimeError('tests must not be imported')\n")
    write(plugins, "pkg/tests/helper.py", "raise RuntimeError('nested tests must not be imported')\n")
    service = make_service(plugin_dirs=[str(plugins)])
    assert service.registry.problems == []


def test_a_top_level_test_module_is_a_plugin_like_any_other(make_service, tmp_path):
    """Only a ``tests`` directory is excluded (seed 001): ``test_greeting.py`` beside the
    other plugins is loaded, its types registered."""
    plugins = tmp_path / "plugins"
    write(plugins, "test_greeting.py", GOOD)
    service = make_service(plugin_dirs=[str(plugins)])
    assert service.registry.problems == []
    assert "Demo::Greeting" in service.registry.known_types()


def test_broken_plugins_are_reported_and_skipped(make_service, tmp_path):
    plugins = tmp_path / "plugins"
    write(plugins, "greeting.py", GOOD)
    write(plugins, "syntax.py", "def broken(:\n")
    write(plugins, "imports.py", "import module_that_does_not_exist\n")
    write(plugins, "mapping.py", "def resource_mapping():\n    raise ValueError('no mapping today')\n")
    write(
        plugins,
        "schema.py",
        """
        from stoker.sdk import constraints, properties, resource

        class Bad(resource.Resource):
            '''A range on a string.'''
            properties_schema = {"p": properties.Schema(properties.Schema.STRING, constraints=[constraints.Range(1, 2)])}

        def resource_mapping():
            return {"Demo::Bad": Bad}
        """,
    )
    write(plugins, "notaplugin.py", "class X:\n    pass\n\ndef resource_mapping():\n    return {'Demo::X': X}\n")
    service = make_service(plugin_dirs=[str(plugins)])
    problems = "\n".join(service.registry.problems)
    assert "syntax.py: failed to load: SyntaxError" in problems
    assert "imports.py: failed to load: ModuleNotFoundError" in problems
    assert "resource_mapping() failed: ValueError: no mapping today" in problems
    assert "Demo::Bad" in problems and "Range constraint does not apply to type String" in problems
    assert "Demo::X" in problems and "must extend" in problems
    assert "Demo::Greeting" in service.registry.known_types()
    assert "Demo::Bad" not in service.registry.known_types()


def test_missing_plugin_dir_is_reported(make_service, tmp_path):
    service = make_service(plugin_dirs=[str(tmp_path / "nowhere")])
    assert any("does not exist" in p for p in service.registry.problems)


CONSTRAINED = '''
from stoker.sdk import constraints, properties, resource


class EvenConstraint(constraints.BaseCustomConstraint):
    def validate_with_client(self, client, value):
        if int(value) % 2:
            raise ValueError(f"{value} is odd; use an even number")


class Counter(resource.Resource):
    """Counts in twos."""

    properties_schema = {
        "count": properties.Schema(properties.Schema.INTEGER, "An even count.",
                                   constraints=[constraints.CustomConstraint("test.even")]),
        "label": properties.Schema(properties.Schema.STRING, "A label.",
                                   constraints=[constraints.CustomConstraint("test.missing", "must be known")]),
    }

    def handle_create(self):
        self.resource_id_set("counter")


def resource_mapping():
    return {"Demo::Counter": Counter}


def constraint_mapping():
    return {"test.even": EvenConstraint}
'''


def test_custom_constraints_come_from_constraint_mapping(make_service, tmp_path):
    import pytest

    from stoker.template.errors import TemplateErrors

    plugins = tmp_path / "plugins"
    write(plugins, "counter.py", CONSTRAINED)
    service = make_service(plugin_dirs=[str(plugins)])
    body = "heat_template_version: 2021-04-16\nresources:\n  c:\n    type: Demo::Counter\n    properties: {count: COUNT}\n"
    assert service.create_stack("even", template(body.replace("COUNT", "4"))).state == "CREATE_COMPLETE"
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("odd", template(body.replace("COUNT", "3"), "odd.yaml"))
    assert [str(e) for e in caught.value.errors] == ["odd.yaml:5:25: resources.c.properties.count: 3 is odd; use an even number"]
    body = body.replace("{count: COUNT}", "{count: 2, label: x}")
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("unknown", template(body))
    assert "resources.c.properties.label: must be known" in str(caught.value)


SNAPSHOTTING = '''
from stoker.sdk import properties, resource

BACKUPS = []


class Volume(resource.Resource):
    """A volume that is backed up before deletion when asked."""

    properties_schema = {"size": properties.Schema(properties.Schema.INTEGER, "Size.", default=1)}

    def handle_create(self):
        self.resource_id_set("vol-1")

    def handle_snapshot_delete(self, state):
        BACKUPS.append((self.resource_id, state))
        return "backup-token"

    def check_delete_complete(self, token):
        return token == "backup-token"


def resource_mapping():
    return {"Demo::Volume": Volume}
'''


def test_snapshot_deletion_policy_uses_handle_snapshot_delete(make_service, tmp_path):
    import sys

    import pytest

    from stoker.template.errors import TemplateErrors

    plugins = tmp_path / "plugins"
    write(plugins, "volume.py", SNAPSHOTTING)
    service = make_service(plugin_dirs=[str(plugins)])
    body = "heat_template_version: 2021-04-16\nresources:\n  v:\n    type: Demo::Volume\n    deletion_policy: Snapshot\n"
    service.create_stack("snap", template(body))
    assert service.delete_stack("snap").state == "DELETE_COMPLETE"
    module = next(m for name, m in sys.modules.items() if name.startswith("stoker_plugin_volume_"))
    assert module.BACKUPS == [("vol-1", ("CREATE", "COMPLETE"))]
    with pytest.raises(TemplateErrors, match='"Snapshot" deletion policy not supported by OS::Heat::None'):
        service.create_stack("nosnap", template(body.replace("Demo::Volume", "OS::Heat::None")))


OPTIONAL = '''
from stoker.sdk import resource

try:
    import a_cloud_sdk_that_is_not_installed  # noqa: F401
except ImportError:
    a_cloud_sdk_that_is_not_installed = None


class Optional(resource.Resource):
    """Needs an SDK that may be missing."""


def available_resource_mapping():
    if a_cloud_sdk_that_is_not_installed is None:
        return {}
    return {"Demo::Optional": Optional}


def resource_mapping():
    return {"Demo::Always": Optional}
'''


def test_available_resource_mapping_lets_a_plugin_disable_itself(make_service, tmp_path):
    plugins = tmp_path / "plugins"
    write(plugins, "optional.py", OPTIONAL)
    service = make_service(plugin_dirs=[str(plugins)])
    assert service.registry.problems == []
    assert "Demo::Always" in service.resource_types()
    assert "Demo::Optional" not in service.resource_types()
