"""The OpenStack client plugins' pure logic: classifying openstacksdk's own exception
classes, the finders' "none" and "several" rules, and the default microversion read from a
real clouds.yaml (openstacksdk's config loader; nothing here talks to a cloud)."""

from __future__ import annotations

import pytest
import requests
from openstack import exceptions as sdk_exceptions

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack import client_mapping
from stoker.resources.openstack.client_plugin import AmbiguousNameError
from stoker.resources.openstack.neutron.client_plugin import NeutronClientPlugin
from stoker.resources.openstack.nova.client_plugin import NovaClientPlugin
from stoker.sdk.exceptions import EntityNotFound


def sdk_error(status: int) -> BaseException:
    try:
        sdk_exceptions.raise_from_response(_http_error_response(status))
    except sdk_exceptions.SDKException as error:
        return error
    raise AssertionError("raise_from_response raised nothing")


def _http_error_response(status: int) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.url = "http://127.0.0.1/v2.0/networks"
    response.headers["Content-Type"] = "application/json"
    response._content = b'{"NeutronError": {"message": "refused"}}'
    return response


def test_client_plugins_have_heat_names():
    assert set(client_mapping()) == {
        "nova",
        "neutron",
        "cinder",
        "glance",
        "keystone",
        "placement",
        "barbican",
        "designate",
        "swift",
        "octavia",
        "zaqar",
        "aodh",
        "manila",
        "ironic",
        "magnum",
        "trove",
        "blazar",
        "zun",
        "mistral",
    }


@pytest.mark.parametrize(
    ("status", "not_found", "conflict", "over_limit"),
    [(404, True, False, False), (409, False, True, False), (413, False, False, True), (429, False, False, True), (400, False, False, False), (500, False, False, False)],
)
def test_client_plugin_classifies_openstacksdk_errors(status, not_found, conflict, over_limit):
    error = sdk_error(status)
    plugin = NeutronClientPlugin()

    assert (plugin.is_not_found(error), plugin.is_conflict(error), plugin.is_over_limit(error)) == (not_found, conflict, over_limit)


def test_client_plugin_ignore_not_found_swallows_only_not_found():
    plugin = NeutronClientPlugin()

    with plugin.ignore_not_found:
        raise sdk_error(404)
    with pytest.raises(sdk_exceptions.ConflictException), plugin.ignore_not_found:
        raise sdk_error(409)


def _finder_raising(error: BaseException):
    def find(name_or_id, ignore_missing):
        assert ignore_missing is False
        raise error

    return find


def test_client_plugin_find_names_several_matches_as_ambiguous():
    plugin = NeutronClientPlugin()
    duplicate = sdk_exceptions.DuplicateResource("More than one Network exists with the name 'private'.")

    with pytest.raises(AmbiguousNameError) as raised:
        plugin.find("network", "private", _finder_raising(duplicate))

    assert str(raised.value) == (
        "Multiple physical resources were found with name (private). "
        "(several networks have this name; give the network's id instead)"
    )


def test_client_plugin_find_reports_no_match_as_entity_not_found():
    plugin = NeutronClientPlugin()

    with pytest.raises(EntityNotFound) as raised:
        plugin.find("network", "nowhere", _finder_raising(sdk_exceptions.NotFoundException("No Network found for nowhere")))

    assert str(raised.value) == "The network (nowhere) could not be found."


def test_client_plugin_find_lets_other_errors_through():
    plugin = NeutronClientPlugin()

    with pytest.raises(sdk_exceptions.HttpException):
        plugin.find("network", "x", _finder_raising(sdk_error(500)))


CLOUDS_YAML = """
clouds:
  pinned:
    auth:
      auth_url: http://127.0.0.1:1/v3
      username: someone
      password: s3cret-do-not-show
      project_name: p
      user_domain_name: Default
      project_domain_name: Default
    compute_default_microversion: "2.60"
"""


class _Context:
    """A stack context: the connection is per context object."""


@pytest.fixture
def clouds_yaml(tmp_path):
    path = tmp_path / "clouds.yaml"
    path.write_text(CLOUDS_YAML)
    yield {"OS_CLIENT_CONFIG_FILE": str(path), "OS_CLOUD": "pinned"}
    set_cloud_source(None)


def test_client_plugin_default_microversion_comes_from_clouds_yaml(clouds_yaml):
    set_cloud_source(EnvironmentCloudSource(clouds_yaml))
    plugin = NovaClientPlugin(_Context(), environ={})

    assert plugin.default_microversion() == ("2.60", "compute_default_microversion in clouds.yaml")


def test_client_plugin_default_microversion_environment_beats_clouds_yaml(clouds_yaml):
    set_cloud_source(EnvironmentCloudSource(clouds_yaml))
    plugin = NovaClientPlugin(_Context(), environ={"OS_COMPUTE_DEFAULT_MICROVERSION": "2.53"})

    assert plugin.default_microversion() == ("2.53", "the environment variable OS_COMPUTE_DEFAULT_MICROVERSION")


def test_client_plugins_share_one_connection_per_cloud_configuration(clouds_yaml, tmp_path):
    """One authentication and one version discovery per cloud and user, not per stack
    action: contexts configured alike share the connection; another user's do not."""
    another = tmp_path / "another.yaml"
    another.write_text(CLOUDS_YAML.replace("username: someone", "username: another"))

    class PerContext:
        def cloud_region(self, context):
            return EnvironmentCloudSource(context.environ).cloud_region(context)

    set_cloud_source(PerContext())
    first, second, third = _Context(), _Context(), _Context()
    first.environ = second.environ = clouds_yaml
    third.environ = {**clouds_yaml, "OS_CLIENT_CONFIG_FILE": str(another)}

    assert NovaClientPlugin(first).connection is NeutronClientPlugin(first).connection
    assert NovaClientPlugin(second).connection is NovaClientPlugin(first).connection
    assert NovaClientPlugin(third).connection is not NovaClientPlugin(first).connection


def test_neutron_objects_read_as_neutron_fields_with_none_for_missing_ones():
    from openstack.network.v2.network import Network

    from stoker.resources.openstack.neutron.client_plugin import as_dict

    shown = as_dict(Network.existing(id="n1", subnets=[], admin_state_up=True, project_id="p1", status="ACTIVE"))

    # openstacksdk names these subnet_ids and is_admin_state_up; Heat's attributes use Neutron's names.
    assert (shown["subnets"], shown["admin_state_up"], shown["status"]) == ([], True, "ACTIVE")
    assert shown["tenant_id"] == "p1"
    assert shown["mtu"] is None and "location" not in shown


def test_aodh_alarm_delete_is_sent_again_when_aodh_got_no_answer_behind_it():
    """Aodh deletes an alarm's trust in Keystone first; when Keystone dropped that request
    Aodh answers 500 and keeps the alarm, so the (idempotent) DELETE is sent again. Other
    500s are not retried."""
    from stoker.resources.openstack.aodh.client_plugin import AodhClientPlugin, AodhRequestError

    dropped = AodhRequestError("DELETE", "/alarms/a", 500, '{"faultstring": "Unable to establish connection to http://k/v3/OS-TRUST/trusts/t"}')
    broken = AodhRequestError("DELETE", "/alarms/a", 500, '{"faultstring": "boom"}')
    answers: list[BaseException | None] = [dropped, None]

    class Aodh(AodhClientPlugin):
        def request(self, method, path, json=None):
            answer = answers.pop(0)
            if answer is not None:
                raise answer

    Aodh().delete_alarm("a")
    assert answers == []
    answers[:] = [broken, None]
    with pytest.raises(AodhRequestError, match="boom"):
        Aodh().delete_alarm("a")
    assert answers == [None]
