"""A stack of N resources (default 1000) on the dashboard, in headless Chromium: how long
its page takes to draw the topology and to answer input, and what the page holds.

    .venv/bin/python bench/dashboard_large.py [--count 1000] [--repeats 3] [--trace trace.json]

Starts ``stoker serve`` (auth mode none, SQLite) on 127.0.0.1, creates the stack through
the API (chains of ten ``OS::Heat::None``, as tests/acceptance/dashboard/test_dashboard_large.py
does), then opens its page in a fresh browser context (signed in through sessionStorage,
as the sign-in page leaves it) and prints, from the page's own navigation start:

- ``topology``: the SVG with every node is in the document (a MutationObserver's time)
  and a frame has been painted after it (the next requestAnimationFrame + task);
- ``interactive``: the end of the page's last long task (the browser's own measure, over
  50 ms) before it stays quiet for ``--quiet-s`` seconds, or ``topology`` if later: from
  then on input is answered at once;
- ``longest task``: the longest task of the whole window (what a click could wait for);
- ``heap`` and ``nodes``: the page's JavaScript heap and DOM nodes (Chrome DevTools
  Protocol ``Performance.getMetrics``) at the end;
- the API requests the page made, each with its size and server time (to first byte).

``--trace FILE`` writes a Chromium trace of the first repeat (open it in chrome://tracing
or DevTools' Performance panel) and prints where the main thread's time went. Numbers are
in bench/README.md and docs/dashboard.md. No test asserts them.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

STOKER = str(Path(sys.executable).with_name("stoker"))
CHROMIUM = "/usr/bin/chromium"
PROJECT = "bench"

# Installed before the page's own scripts run: long tasks, and the moment the topology
# with every node enters the document.
WATCH = """
window.bench = {longTasks: [], topology: null, painted: null};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.bench.longTasks.push([entry.startTime, entry.duration]);
}).observe({type: "longtask", buffered: true});
new MutationObserver((records, observer) => {
  const svg = document.querySelector("svg.topology");
  if (!svg || svg.querySelectorAll("g.node").length < COUNT) return;
  window.bench.topology = performance.now();
  observer.disconnect();
  requestAnimationFrame(() => setTimeout(() => { window.bench.painted = performance.now(); }, 0));
}).observe(document, {childList: true, subtree: true});
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def template(count: int) -> str:
    """``count`` resources in chains of ten (the browser test's stack)."""
    lines = ["heat_template_version: 2021-04-16", "resources:"]
    for index in range(count):
        lines.append(f"  r{index:04d}:\n    type: OS::Heat::None")
        if index % 10:
            lines.append(f"    depends_on: [r{index - 1:04d}]")
    return "\n".join(lines) + "\n"


def call(url: str, method: str = "GET", body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read() or b"null")


def start_server(directory: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {
        **os.environ,
        "STOKER_DATABASE_URL": f"sqlite:///{directory / 'bench.sqlite'}",
        "STOKER_AUTH_MODE": "none",
    }
    log = open(directory / "serve.log", "w")  # noqa: SIM115 - the server's, closed with it
    process = subprocess.Popen([STOKER, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=1)
        except urllib.error.HTTPError:
            return process, url
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("stoker serve did not start: " + (directory / "serve.log").read_text())
            time.sleep(0.1)


def create_stack(url: str, count: int) -> str:
    api = f"{url}/v1/{PROJECT}"
    body = {"stack_name": "big", "template": template(count), "files": {}, "environment": {}}
    stack_id = call(f"{api}/stacks", "POST", body)["stack"]["id"]
    deadline = time.monotonic() + 600
    while True:
        status = call(f"{api}/stacks/big/{stack_id}")["stack"]["stack_status"]
        if not status.endswith("IN_PROGRESS"):
            assert status == "CREATE_COMPLETE", status
            return stack_id
        if time.monotonic() > deadline:
            raise SystemExit(f"the stack is still {status} after 10 minutes")
        time.sleep(0.5)


def interactive_at(long_tasks: list[list[float]], ready: float, quiet_ms: float) -> float:
    """The end of the last long task before a quiet window of ``quiet_ms``, from ``ready`` on."""
    at = ready
    for begin, duration in sorted(long_tasks):
        if begin + duration <= at:
            continue
        if begin > at + quiet_ms:
            break
        at = begin + duration
    return at


def measure(browser, url: str, stack_id: str, count: int, quiet_s: float, trace: Path | None) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    session = json.dumps({"project_id": PROJECT, "token": None, "user_id": None})
    context.add_init_script(f"sessionStorage.setItem('stoker.dashboard.session', {json.dumps(session)});")
    context.add_init_script(WATCH.replace("COUNT", str(count)))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests: list[dict] = []

    def finished(request) -> None:
        timing = request.timing
        sizes = request.sizes()
        requests.append({
            "path": request.url.split(f"/v1/{PROJECT}", 1)[-1].split("/dashboard", 1)[-1],
            "start_ms": timing["startTime"],
            "server_ms": timing["responseStart"] - timing["requestStart"],
            "total_ms": timing["responseEnd"],
            "bytes": sizes["responseBodySize"],
        })

    page.on("requestfinished", finished)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    if trace:
        browser.start_tracing(page=page, path=str(trace), categories=["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink.user_timing"])
    page.goto(f"{url}/dashboard/stacks/big/{stack_id}")
    # Polled from here (the page's CSP forbids wait_for_function's eval).
    deadline = time.monotonic() + 120
    while page.evaluate("window.bench.painted") is None:
        if time.monotonic() > deadline:
            raise SystemExit("the topology was not drawn within 2 minutes")
        time.sleep(0.05)
    # Long enough for the quiet window after the last task (and a re-read after the events).
    page.wait_for_timeout(quiet_s * 1000 + 2500)
    if trace:
        browser.stop_tracing()
    found = page.evaluate("window.bench")
    origin = page.evaluate("performance.timeOrigin")
    for request in requests:
        request["start_ms"] -= origin
    metrics = {item["name"]: item["value"] for item in cdp.send("Performance.getMetrics")["metrics"]}
    nodes = page.evaluate("document.getElementsByTagName('*').length")
    # Input answered: a tab's click shows its panel (measured from the click).
    answered = page.evaluate(
        """() => new Promise((resolve) => {
            const started = performance.now();
            document.getElementById('tab-resources').click();
            requestAnimationFrame(() => resolve(performance.now() - started));
        })"""
    )
    context.close()
    if errors:
        raise SystemExit("the page reported errors: " + "; ".join(errors))
    long_tasks = found["longTasks"]
    return {
        "topology_ms": found["topology"],
        "painted_ms": found["painted"],
        "interactive_ms": interactive_at(long_tasks, found["painted"], quiet_s * 1000),
        "longest_task_ms": max((duration for _, duration in long_tasks), default=0.0),
        "long_tasks_ms": sum(duration for _, duration in long_tasks),
        "heap_mib": metrics["JSHeapUsedSize"] / 2**20,
        "dom_nodes": nodes,
        "script_s": metrics["ScriptDuration"],
        "layout_s": metrics["LayoutDuration"],
        "style_s": metrics["RecalcStyleDuration"],
        "tab_click_ms": answered,
        "requests": requests,
    }


def summarise_trace(path: Path) -> None:
    """Where the renderer's main thread spent its time, by top-level event name."""
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {(event["pid"], event["tid"]) for event in events if event.get("name") == "thread_name" and event.get("args", {}).get("name") == "CrRendererMain"}
    totals: Counter[str] = Counter()
    for event in events:
        if (event.get("pid"), event.get("tid")) in main and event.get("ph") == "X" and event.get("dur"):
            totals[event["name"]] += event["dur"] / 1000
    print("main thread, ms by trace event (nested events counted in their parents too):")
    for name, total in totals.most_common(18):
        print(f"  {name:<32} {total:9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quiet-s", type=float, default=2.0, help="the quiet window that ends 'interactive' (seconds)")
    parser.add_argument("--trace", type=Path, help="write a Chromium trace of the first repeat here")
    arguments = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as directory:
        process, url = start_server(Path(directory))
        try:
            started = time.monotonic()
            stack_id = create_stack(url, arguments.count)
            print(f"stack of {arguments.count} resources created in {time.monotonic() - started:.1f} s")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                runs = [
                    measure(browser, url, stack_id, arguments.count, arguments.quiet_s, arguments.trace if index == 0 else None)
                    for index in range(arguments.repeats)
                ]
                browser.close()
        finally:
            process.terminate()
            process.wait(timeout=20)
    for index, run in enumerate(runs):
        print(
            f"run {index + 1}: topology {run['topology_ms']:.0f} ms, painted {run['painted_ms']:.0f} ms, interactive {run['interactive_ms']:.0f} ms,"
            f" longest task {run['longest_task_ms']:.0f} ms (long tasks {run['long_tasks_ms']:.0f} ms in all), tab click answered in {run['tab_click_ms']:.0f} ms;"
            f" heap {run['heap_mib']:.1f} MiB, {run['dom_nodes']} elements; script {run['script_s']:.2f} s, layout {run['layout_s']:.2f} s, style {run['style_s']:.2f} s"
        )
    print("requests of the first run (ms from navigation; server = request sent to first byte):")
    for request in runs[0]["requests"]:
        print(f"  {request['path'][:70]:<70} start {request['start_ms']:7.0f}  server {request['server_ms']:6.0f}  {request['bytes'] / 1024:8.1f} KiB")
    print(
        f"median of {len(runs)}: topology painted {statistics.median(run['painted_ms'] for run in runs):.0f} ms,"
        f" interactive {statistics.median(run['interactive_ms'] for run in runs):.0f} ms,"
        f" longest task {statistics.median(run['longest_task_ms'] for run in runs):.0f} ms,"
        f" heap {statistics.median(run['heap_mib'] for run in runs):.1f} MiB"
    )
    if arguments.trace:
        summarise_trace(arguments.trace)


if __name__ == "__main__":
    main()
