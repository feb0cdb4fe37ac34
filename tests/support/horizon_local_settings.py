"""Horizon's local_settings for the test cloud: heat-dashboard against stoker (issue 33).

Copied into the Horizon venv as ``openstack_dashboard/local/local_settings.py`` when that venv
is built (tests/support/horizon.py); what changes per run (Keystone's URL, the
secret key, where Horizon may write) comes from the environment the test starts Horizon with.
It is the minimal file docs/dashboard.md ("Keeping Horizon") shows: nothing else is needed for
heat-dashboard to find stoker, which Keystone's catalog names as the orchestration service.
"""

import os

# DEBUG: Horizon serves its own static files and django-compressor works online (no
# `compress --offline` step); fine for a test, not for production.
DEBUG = True
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SECRET_KEY = os.environ["STOKER_HORIZON_SECRET_KEY"]
OPENSTACK_KEYSTONE_URL = os.environ["STOKER_HORIZON_KEYSTONE_URL"]
OPENSTACK_KEYSTONE_DEFAULT_DOMAIN = "Default"
OPENSTACK_KEYSTONE_DEFAULT_ROLE = "member"
# Sessions in signed cookies and a per-process cache: no memcached, no database.
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Everything Horizon writes (compressed CSS, static collection) goes under the run's directory.
STATIC_ROOT = os.path.join(os.environ["STOKER_HORIZON_DATA"], "static")
COMPRESS_ROOT = STATIC_ROOT
TIME_ZONE = "UTC"
# Test only, not for a real Horizon: the test loads pages without a browser, so no style
# sheet is wanted, and compiling Horizon's SCSS (django-compressor's precompiler, run on
# every page with DEBUG) costs 1.4 s a page; without it a page takes 0.2 s. The pages then
# link the .scss files as they are.
COMPRESS_PRECOMPILERS = ()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "horizon": {"handlers": ["console"], "level": "INFO"},
        "openstack_dashboard": {"handlers": ["console"], "level": "INFO"},
        "heat_dashboard": {"handlers": ["console"], "level": "INFO"},
        "django": {"handlers": ["console"], "level": "WARNING"},
    },
}
