"""The ASGI application: the Orchestration API v1 (Heat's REST API) over one Service.

``create_app`` builds the Starlette app; its lifespan puts the service in serve mode
(jobs run in the background on the server's event loop), starts recovery of the
stacks a dead engine left IN_PROGRESS, and at shutdown stops the running jobs (their
stacks stay IN_PROGRESS, lock released, and the next start finishes them). ``serve``
runs it under uvicorn (``stoker serve``), with the limits of ``api.connections`` on its
connections (slow requests timed out, a cap on open connections, one log line for many
dropped).

The app authenticates as its settings say (``auth_mode``, ``api.auth``) and enforces
Heat's policy (``api.policy``, with an operator's file over it): both are made here,
once, before the first request, and each endpoint is given its route's rule. A
configuration that cannot work (no tokens file, a Keystone that does not answer, no
authentication on an address other than loopback) stops the server before it listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.routing import Mount

from stoker.api import cors, errors, policy, routes
from stoker.api.auth import KeystoneTokens, authenticator_for, check_listening
from stoker.api.call import ACCESS_ATTRIBUTE, MAX_JSON_BODY_BYTES
from stoker.api.connections import (
    FILE_HEADROOM,
    ConnectionGuard,
    RepeatedWarnings,
    connection_cap,
    guarded_protocol,
)
from stoker.api.event_hub import EventStreams
from stoker.service import Service, stack_domain_settings
from stoker.settings import Settings
from stoker.web import pages as dashboard

LOG = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, service: Service | None = None) -> Starlette:
    """The app; it owns (and closes) a service it makes from ``settings``, not one given."""
    settings = service.settings if service is not None else (settings or Settings.from_env())
    owned = service is None

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        current = service if service is not None else await run_in_threadpool(Service, settings)
        app.state.service = current
        authenticator = app.state.authenticator
        if isinstance(authenticator, KeystoneTokens) and current.delegation is None:
            # Stacks act in the cloud for the users who make them (trusts), never with
            # the server's own cloud settings.
            from stoker.clouds.trusts import Trustee, Trusts

            trustee = Trustee(authenticator.conf, authenticator.GROUP, settings.region_name, allow_redelegation=settings.allow_trusts_redelegation)
            current.act_for_users(Trusts(trustee, current.store, remote_jobs=settings.job_queue == "procrastinate"))
        # In keystone mode the CFN API (api/cfn.py) has Keystone verify EC2 signatures,
        # asking as stoker's service user; otherwise it verifies them itself.
        app.state.cfn_verifier = getattr(current.delegation, "trustee", None)
        current.serve_on(asyncio.get_running_loop())
        embedded_worker = None
        if settings.job_queue == "procrastinate" and settings.serve_with_worker:
            from stoker.workers import StackWorker

            embedded_worker = asyncio.create_task(StackWorker(current).run(install_signal_handlers=False))
        recovering = await run_in_threadpool(current.recover_nowait)
        if recovering:
            LOG.warning("resuming actions interrupted by an engine restart: %s", ", ".join(f"{s.name} ({s.state})" for s in recovering))
        try:
            yield
        finally:
            if embedded_worker is not None:
                embedded_worker.cancel()
                await asyncio.gather(embedded_worker, return_exceptions=True)
            await current.stop_jobs()
            if owned:
                current.close()

    # Every operation of the API (api.routes: each declared once, beside its handler),
    # the resource type reference's pages among them; each endpoint given its rule.
    api_routes = routes.starlette()
    policy.bind(api_routes, ACCESS_ATTRIBUTE, routes.RULES)
    # The web dashboard (stoker.web): pages that call the routes above with the user's
    # token, so the same authentication and policy apply.
    # Other origins' pages may call the API only when the operator names them (api.cors).
    app = Starlette(
        routes=[*api_routes, Mount(dashboard.PREFIX, app=dashboard.routes())],
        exception_handlers={HTTPException: errors.http_exception},
        lifespan=lifespan,
        middleware=cors.middleware(settings.cors_allowed_origins),
    )
    # Checked before the server listens, as the policy file and the authentication are.
    stack_domain_settings(settings)
    app.state.policy = policy.Policy(settings.policy_file)
    app.state.authenticator = authenticator_for(settings, app.state.policy)
    app.state.cfn_verifier = None
    # Heat's max_json_body_size; a template may be up to max_template_bytes, sent as JSON
    # text inside the body, so the limit grows with it. The endpoints enforce it as they
    # read (api.call), not starlette's body limit: that one answers a Content-Length
    # over the limit in plain text, and a chunked body by an exception the endpoint sees.
    app.state.max_body_bytes = max(MAX_JSON_BODY_BYTES, 3 * settings.max_template_bytes)
    # The open event streams: one shared poll per stack, and each project's count.
    app.state.event_streams = EventStreams(settings.max_event_streams_per_project)
    return app


class RedactSecrets(logging.Filter):
    """Keeps the secret of a signal URL (``?secret=...``) out of the access log."""

    _SECRET = re.compile(r"(secret=)[^&\s\"]*")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self._SECRET.sub(r"\1***", arg) if isinstance(arg, str) else arg for arg in record.args)
        return True


def served_url(host: str, port: int) -> str:
    """The URL agents reach a server listening on ``host``:``port`` at, when the operator
    names none (STOKER_PUBLIC_URL): the address itself, or for every address (0.0.0.0,
    ::) this machine's name."""
    if host in ("", "0.0.0.0", "::"):
        host = socket.getfqdn()
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def serve(host: str = "127.0.0.1", port: int = 8004, settings: Settings | None = None) -> None:
    """Run the API until interrupted (8004 is Heat's port). Raises AuthConfigurationError
    (or PolicyFileError) before listening when the authentication cannot work."""
    import uvicorn

    settings = settings or Settings.from_env()
    check_listening(settings.auth_mode, host)
    if settings.public_url is None:
        settings.public_url = served_url(host, port)
        if host in ("", "0.0.0.0", "::"):
            LOG.warning("signal and metadata URLs point at %s; set STOKER_PUBLIC_URL if servers reach this one elsewhere", settings.public_url)
    app = create_app(settings)
    if settings.auth_mode == "none":
        LOG.warning("auth mode 'none': no authentication; every caller who reaches %s:%s acts for the project its URL names", host, port)
    else:
        LOG.warning("auth mode %r: every request needs a valid token (policy: %s)", settings.auth_mode, settings.policy_file or "Heat's defaults")
    logging.getLogger("uvicorn.access").addFilter(RedactSecrets())
    # Slow and surplus connections are dropped before they reach the app, and what
    # uvicorn or asyncio would log once per connection is logged once a minute.
    cap = connection_cap(settings.http_max_connections, settings.http_backlog)
    if cap < settings.http_max_connections:
        LOG.warning(
            "at most %d connections (not STOKER_HTTP_MAX_CONNECTIONS=%d): the process may open %d files, and keeps %d for"
            " its own and for connections being accepted (STOKER_HTTP_BACKLOG); raise its limit (ulimit -n) for more",
            cap, settings.http_max_connections, cap + FILE_HEADROOM + settings.http_backlog, FILE_HEADROOM + settings.http_backlog,
        )
    guard = ConnectionGuard(settings.http_header_timeout_s, settings.http_body_timeout_s, cap)
    for name in ("uvicorn.error", "asyncio"):
        logging.getLogger(name).addFilter(RepeatedWarnings())
    uvicorn.run(
        app, host=host, port=port, log_level="info", lifespan="on", http=guarded_protocol(guard),
        backlog=settings.http_backlog, timeout_keep_alive=settings.http_keep_alive_s,
    )
