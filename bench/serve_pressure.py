"""``stoker serve`` under pressure, on 127.0.0.1: many idle event streams of
one stack, and a flood of slow connections (slowloris). Prints what a user of the
server sees: its CPU, how long a plain request takes meanwhile, how many slow
connections it dropped and how much it logged.

    .venv/bin/python bench/serve_pressure.py streams [--streams 200]
    .venv/bin/python bench/serve_pressure.py slow [--connections 1100] [--file-limit 1024]

``--source DIR`` runs the server from another checkout's ``src`` (to compare with an
older stoker). Numbers are in bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STOKER = str(Path(sys.executable).with_name("stoker"))
SIMPLE = "heat_template_version: 2021-04-16\nresources:\n  only:\n    type: OS::Heat::TestResource\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(directory: Path, source: str | None, file_limit: int | None, **environment: str) -> tuple[subprocess.Popen, str, Path]:
    port = free_port()
    env = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{directory / 'bench.sqlite'}", **environment}
    if source:
        env["PYTHONPATH"] = source

    def limit() -> None:
        if file_limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (file_limit, file_limit))

    log_path = directory / "serve.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen([STOKER, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=limit)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=1)
        except urllib.error.HTTPError:
            return process, url, log_path
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("stoker serve did not start: " + log_path.read_text())
            time.sleep(0.1)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request_s(url: str, timeout: float = 30) -> float | None:
    """Seconds a GET takes; None when it is not answered within ``timeout``."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            response.read()
    except OSError:
        return None
    return time.monotonic() - started


def median_request_ms(url: str, count: int = 20) -> str:
    times = [request_s(url) for _ in range(count)]
    answered = [t for t in times if t is not None]
    if not answered:
        return "not answered"
    return f"{statistics.median(answered) * 1000:.1f} ms" + (f" ({count - len(answered)} not answered)" if len(answered) < count else "")


def streams(arguments: argparse.Namespace) -> None:
    import httpx

    with tempfile.TemporaryDirectory() as directory:
        process, url, _ = start(Path(directory), arguments.source, None, STOKER_MAX_EVENT_STREAMS_PER_PROJECT="-1")
        endpoint = f"{url}/v1/demo"
        try:
            http = httpx.Client(timeout=60, limits=httpx.Limits(max_connections=arguments.streams + 10))
            stack_id = http.post(f"{endpoint}/stacks", json={"stack_name": "watched", "template": SIMPLE}).json()["stack"]["id"]
            while http.get(f"{endpoint}/stacks/watched/{stack_id}").json()["stack"]["stack_status"].endswith("IN_PROGRESS"):
                time.sleep(0.1)
            before = median_request_ms(f"{endpoint}/stacks")
            opened, refused = [], 0
            for _ in range(arguments.streams):
                context = http.stream("GET", f"{endpoint}/stacks/watched/{stack_id}/events/stream", params={"from": "now"})
                response = context.__enter__()
                if response.status_code == 200:
                    opened.append(context)
                else:
                    refused += 1
                    context.__exit__(None, None, None)
            time.sleep(2)
            cpu = cpu_seconds(process.pid)
            time.sleep(arguments.window)
            busy = (cpu_seconds(process.pid) - cpu) / arguments.window
            during = median_request_ms(f"{endpoint}/stacks")
            print(f"{len(opened)} idle streams of one stack open ({refused} refused): server CPU {busy * 100:.0f}% of a core over {arguments.window:g} s;"
                  f" GET /stacks {before} before, {during} with the streams open")
            for context in opened:
                context.__exit__(None, None, None)
            http.close()
        finally:
            process.terminate()
            process.wait(timeout=30)


def slow(arguments: argparse.Namespace) -> None:
    headers = b"GET /v1/demo/stacks HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nAccept: */*\r\n"
    body = b"POST /v1/demo/stacks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
    with tempfile.TemporaryDirectory() as directory:
        process, url, log_path = start(Path(directory), arguments.source, arguments.file_limit)
        clients: list[tuple[socket.socket, int]] = []
        try:
            for number in range(arguments.connections):
                client = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=10)
                client.setblocking(False)
                if number % 2:
                    client.send(body)
                clients.append((client, number % 2))
            dropped, sent, answered, unanswered = set(), 0, [], 0
            started = time.monotonic()
            while time.monotonic() - started < arguments.seconds:
                for index, (client, kind) in enumerate(clients):
                    if index in dropped:
                        continue
                    try:
                        if client.recv(1024) == b"":
                            dropped.add(index)
                            continue
                    except BlockingIOError:
                        pass
                    except OSError:
                        dropped.add(index)
                        continue
                    try:
                        client.send(headers[sent % len(headers):][:1] if kind == 0 else b" ")
                    except BlockingIOError:
                        pass
                    except OSError:
                        dropped.add(index)
                sent += 1
                took = request_s(f"{url}/v1/demo/stacks", timeout=5)
                if took is None:
                    unanswered += 1
                else:
                    answered.append(took)
                time.sleep(0.2)
            log = log_path.read_bytes()
            lines = log.count(b"\n")
            median = f"{statistics.median(answered) * 1000:.1f} ms" if answered else "-"
            print(f"{arguments.connections} slow connections for {arguments.seconds:g} s (file limit {arguments.file_limit}): {len(dropped)} dropped by the server;"
                  f" plain requests meanwhile: {len(answered)} answered (median {median}), {unanswered} not answered within 5 s;"
                  f" server log {len(log) / 1e6:.2f} MB, {lines} lines")
        finally:
            for client, _ in clients:
                client.close()
            process.terminate()
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", help="run the server from this checkout's src directory")
    sub = parser.add_subparsers(dest="what", required=True)
    streams_parser = sub.add_parser("streams", help="many idle event streams of one stack")
    streams_parser.add_argument("--streams", type=int, default=200)
    streams_parser.add_argument("--window", type=float, default=10.0, help="seconds the server's CPU is measured over")
    slow_parser = sub.add_parser("slow", help="a flood of slow connections")
    slow_parser.add_argument("--connections", type=int, default=1100)
    slow_parser.add_argument("--seconds", type=float, default=15.0)
    slow_parser.add_argument("--file-limit", type=int, default=1024, help="the server's open-file limit")
    arguments = parser.parse_args()
    {"streams": streams, "slow": slow}[arguments.what](arguments)


if __name__ == "__main__":
    main()
