"""``stoker worker``: run stack actions from the job queue (docs/workers.md)."""

from __future__ import annotations

import logging

import click

from stoker.cli.groups import main
from stoker.cli.invocation import settings_of
from stoker.settings import DEFAULT_PUBLIC_URL


@main.command("worker")
@click.option("--concurrency", type=int, default=None, help="Stack jobs run at once (default: STOKER_WORKER_CONCURRENCY, else 10).")
@click.option("--shutdown-timeout", type=int, default=None, help="Seconds SIGTERM waits for running actions before handing them back (default: 30).")
@click.pass_context
def worker(ctx, concurrency, shutdown_timeout):
    """Run stack actions that 'stoker serve --job-queue procrastinate' enqueues, from the
    PostgreSQL store (STOKER_DATABASE_URL). Run as many as you need; a stack's action
    runs on one of them at a time, and the others resume it if that one dies."""
    from stoker.job_queue import conninfo
    from stoker.service import Service
    from stoker.workers import StackWorker

    settings = settings_of(ctx.find_root().obj)
    conninfo(settings.database_url)  # PostgreSQL, or a clear error before anything starts
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if settings.public_url is None:
        logging.getLogger(__name__).warning(
            "STOKER_PUBLIC_URL is not set: the signal and metadata URLs this worker hands out point at %s; "
            "set it to where servers reach 'stoker serve'",
            DEFAULT_PUBLIC_URL,
        )
    service = Service(settings)
    try:
        if settings.auth_mode == "keystone":
            # Stacks act in the cloud for their users, through the trusts the API made.
            from stoker.api.auth import KeystoneTokens
            from stoker.api.policy import Policy
            from stoker.clouds.trusts import Trustee, Trusts

            keystone = KeystoneTokens(settings.keystone_config_file, settings.keystone_authtoken, Policy(settings.policy_file))
            service.act_for_users(Trusts(Trustee(keystone.conf, keystone.GROUP, settings.region_name, allow_redelegation=settings.allow_trusts_redelegation), service.store, remote_jobs=True))
        runner = StackWorker(
            service,
            concurrency=concurrency or settings.worker_concurrency,
            shutdown_graceful_timeout_s=float(shutdown_timeout if shutdown_timeout is not None else settings.worker_shutdown_timeout_s),
        )
        import asyncio

        asyncio.run(runner.run())
    finally:
        service.close()
