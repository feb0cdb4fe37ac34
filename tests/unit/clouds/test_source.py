"""Where a context's cloud comes from (clouds/source.py): openstacksdk's own config loader
reads a real clouds.yaml; a misconfiguration names the setting to fix and never a
credential. Nothing here talks to a cloud."""

from __future__ import annotations

import pytest

from stoker.clouds.source import (
    CloudConfigurationError,
    EnvironmentCloudSource,
    connection_for,
    set_cloud_source,
)

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
"""


class _Context:
    """A stack context: the connection is per context object."""


@pytest.fixture
def clouds_yaml(tmp_path):
    path = tmp_path / "clouds.yaml"
    path.write_text(CLOUDS_YAML)
    yield {"OS_CLIENT_CONFIG_FILE": str(path), "OS_CLOUD": "pinned"}
    set_cloud_source(None)


def test_cloud_source_error_names_the_fix_and_no_credentials(clouds_yaml):
    set_cloud_source(EnvironmentCloudSource({**clouds_yaml, "OS_CLOUD": "missing"}))

    with pytest.raises(CloudConfigurationError) as raised:
        connection_for(_Context())

    text = str(raised.value)
    assert "cloud 'missing' of clouds.yaml (OS_CLOUD)" in text
    assert "set OS_CLOUD to a cloud in clouds.yaml" in text
    assert "s3cret" not in text


def test_cloud_source_without_any_cloud_says_how_to_configure_one():
    with pytest.raises(CloudConfigurationError) as raised:
        EnvironmentCloudSource({}).cloud_region(_Context())

    assert str(raised.value) == (
        "No OpenStack cloud is configured for resource types that need one "
        "(set OS_CLOUD to a cloud in clouds.yaml, or OS_AUTH_URL and the other OS_* variables)"
    )


def test_cloud_source_connection_is_one_per_context(clouds_yaml):
    """Every client plugin of a context (a stack action, a validation) shares its
    connection; nothing is sent to the cloud until a call is made."""
    set_cloud_source(EnvironmentCloudSource(clouds_yaml))
    context = _Context()

    assert connection_for(context) is connection_for(context)
