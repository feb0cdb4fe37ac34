"""Benchmark: throughput of stack actions on ``stoker worker`` processes (PostgreSQL).

For each worker count, a fresh PostgreSQL schema, ``stoker serve --job-queue
procrastinate`` (it only enqueues) and that many ``stoker worker`` processes. Then
STACKS stacks, each a ResourceGroup of SIZE ``OS::Heat::TestResource`` members (a
nested stack) beside one more resource, are created at once through the API, then
updated (every member's property changed), then deleted. Prints, per phase, the wall
time from the first request to the last stack's end, stack actions per minute and
resources per second.

    .venv/bin/python bench/workers.py                       # 1, 2 and 3 workers
    .venv/bin/python bench/workers.py --workers 1 3 --stacks 60 --size 20
    STOKER_BENCH_POSTGRES=postgresql://postgres@127.0.0.1:5432/test .venv/bin/python bench/workers.py
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

STOKER = str(Path(sys.executable).with_name("stoker"))
POSTGRES = os.environ.get("STOKER_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  size: {type: number}
  label: {type: string, default: one}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: size}
      resource_def:
        type: OS::Heat::TestResource
        properties: {value: {get_param: label}}
  single:
    type: OS::Heat::TestResource
    properties: {value: {get_param: label}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request(base: str, method: str, path: str, body: object = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    call = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(call, timeout=120) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def psql(sql: str) -> None:
    subprocess.run(["psql", POSTGRES, "-q", "-c", sql], check=True, capture_output=True)


def run(workers: int, stacks: int, size: int) -> dict[str, float]:
    schema = f"stoker_bench_{uuid.uuid4().hex[:10]}"
    psql(f'CREATE SCHEMA "{schema}"')
    directory = Path(tempfile.mkdtemp(prefix="stoker-bench-workers-"))
    environment = {
        **os.environ,
        "STOKER_DATABASE_URL": f"{POSTGRES}?options=-csearch_path%3D{schema}",
        "STOKER_JOB_QUEUE": "procrastinate",
        "STOKER_ENCRYPTION_KEY": os.environ.get("STOKER_ENCRYPTION_KEY") or "k1Ue8Vd3zE5Q2Z3b3oXQk3JQ6yY3n2Nf1o5H0aS8Wq4=",
    }
    port = free_port()
    base = f"http://127.0.0.1:{port}/v1/bench"
    processes = [subprocess.Popen([STOKER, "serve", "--port", str(port)], env=environment, stdout=(directory / "serve.log").open("w"), stderr=subprocess.STDOUT)]
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("stoker serve did not start: " + (directory / "serve.log").read_text())
                time.sleep(0.2)
        for number in range(workers):
            log = (directory / f"worker-{number}.log").open("w")
            processes.append(subprocess.Popen([STOKER, "worker", "--concurrency", "20"], env=environment, stdout=log, stderr=subprocess.STDOUT))
        time.sleep(2)  # the workers connect and listen
        names = [f"s{number:03d}" for number in range(stacks)]
        ids: dict[str, str] = {}

        def wait(name: str) -> str:
            while True:
                status, body = request(base, "GET", f"/stacks/{name}/{ids[name]}")
                state = "DELETE_COMPLETE" if status == 404 else body["stack"]["stack_status"]
                if not state.endswith("IN_PROGRESS"):
                    return state
                time.sleep(0.2)

        def create(name: str) -> str:
            status, body = request(base, "POST", "/stacks", {"stack_name": name, "template": TEMPLATE, "parameters": {"size": size}})
            assert status == 201, body
            ids[name] = body["stack"]["id"]
            return wait(name)

        def update(name: str) -> str:
            status, body = request(base, "PATCH", f"/stacks/{name}/{ids[name]}", {"parameters": {"label": "two"}})
            assert status == 202, body
            return wait(name)

        def delete(name: str) -> str:
            status, body = request(base, "DELETE", f"/stacks/{name}/{ids[name]}")
            assert status == 204, body
            return wait(name)

        results: dict[str, float] = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(stacks, 32)) as pool:
            for phase, action, expected in (("create", create, "CREATE_COMPLETE"), ("update", update, "UPDATE_COMPLETE"), ("delete", delete, "DELETE_COMPLETE")):
                started = time.perf_counter()
                states = list(pool.map(action, names))
                results[phase] = time.perf_counter() - started
                wrong = [state for state in states if state != expected]
                if wrong:
                    raise SystemExit(f"{phase}: {len(wrong)} stacks ended {wrong[0]} (logs in {directory})")
        return results
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
        psql(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", nargs="*", type=int, default=[1, 2, 3])
    parser.add_argument("--stacks", type=int, default=30)
    parser.add_argument("--size", type=int, default=10, help="members of each stack's group")
    options = parser.parse_args()
    resources = options.stacks * (options.size + 2)  # members, the group, the single one
    print(f"{options.stacks} stacks of {options.size + 2} resources (a nested group of {options.size}); {os.cpu_count()} CPUs")
    print(f"{'workers':>7} {'phase':>7} {'seconds':>8} {'actions/min':>12} {'resources/s':>12}")
    for workers in options.workers:
        for phase, seconds in run(workers, options.stacks, options.size).items():
            print(f"{workers:>7} {phase:>7} {seconds:>8.2f} {options.stacks / seconds * 60:>12.0f} {resources / seconds:>12.0f}")


if __name__ == "__main__":
    main()
