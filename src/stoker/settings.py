"""Settings, read from the environment (``STOKER_*``) with command-line overrides.

Units are in the names. Defaults follow Heat where Heat has the same knob.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# Where agents reach the API when nothing says otherwise: Heat's port on loopback.
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8004"
# The embedded engine's project when nothing says otherwise: the one the stoker
# command uses against a server whose URL names none.
DEFAULT_PROJECT = "default"


def default_database_url() -> str:
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'stoker' / 'stoker.sqlite'}"


def store_directory(database_url: str) -> Path:
    """Where the files that belong with a store live (its encryption key, the embedded
    engine's log): beside an SQLite database file; otherwise stoker's data directory."""
    from sqlalchemy.engine import make_url

    try:
        url = make_url(database_url)
    except Exception:  # noqa: BLE001 - an odd URL is the store's error to report
        url = None
    if url is not None and url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return Path(url.database).expanduser().resolve().parent
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "stoker"


@dataclass
class Settings:
    database_url: str = field(default_factory=default_database_url)
    plugin_dirs: list[str] = field(default_factory=list)
    # Plugin handler calls running at once (threads).
    handler_threads: int = 8
    # Resources in flight at once in one stack action.
    max_in_flight: int = 1000
    # Plugin handler calls of one stack tree (a root stack and all its nested stacks)
    # running at once, so one tree never holds every handler thread
    # (STOKER_MAX_TREE_HANDLER_CALLS; 0: half of handler_threads, at least 1; -1: no limit).
    max_tree_handler_calls: int = 0
    # Heat's max_template_size.
    max_template_bytes: int = 512 * 1024
    # Heat's max_resources_per_stack (-1: no limit): the resources of a root stack and
    # of all its nested stacks together, as Heat counts them (engine/trees.py).
    max_resources_per_stack: int = 1000
    # Heat's max_events_per_stack: older events are pruned after each action (-1: keep all).
    max_events_per_stack: int = 1000
    # Heat's max_nested_stack_depth: how deep nested stacks (and template resources) go.
    max_nested_depth: int = 5
    # The most one value made from a template may take (a function's result, a stored
    # property, attribute or output), in bytes: Heat's max_json_body_size.
    max_value_bytes: int = 1024 * 1024
    # A template's size with its YAML aliases written out, in bytes (4 x max_template_bytes).
    max_template_expanded_bytes: int = 2 * 1024 * 1024
    # yaql, as Heat's [yaql] limit_iterators and memory_quota (bytes); then what Heat
    # lacks: the wall time of one evaluation, and the worker processes evaluating them
    # (their count, and each one's address space in bytes).
    yaql_limit_iterators: int = 200
    yaql_memory_quota_bytes: int = 10_000
    yaql_time_limit_s: float = 1.0
    yaql_workers: int = 2
    yaql_worker_memory_bytes: int = 256 * 1024 * 1024
    # abandon and adopt, off by default as in Heat (enable_stack_abandon/adopt).
    enable_stack_abandon: bool = False
    enable_stack_adopt: bool = False
    # OS::Glance::Image / WebImage may have Glance fetch image data from an http(s) URL
    # (web-download import). Off by default: Glance then fetches whatever address a
    # template names, from inside the cloud (STOKER_ALLOW_IMAGE_URLS).
    allow_image_urls: bool = False
    # AWS::CloudFormation::Stack may have this server fetch its TemplateURL over http(s)
    # when the request's files do not hold it (Heat's urlfetch). Off by default: the
    # server then fetches whatever address a template names (STOKER_ALLOW_TEMPLATE_URLS).
    allow_template_urls: bool = False
    # The cloud of clouds.yaml the OpenStack resource types act in (``--os-cloud``,
    # STOKER_OS_CLOUD); without it, OS_CLOUD or the OS_* variables, as the openstack
    # command reads them. In serve mode: the cloud the server acts in for every request.
    os_cloud: str | None = None
    # The project the embedded engine (the stoker command without --url) acts in: its
    # stacks are made in it, and names are found in it only (STOKER_PROJECT, --project).
    # A server sharing the store shows them at /v1/<project>.
    project: str = DEFAULT_PROJECT
    # Fernet keys sealing secret resource data at rest, the first one sealing
    # (STOKER_ENCRYPTION_KEY, comma-separated). Without any: a key file beside the SQLite
    # database, created on first need (store/sealing.py).
    encryption_keys: list[str] = field(default_factory=list)
    # Heat's encrypt_parameters_and_properties, on by default: the stored parameters,
    # environments, resource properties and attributes, snapshots and deployment inputs
    # are sealed with those keys (STOKER_ENCRYPT_PARAMETERS_AND_PROPERTIES=false: not).
    encrypt_parameters_and_properties: bool = True
    # Where agents (servers signalling a wait condition handle, cfn-signal, curl) reach
    # this server's API: the base of the signal URLs stoker hands out (STOKER_PUBLIC_URL).
    # Unset, `stoker serve` uses the address it serves on, and everything else (the
    # embedded engine, `stoker worker`) DEFAULT_PUBLIC_URL.
    public_url: str | None = None
    # The region this server orchestrates (STOKER_REGION_NAME): an OS::Heat::Stack whose
    # context names it is a nested stack here; another region is refused, as Heat
    # refuses a region without an orchestration endpoint.
    region_name: str = "RegionOne"
    # Heat's environment_dir: a directory of environment files whose resource_registry
    # lies beneath every stack's environment, read once at start in sorted name order
    # (STOKER_ENVIRONMENT_DIR; none by default).
    environment_dir: str | None = None
    # Heat's loadbalancer_template: a template file for AWS::ElasticLoadBalancing::
    # LoadBalancer's nested stack instead of Heat's built-in HAProxy one
    # (STOKER_LOADBALANCER_TEMPLATE; none by default).
    loadbalancer_template: str | None = None
    # Heat's hidden_stack_tags: stacks carrying any of these tags are left out of stack
    # lists unless asked for with show_hidden (STOKER_HIDDEN_STACK_TAGS, comma-separated;
    # set it empty to hide nothing).
    hidden_stack_tags: list[str] = field(default_factory=lambda: ["data-processing-cluster"])
    # Seconds between an API server's reports that its engine is alive (Heat's
    # periodic_interval): GET /services shows an engine down after two missed ones.
    service_report_interval_s: int = 60
    # Seconds between the comments an idle event stream (GET .../events/stream) sends so
    # that proxies keep it open (STOKER_EVENT_STREAM_HEARTBEAT_S).
    event_stream_heartbeat_s: float = 15.0
    # Event streams one project may hold open at once on a server; one more is refused
    # with 429 (STOKER_MAX_EVENT_STREAMS_PER_PROJECT; -1: no limit). The streams of one
    # stack share one poll of the store, so the limit bounds connections, not queries.
    max_event_streams_per_project: int = 100
    # ``stoker serve``'s connections (api/connections.py): seconds a client has to send
    # its request headers (from connecting, or from the previous response), and then its
    # body; connections open at once (one more evicts the slowest still sending, or is
    # closed; kept below the process's open-file limit); the listening socket's backlog,
    # which is also how many connections asyncio accepts at a time;
    # seconds an idle keep-alive connection stays open (uvicorn's timeout_keep_alive).
    http_header_timeout_s: float = 10.0
    http_body_timeout_s: float = 60.0
    http_max_connections: int = 1000
    http_backlog: int = 128
    http_keep_alive_s: int = 5
    # Who may call ``stoker serve`` (STOKER_AUTH_MODE, ``--auth-mode``; docs/auth.md):
    # ``none`` (no authentication, loopback only), ``token`` (static tokens from
    # auth_tokens_file) or ``keystone`` (tokens validated by keystonemiddleware).
    auth_mode: str = "none"
    # Origins other than the server's own whose web pages may call the API from a browser
    # (CORS, as Heat's [cors] allowed_origin through oslo.middleware): exact origins
    # such as ``https://ops.example.com`` (STOKER_CORS_ALLOWED_ORIGINS, comma-separated).
    # None by default: the dashboard, served from the same origin, needs none.
    cors_allowed_origins: list[str] = field(default_factory=list)
    # The static tokens of ``token`` mode: YAML, token -> {project_id, user_id, roles}
    # (STOKER_AUTH_TOKENS_FILE).
    auth_tokens_file: str | None = None
    # An oslo.config file whose [keystone_authtoken] section configures keystonemiddleware
    # as in heat.conf (STOKER_KEYSTONE_CONFIG_FILE); keystone_authtoken options given
    # one by one (STOKER_KEYSTONE_<OPTION>, e.g. STOKER_KEYSTONE_AUTH_URL) override it.
    keystone_config_file: str | None = None
    keystone_authtoken: dict[str, str] = field(default_factory=dict)
    # Heat's allow_trusts_redelegation: the trusts keystone mode makes for stacks let
    # stoker's service user delegate them on, as Aodh needs for an alarm whose action is
    # ``trust+<url>`` (STOKER_ALLOW_TRUSTS_REDELEGATION; off by default, as in Heat).
    allow_trusts_redelegation: bool = False
    # Heat's stack user domain: the Keystone domain (its id or name; Heat's
    # stack_user_domain_id / stack_user_domain_name) in which stacks make their users,
    # each stack's in a project of its own there, as the domain's admin
    # ``stack_domain_admin`` (a user of that domain with its admin role) with
    # ``stack_domain_admin_password`` (STOKER_STACK_USER_DOMAIN, STOKER_STACK_DOMAIN_ADMIN,
    # STOKER_STACK_DOMAIN_ADMIN_PASSWORD). Unset: a stack's users are made in its own
    # project with its own credentials (Heat's legacy placement). The password is a
    # secret: never logged, shown or put into an error (not even in this object's repr).
    stack_user_domain: str | None = None
    stack_domain_admin: str | None = None
    stack_domain_admin_password: str | None = field(default=None, repr=False)
    # Where ``stoker serve`` runs stack actions (STOKER_JOB_QUEUE, ``--job-queue``):
    # ``local``, as tasks on its own event loop; or ``procrastinate``, as jobs in the
    # PostgreSQL store's procrastinate queue, run by ``stoker worker`` processes (and by
    # the server itself with ``--with-worker``). The CLI's embedded mode ignores it.
    job_queue: str = "local"
    # ``stoker worker``: stack jobs one worker runs at once (STOKER_WORKER_CONCURRENCY),
    # and how long SIGTERM waits for running actions before handing them back.
    serve_with_worker: bool = False
    # Seconds a stack's lock stays held without its holder's heartbeat (STOKER_LOCK_LEASE_S):
    # how soon another worker resumes the action of one that died.
    lock_lease_s: int = 30
    worker_concurrency: int = 10
    worker_shutdown_timeout_s: int = 30
    # Seconds a nested stack's job may wait in the queue for a worker before its parent's
    # worker runs it itself (STOKER_CHILD_QUEUE_WAIT_S; workers.ChildJobs).
    child_queue_wait_s: float = 2.0
    # Nested stacks' jobs one stack tree may have on the queue (waiting or running) at
    # once, over all workers (STOKER_MAX_JOBS_PER_TREE; -1: no limit). A tree's further
    # nested stacks run in their parent's worker, so a huge tree holds at most this many
    # worker slots besides its root's, and other projects' jobs still find free ones.
    max_jobs_per_tree: int = 4
    # An operator's oslo.policy file (YAML or JSON) overriding Heat's policy defaults
    # (STOKER_POLICY_FILE; Heat's [oslo_policy] policy_file).
    policy_file: str | None = None

    def stack_domain(self) -> dict[str, str]:
        """The stack user domain's settings, as client plugins get them (empty when unset).
        Half of them is an operator's mistake, said without the password's value."""
        given = {
            "stack_user_domain": self.stack_user_domain,
            "stack_domain_admin": self.stack_domain_admin,
            "stack_domain_admin_password": self.stack_domain_admin_password,
        }
        if not any(given.values()):
            return {}
        missing = [name for name, value in given.items() if not value]
        if missing:
            variables = ", ".join(f"STOKER_{name.upper()}" for name in missing)
            raise ValueError(f"the stack user domain needs {variables} too (STOKER_STACK_USER_DOMAIN, STOKER_STACK_DOMAIN_ADMIN and STOKER_STACK_DOMAIN_ADMIN_PASSWORD go together)")
        return {name: str(value) for name, value in given.items()}

    def tree_handler_calls(self) -> int:
        """``max_tree_handler_calls`` with its default worked out (-1: no limit)."""
        if self.max_tree_handler_calls == 0:
            return max(1, self.handler_threads // 2)
        return self.max_tree_handler_calls

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        settings = cls()
        if env.get("STOKER_DATABASE_URL"):
            settings.database_url = env["STOKER_DATABASE_URL"]
        if env.get("STOKER_PUBLIC_URL"):
            settings.public_url = env["STOKER_PUBLIC_URL"]
        if env.get("STOKER_PROJECT"):
            settings.project = env["STOKER_PROJECT"]
        if env.get("STOKER_REGION_NAME"):
            settings.region_name = env["STOKER_REGION_NAME"]
        if env.get("STOKER_ENVIRONMENT_DIR"):
            settings.environment_dir = env["STOKER_ENVIRONMENT_DIR"]
        if env.get("STOKER_LOADBALANCER_TEMPLATE"):
            settings.loadbalancer_template = env["STOKER_LOADBALANCER_TEMPLATE"]
        if env.get("STOKER_OS_CLOUD"):
            settings.os_cloud = env["STOKER_OS_CLOUD"]
        if env.get("STOKER_ENCRYPTION_KEY"):
            settings.encryption_keys = [k for k in env["STOKER_ENCRYPTION_KEY"].split(",") if k.strip()]
        if "STOKER_HIDDEN_STACK_TAGS" in env:
            settings.hidden_stack_tags = [t.strip() for t in env["STOKER_HIDDEN_STACK_TAGS"].split(",") if t.strip()]
        if env.get("STOKER_JOB_QUEUE"):
            settings.job_queue = env["STOKER_JOB_QUEUE"]
        if env.get("STOKER_AUTH_MODE"):
            settings.auth_mode = env["STOKER_AUTH_MODE"]
        if env.get("STOKER_CORS_ALLOWED_ORIGINS"):
            settings.cors_allowed_origins = [origin.strip() for origin in env["STOKER_CORS_ALLOWED_ORIGINS"].split(",") if origin.strip()]
        if env.get("STOKER_AUTH_TOKENS_FILE"):
            settings.auth_tokens_file = env["STOKER_AUTH_TOKENS_FILE"]
        if env.get("STOKER_POLICY_FILE"):
            settings.policy_file = env["STOKER_POLICY_FILE"]
        for name, variable in (
            ("stack_user_domain", "STOKER_STACK_USER_DOMAIN"),
            ("stack_domain_admin", "STOKER_STACK_DOMAIN_ADMIN"),
            ("stack_domain_admin_password", "STOKER_STACK_DOMAIN_ADMIN_PASSWORD"),
        ):
            if env.get(variable):
                setattr(settings, name, env[variable])
        if env.get("STOKER_KEYSTONE_CONFIG_FILE"):
            settings.keystone_config_file = env["STOKER_KEYSTONE_CONFIG_FILE"]
        settings.keystone_authtoken = {
            variable.removeprefix("STOKER_KEYSTONE_").lower(): value
            for variable, value in env.items()
            if variable.startswith("STOKER_KEYSTONE_") and variable != "STOKER_KEYSTONE_CONFIG_FILE" and value
        }
        if env.get("STOKER_PLUGIN_DIRS"):
            settings.plugin_dirs = [d for d in env["STOKER_PLUGIN_DIRS"].split(os.pathsep) if d]
        for name, variable in (
            ("handler_threads", "STOKER_HANDLER_THREADS"),
            ("max_in_flight", "STOKER_MAX_IN_FLIGHT"),
            ("max_tree_handler_calls", "STOKER_MAX_TREE_HANDLER_CALLS"),
            ("max_template_bytes", "STOKER_MAX_TEMPLATE_BYTES"),
            ("max_resources_per_stack", "STOKER_MAX_RESOURCES_PER_STACK"),
            ("max_events_per_stack", "STOKER_MAX_EVENTS_PER_STACK"),
            ("max_nested_depth", "STOKER_MAX_NESTED_DEPTH"),
            ("max_value_bytes", "STOKER_MAX_VALUE_BYTES"),
            ("max_template_expanded_bytes", "STOKER_MAX_TEMPLATE_EXPANDED_BYTES"),
            ("yaql_limit_iterators", "STOKER_YAQL_LIMIT_ITERATORS"),
            ("yaql_memory_quota_bytes", "STOKER_YAQL_MEMORY_QUOTA_BYTES"),
            ("yaql_workers", "STOKER_YAQL_WORKERS"),
            ("yaql_worker_memory_bytes", "STOKER_YAQL_WORKER_MEMORY_BYTES"),
            ("service_report_interval_s", "STOKER_SERVICE_REPORT_INTERVAL_S"),
            ("worker_concurrency", "STOKER_WORKER_CONCURRENCY"),
            ("max_jobs_per_tree", "STOKER_MAX_JOBS_PER_TREE"),
            ("lock_lease_s", "STOKER_LOCK_LEASE_S"),
            ("worker_shutdown_timeout_s", "STOKER_WORKER_SHUTDOWN_TIMEOUT_S"),
            ("max_event_streams_per_project", "STOKER_MAX_EVENT_STREAMS_PER_PROJECT"),
            ("http_max_connections", "STOKER_HTTP_MAX_CONNECTIONS"),
            ("http_backlog", "STOKER_HTTP_BACKLOG"),
            ("http_keep_alive_s", "STOKER_HTTP_KEEP_ALIVE_S"),
        ):
            if env.get(variable):
                try:
                    setattr(settings, name, int(env[variable]))
                except ValueError:
                    raise ValueError(f"{variable} must be an integer, got {env[variable]!r}")
        if env.get("STOKER_EVENT_STREAM_HEARTBEAT_S"):
            try:
                settings.event_stream_heartbeat_s = float(env["STOKER_EVENT_STREAM_HEARTBEAT_S"])
            except ValueError:
                raise ValueError(f"STOKER_EVENT_STREAM_HEARTBEAT_S must be a number of seconds, got {env['STOKER_EVENT_STREAM_HEARTBEAT_S']!r}")
        for name, variable in (("http_header_timeout_s", "STOKER_HTTP_HEADER_TIMEOUT_S"), ("http_body_timeout_s", "STOKER_HTTP_BODY_TIMEOUT_S")):
            if env.get(variable):
                try:
                    seconds = float(env[variable])
                except ValueError:
                    raise ValueError(f"{variable} must be a number of seconds, got {env[variable]!r}")
                if not seconds > 0:  # 0 would drop every connection at once
                    raise ValueError(f"{variable} must be a number of seconds above 0, got {env[variable]!r}")
                setattr(settings, name, seconds)
        if env.get("STOKER_CHILD_QUEUE_WAIT_S"):
            try:
                settings.child_queue_wait_s = float(env["STOKER_CHILD_QUEUE_WAIT_S"])
            except ValueError:
                raise ValueError(f"STOKER_CHILD_QUEUE_WAIT_S must be a number of seconds, got {env['STOKER_CHILD_QUEUE_WAIT_S']!r}")
        if env.get("STOKER_YAQL_TIME_LIMIT_S"):
            try:
                settings.yaql_time_limit_s = float(env["STOKER_YAQL_TIME_LIMIT_S"])
            except ValueError:
                raise ValueError(f"STOKER_YAQL_TIME_LIMIT_S must be a number of seconds, got {env['STOKER_YAQL_TIME_LIMIT_S']!r}")
        for name, variable in (("enable_stack_abandon", "STOKER_ENABLE_STACK_ABANDON"), ("enable_stack_adopt", "STOKER_ENABLE_STACK_ADOPT"), ("allow_image_urls", "STOKER_ALLOW_IMAGE_URLS"),
            ("allow_template_urls", "STOKER_ALLOW_TEMPLATE_URLS"),
            ("encrypt_parameters_and_properties", "STOKER_ENCRYPT_PARAMETERS_AND_PROPERTIES"),
            ("serve_with_worker", "STOKER_SERVE_WITH_WORKER"),
            ("allow_trusts_redelegation", "STOKER_ALLOW_TRUSTS_REDELEGATION"),
        ):
            if env.get(variable):
                setattr(settings, name, env[variable].lower() in ("1", "true", "yes", "on"))
        for key, value in overrides.items():
            if value is not None and value != []:
                setattr(settings, key, value)
        return settings
