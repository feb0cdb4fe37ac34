"""How stoker reaches OpenStack clouds, and whom it acts for there.

Owns:
  ``source``  where a context's cloud comes from (``CloudSource``: the environment's
              ``OS_*``/clouds.yaml by default, another one installed by serve mode) and
              the one openstacksdk connection per context that every client plugin shares
              (``connection_for``); keystoneauth sessions that survive a dropped connection.
  ``trusts``  keystone mode: acting for the user through a Keystone trust (Heat's
              ``deferred_auth_method = trusts``), and the cloud source that does.

Its floor is below ``resources/`` (the OpenStack plugins ask it for their connection) and
above ``sdk/``, the only part of stoker it stands on; serve mode, the API, the workers and
the CLI install its sources and make its trusts. Must not: know resource types, the engine
or the store's tables (``trusts`` is given the store as a collaborator); import
``openstack`` or ``keystoneauth1`` before a cloud is first asked for (the CLI's start-up
never pays for them: tests/acceptance/test_cli_startup.py).
"""
