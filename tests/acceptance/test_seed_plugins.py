"""Plugins written as the seeds write them (issue 27), each in a plugin directory the real
``stoker`` command loads (``--plugin-dir``, the embedded engine on a SQLite file):

  seed 000  a support status chain that skips a step loads, with a warning
            a RESOLVE rule naming a client plugin nobody registered is refused by
            ``template validate`` and create alike, at the property it resolves
  seed 001  the guide's ``_resolve_attribute``, raising ``InvalidTemplateAttribute(name)``:
            the intended error where the attribute is used, the resource created
            a Heat plugin's ``add_dependencies(self, deps)`` orders the stack
  seed 002  ``properties_groups_schema`` as a property, ``CLIENT_PLUGIN:
            self.client_plugin(...)``: loaded, enforced, shown by name
  seed 004  a default microversion (``OS_<SERVICE>_DEFAULT_MICROVERSION``) does not pin
            a third-party client plugin's calls
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.acceptance.conftest import client_environment

STOKER = str(Path(sys.executable).with_name("stoker"))


def stoker(tmp_path: Path, *args: str, environment: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``stoker --plugin-dir <tmp_path>/plugins args`` on the embedded engine."""
    env = client_environment({"STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}", **(environment or {})})
    return subprocess.run(
        [STOKER, "--plugin-dir", str(tmp_path / "plugins"), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


def plugin(tmp_path: Path, text: str) -> None:
    (tmp_path / "plugins").mkdir(exist_ok=True)
    (tmp_path / "plugins" / "seed.py").write_text(textwrap.dedent(text))


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(textwrap.dedent(text))
    return name


def succeeded(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result


# -- seed 000: the lifecycle is a process ------------------------------------------------

LIFECYCLE = """
from heat.engine import properties, resource, support


class BayModel(resource.Resource):
    \"\"\"As Heat's magnum BayModel: a property hidden straight from SUPPORTED.\"\"\"

    support_status = support.SupportStatus(version='5.0.0')
    properties_schema = {
        'name': properties.Schema(properties.Schema.STRING, 'The name.'),
        'ssh_authorized_key': properties.Schema(
            properties.Schema.STRING, 'The SSH Authorized Key.',
            support_status=support.SupportStatus(
                status=support.HIDDEN, version='6.0.0',
                message='This attribute has been removed in Magnum',
                previous_status=support.SupportStatus(version='5.0.0'))),
    }

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())


class Contributed(resource.Resource):
    \"\"\"A contributed type, never supported, then deprecated.\"\"\"

    support_status = support.SupportStatus(
        status=support.DEPRECATED, version='9.0.0', message='Use Demo::BayModel.',
        previous_status=support.SupportStatus(status=support.UNSUPPORTED, version='7.0.0'))

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())


def resource_mapping():
    return {'Demo::BayModel': BayModel, 'Demo::Contributed': Contributed}
"""


def test_cli_support_status_chain_that_skips_a_step_loads_with_a_warning(tmp_path):
    plugin(tmp_path, LIFECYCLE)
    template = write(
        tmp_path,
        "bay.yaml",
        """
        heat_template_version: 2021-04-16
        resources:
          model: {type: Demo::BayModel, properties: {name: m}}
          old: {type: Demo::Contributed}
        """,
    )

    listed = succeeded(stoker(tmp_path, "resource", "type", "list", "-f", "value"))
    created = succeeded(stoker(tmp_path, "stack", "create", "bays", "-t", template, "--wait"))
    resources = succeeded(stoker(tmp_path, "stack", "resource", "list", "bays", "-f", "json"))

    assert {"Demo::BayModel", "Demo::Contributed"} <= set(listed.stdout.split())
    warnings = [line for line in listed.stderr.splitlines() if "support status" in line]
    assert len(warnings) == 2, listed.stderr
    assert "Demo::BayModel" in warnings[0] and "property ssh_authorized_key: support status SUPPORTED -> HIDDEN skips DEPRECATED" in warnings[0]
    assert "Demo::Contributed" in warnings[1] and "support status UNSUPPORTED -> DEPRECATED skips SUPPORTED" in warnings[1]
    assert all(line.endswith("loaded as written") for line in warnings)
    assert "CREATE_COMPLETE" in created.stdout
    assert {row["resource_status"] for row in json.loads(resources.stdout)} == {"CREATE_COMPLETE"}


# -- seed 000: RESOLVE with a client plugin nobody registered ----------------------------

RESOLVE = """
from heat.engine import properties, resource, translation


class Lookup(resource.Resource):
    \"\"\"Resolves a name with a client plugin that is not there.\"\"\"

    properties_schema = {'thing': properties.Schema(properties.Schema.STRING, 'A name or id.')}

    def translation_rules(self, props):
        return [translation.TranslationRule(
            props, translation.TranslationRule.RESOLVE, ['thing'],
            client_plugin='nosuch', finder='find_thing_by_name_or_id')]

    def handle_create(self):
        self.resource_id_set(self.properties['thing'])


def resource_mapping():
    return {'Demo::Lookup': Lookup}
"""


def test_cli_resolve_rule_naming_an_unregistered_client_plugin_is_refused_at_its_resource(tmp_path):
    plugin(tmp_path, RESOLVE)
    template = write(
        tmp_path,
        "lookup.yaml",
        """
        heat_template_version: 2021-04-16
        resources:
          lookup:
            type: Demo::Lookup
            properties:
              thing: abc
        """,
    )
    unset = write(tmp_path, "unset.yaml", "heat_template_version: 2021-04-16\nresources:\n  lookup: {type: Demo::Lookup}\n")

    validated = stoker(tmp_path, "template", "validate", "-t", template)
    created = stoker(tmp_path, "stack", "create", "lookups", "-t", template, "--wait")
    stacks = succeeded(stoker(tmp_path, "stack", "list", "-f", "value"))

    expected = (
        "ERROR: lookup.yaml:7:14: resources.lookup.properties.thing: Translation rule Resolve thing "
        "names client plugin 'nosuch', which is not registered"
    )
    for result in (validated, created):
        assert result.returncode == 1, result.stdout
        assert result.stderr.strip().splitlines() == [expected]
    assert stacks.stdout.strip() == ""
    # Nothing to resolve, nothing refused (create would not meet the rule either).
    succeeded(stoker(tmp_path, "template", "validate", "-t", unset))


# -- seed 001: the guide's _resolve_attribute ---------------------------------------------

GUIDE_ATTRIBUTE = """
from heat.common import exception
from heat.engine import attributes, resource


class _Physical:
    foo = 'the foo'


class Guide(resource.Resource):
    \"\"\"Resolves its attributes as the plugin guide's example does.\"\"\"

    attributes_schema = {
        'foo': attributes.Schema('The foo attribute', type=attributes.Schema.STRING),
        'bar': attributes.Schema('The bar attribute', type=attributes.Schema.STRING),
    }

    def handle_create(self):
        self.resource_id_set('g1')

    def _example_get_physical_resource(self):
        return _Physical()

    def _resolve_attribute(self, name):
        # _example_get_physical_resource is just an example and is not
        # defined in the Resource class
        phys_resource = self._example_get_physical_resource()
        if phys_resource:
            if not hasattr(phys_resource, name):
                # this is usually not needed, but this is a simple
                # example
                raise exception.InvalidTemplateAttribute(name)
            return getattr(phys_resource, name)
        return None


def resource_mapping():
    return {'Demo::Guide': Guide}
"""


def test_cli_guide_resolve_attribute_error_is_told_where_the_attribute_is_used(tmp_path):
    plugin(tmp_path, GUIDE_ATTRIBUTE)
    template = write(
        tmp_path,
        "guide.yaml",
        """
        heat_template_version: 2021-04-16
        resources:
          g: {type: Demo::Guide}
        outputs:
          foo: {value: {get_attr: [g, foo]}}
          bar: {value: {get_attr: [g, bar]}}
        """,
    )

    succeeded(stoker(tmp_path, "stack", "create", "guided", "-t", template, "--wait"))
    resources = json.loads(succeeded(stoker(tmp_path, "stack", "resource", "list", "guided", "-f", "json")).stdout)
    outputs = json.loads(succeeded(stoker(tmp_path, "stack", "output", "show", "guided", "--all", "-f", "json")).stdout)

    assert [(row["resource_name"], row["resource_status"]) for row in resources] == [("g", "CREATE_COMPLETE")]
    assert outputs["foo"]["output_value"] == "the foo"
    assert outputs["bar"]["output_value"] is None
    assert outputs["bar"]["output_error"] == "The Referenced Attribute (g bar) is incorrect."


# -- seed 001: a Heat plugin's add_dependencies ----------------------------------------------

ADD_DEPENDENCIES = """
from heat.engine import properties, resource


class Subnet(resource.Resource):
    \"\"\"A subnet of a network.\"\"\"

    NETWORK = 'network'
    properties_schema = {NETWORK: properties.Schema(properties.Schema.STRING, 'The network.')}

    def handle_create(self):
        self.resource_id_set('subnet-' + self.name)


class Port(resource.Resource):
    \"\"\"A port that waits for the subnets of its network, the way Heat's ports do.\"\"\"

    NETWORK = 'network'
    properties_schema = {NETWORK: properties.Schema(properties.Schema.STRING, 'The network.')}

    def add_dependencies(self, deps):
        super(Port, self).add_dependencies(deps)
        # Depend on any Subnet in this template with the same network as this one.
        for res in self.stack.values():
            if res.has_interface('Demo::Subnet'):
                try:
                    dep_network = res.properties.get(Subnet.NETWORK)
                    network = self.properties[self.NETWORK]
                except (ValueError, TypeError):
                    continue
                if dep_network == network:
                    deps += (self, res)

    def handle_create(self):
        self.resource_id_set('port-' + self.name)


class Net(resource.Resource):
    \"\"\"A network.\"\"\"

    def handle_create(self):
        self.resource_id_set('net-' + self.name)


def resource_mapping():
    return {'Demo::Subnet': Subnet, 'Demo::Port': Port, 'Demo::Net': Net}
"""


def test_cli_heat_plugin_add_dependencies_orders_the_stack(tmp_path):
    plugin(tmp_path, ADD_DEPENDENCIES)
    template = write(
        tmp_path,
        "ports.yaml",
        """
        heat_template_version: 2021-04-16
        parameters:
          network: {type: string, default: blue}
        resources:
          b_subnet: {type: Demo::Subnet, properties: {network: blue}}
          c_subnet: {type: Demo::Subnet, properties: {network: red}}
          d_net: {type: Demo::Net}
          e_subnet: {type: Demo::Subnet, properties: {network: {get_resource: d_net}}}
          y_port: {type: Demo::Port, properties: {network: {get_resource: d_net}}}
          z_port: {type: Demo::Port, properties: {network: {get_param: network}}}
        """,
    )

    plan = json.loads(succeeded(stoker(tmp_path, "stack", "create", "ports", "-t", template, "--dry-run", "-f", "json")).stdout)
    succeeded(stoker(tmp_path, "stack", "create", "ports", "-t", template, "--wait"))
    events = json.loads(succeeded(stoker(tmp_path, "stack", "event", "list", "ports", "-f", "json")).stdout)

    # Without the plugin's edge the port, a root of the stated graph, comes first.
    planned = [change["resource_name"] for change in plan["resource_changes"]["added"]]
    assert planned.index("z_port") > planned.index("b_subnet")
    states = [(event["resource_name"], event["resource_status"]) for event in events]
    assert states.index(("z_port", "CREATE_IN_PROGRESS")) > states.index(("b_subnet", "CREATE_COMPLETE"))
    # A get_resource reads as Heat's properties read it before the create: the name.
    assert states.index(("y_port", "CREATE_IN_PROGRESS")) > states.index(("e_subnet", "CREATE_COMPLETE"))


# -- seed 002: properties_groups_schema as a property; seed 004: a third party's client ---------

GROUPS = """
from heat.engine import properties, properties_group, resource
from stoker.sdk.clients import ClientPlugin


class DemoClientPlugin(ClientPlugin):
    \"\"\"A third party's service, whose API offers 1.2, 2.0 and 3.0.\"\"\"

    name = 'demo'
    supported_versions = ('1.2', '2.0', '3.0')

    def create_client(self, version):
        return {'version': version}

    def get_min_microversion(self):
        return '1.2'

    def get_max_microversion(self):
        return '3.0'


class Keyed(resource.Resource):
    \"\"\"Seed 002's API_VERSIONS group, written as the seed writes it.\"\"\"

    default_client_name = 'demo'
    properties_schema = {
        'a': properties.Schema(properties.Schema.STRING, 'Only for API 1.2 and 2.0.'),
        'b': properties.Schema(properties.Schema.STRING, 'Only for API 3.0.'),
    }

    @property
    def properties_groups_schema(self):
        return [
            {properties_group.API_VERSIONS: {
                properties_group.CLIENT_PLUGIN: self.client_plugin('demo'),
                properties_group.VERSIONS: ['1.2', '2.0'],
                properties_group.PROPERTIES: [['a']]}},
            {properties_group.API_VERSIONS: {
                properties_group.CLIENT_PLUGIN: self.client_plugin('demo'),
                properties_group.VERSIONS: ['3.0'],
                properties_group.PROPERTIES: [['b']]}},
        ]

    def handle_create(self):
        # The version every call of this resource's client speaks.
        self.resource_id_set('demo-' + self.client()['version'])


class ByClass(resource.Resource):
    \"\"\"The same group, naming the client plugin by its class.\"\"\"

    properties_schema = {'a': properties.Schema(properties.Schema.STRING, 'Only for API 1.2 and 2.0.')}
    properties_groups_schema = [
        {properties_group.API_VERSIONS: {
            properties_group.CLIENT_PLUGIN: DemoClientPlugin,
            properties_group.VERSIONS: ['1.2', '2.0'],
            properties_group.PROPERTIES: [['a']]}},
    ]


def client_mapping():
    return {'demo': DemoClientPlugin}


def resource_mapping():
    return {'Demo::Keyed': Keyed, 'Demo::ByClass': ByClass}
"""

KEYED = """
heat_template_version: 2021-04-16
resources:
  keyed:
    type: Demo::Keyed
    properties: {{{property}: x}}
"""


def test_cli_properties_groups_schema_property_with_client_plugin_as_seed_002_writes_it(tmp_path):
    plugin(tmp_path, GROUPS)
    given_a = write(tmp_path, "a.yaml", KEYED.format(property="a"))
    given_b = write(tmp_path, "b.yaml", KEYED.format(property="b"))

    listed = succeeded(stoker(tmp_path, "resource", "type", "list", "-f", "value"))
    shown = {
        name: json.loads(succeeded(stoker(tmp_path, "resource", "type", "show", name, "-f", "json")).stdout)
        for name in ("Demo::Keyed", "Demo::ByClass")
    }
    refused = stoker(tmp_path, "stack", "create", "with-a", "-t", given_a, "--wait")
    succeeded(stoker(tmp_path, "stack", "create", "with-b", "-t", given_b, "--wait"))

    assert {"Demo::Keyed", "Demo::ByClass"} <= set(listed.stdout.split())
    assert "plugin" not in listed.stderr, listed.stderr
    assert shown["Demo::Keyed"]["properties_groups"] == [
        {"api_versions": {"client_plugin": "demo", "versions": ["1.2", "2.0"], "properties": [["a"]]}},
        {"api_versions": {"client_plugin": "demo", "versions": ["3.0"], "properties": [["b"]]}},
    ]
    assert shown["Demo::ByClass"]["properties_groups"] == [
        {"api_versions": {"client_plugin": "demo", "versions": ["1.2", "2.0"], "properties": [["a"]]}},
    ]
    assert refused.returncode == 1
    assert (
        "resources.keyed.properties.a: property 'a' requires API version 1.2 or 2.0 of client 'demo'; "
        "the negotiated version is 3.0"
    ) in refused.stderr


def test_cli_default_microversion_does_not_pin_a_third_party_client_plugin(tmp_path):
    """Seed 004: ``OS_DEMO_DEFAULT_MICROVERSION`` is a REST layer's default; the demo
    plugin's client still speaks the newest version both sides know, so the property
    only 3.0 offers is accepted and the resource's client speaks 3.0."""
    plugin(tmp_path, GROUPS)
    given_b = write(tmp_path, "b.yaml", KEYED.format(property="b"))
    pinned = {"OS_DEMO_DEFAULT_MICROVERSION": "1.2"}

    succeeded(stoker(tmp_path, "stack", "create", "with-b", "-t", given_b, "--wait", environment=pinned))
    resources = json.loads(succeeded(stoker(tmp_path, "stack", "resource", "list", "with-b", "-f", "json", environment=pinned)).stdout)

    assert [(row["resource_status"], row["physical_resource_id"]) for row in resources] == [("CREATE_COMPLETE", "demo-3.0")]
