"""An older cloud made from the test cloud: an HTTP proxy in front of the real Nova or Cinder
that advertises a lower maximum microversion and refuses anything above it, as a service
of that age would.

Owns:
  ``CappingProxy``     a thread serving 127.0.0.1 on a free port, forwarding every request
                       to the real service verbatim (method, path, headers, body; the answer's
                       status, headers and body) except that it
                         * rewrites the ``version`` (maximum microversion) of the version
                           documents (``/``, ``/v2.1``, ``/v3``) down to the cap, and their
                           links to the real service so they point at the proxy;
                         * answers a request asking for a microversion above the cap
                           (``OpenStack-API-Version`` or ``X-OpenStack-Nova-API-Version``)
                           with the service's own 406 and error shape, without forwarding it;
                         * forwards ``latest`` as the cap (what ``latest`` means on that cloud);
                         * with a ``minimum``, is a cloud that no longer offers anything
                           older: advertises it as the minimum, refuses below it (the
                           same 406) and serves a request that names no microversion at
                           it, as such a service does.
                       ``.requests`` lists what it saw: (method, path, requested microversion).
                       ``.stall(method, pattern, times, seconds)`` makes it hold the next
                       ``times`` matching requests unanswered for ``seconds`` and then drop
                       them (a service that hangs), without forwarding them.
  ``capped_environ``   a clouds.yaml whose cloud sends one service through a proxy
                       (openstacksdk's ``<service_type>_endpoint_override``), as the
                       ``OS_CLIENT_CONFIG_FILE``/``OS_CLOUD`` variables stoker's
                       ``EnvironmentCloudSource`` and the ``openstack`` command read.

Must not: change anything else in what passes through (tests assert on the real service's
answers), or outlive the ``with`` block that started it.
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import urllib3
import yaml

__all__ = ["CappedEnviron", "CappingProxy", "capped_environ"]

# The names a service accepts in ``OpenStack-API-Version: <name> <version>``, by the
# service type of the catalog; Nova also reads its legacy header.
SERVICE_HEADER_NAMES = {"compute": ("compute",), "block-storage": ("volume", "block-storage")}
LEGACY_HEADERS = {"compute": "X-OpenStack-Nova-API-Version"}
# Hop-by-hop headers (RFC 9110 7.6.1) are the proxy's own on each side; the body is sent
# with its own Content-Length once the proxy has it whole.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
}
# Seconds the proxy waits for the real service: as long as a client would (a server create
# under load takes several seconds on the test cloud).
UPSTREAM_TIMEOUT_S = 120.0

_VERSION = re.compile(r"^\s*(\d+)\.(\d+)\s*$")


def _parse(version: str) -> tuple[int, int] | None:
    match = _VERSION.match(version or "")
    return None if match is None else (int(match.group(1)), int(match.group(2)))


class CappingProxy:
    """The real service at ``upstream`` (its root URL, ``http://127.0.0.1:8774``) as a
    cloud whose maximum microversion is ``maximum``. Use as a context manager, or
    ``start()`` then ``stop()``; ``url`` is the proxy's root URL, to which the real
    service's paths (``/v2.1/servers``) are appended unchanged."""

    def __init__(self, upstream: str, maximum: str, service_type: str = "compute", minimum: str | None = None):
        if service_type not in SERVICE_HEADER_NAMES:
            raise ValueError(
                f"the capping proxy knows {sorted(SERVICE_HEADER_NAMES)}, not {service_type!r}"
            )
        cap = _parse(maximum)
        if cap is None:
            raise ValueError(f"the cap must be a microversion like '2.36', not {maximum!r}")
        parts = urlsplit(upstream)
        self.upstream = f"{parts.scheme}://{parts.netloc}"
        self.maximum = maximum
        self.service_type = service_type
        self._cap = cap
        # Urllib3's pool is safe to share between the server's handler threads.
        self._pool = urllib3.PoolManager(retries=False, timeout=UPSTREAM_TIMEOUT_S)
        self._lock = threading.Lock()  # guards _seen: handler threads append at once
        self._seen: list[tuple[str, str, str | None]] = []
        self._minimum: str | None = minimum
        self._floor = None if minimum is None else _parse(minimum)
        # [method, compiled path pattern, requests left to hold, seconds held]
        self._stalls: list[list[Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[tuple[str, str, str | None]]:
        """Every request so far, in arrival order: (method, path without the query, the
        microversion it asked for or None)."""
        with self._lock:
            return list(self._seen)

    def start(self) -> CappingProxy:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"capping-proxy-{self.maximum}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        self._pool.clear()

    def __enter__(self) -> CappingProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stall(self, method: str, pattern: str, times: int = 1, seconds: float = 30.0) -> None:
        """Hold the next ``times`` requests ``method`` whose path matches ``pattern``
        for ``seconds``, then close their connections unanswered."""
        with self._lock:
            self._stalls.append([method, re.compile(pattern), times, seconds])

    def stalled(self, method: str, path: str) -> float | None:
        """Seconds to hold this request, or None to serve it (counts it when held)."""
        with self._lock:
            for entry in self._stalls:
                if entry[0] == method and entry[1].search(path) and entry[2] > 0:
                    entry[2] -= 1
                    return entry[3]
        return None

    # -- what the handler asks ---------------------------------------------------------

    def _record(self, method: str, path: str, microversion: str | None) -> None:
        with self._lock:
            self._seen.append((method, path, microversion))

    def requested_microversion(self, headers: Any) -> str | None:
        """The microversion a request asks of this service, as written ("2.60", "latest")."""
        names = SERVICE_HEADER_NAMES[self.service_type]
        for value in headers.get_all("OpenStack-API-Version") or []:
            for item in value.split(","):
                words = item.split()
                if len(words) == 2 and words[0].lower() in names:
                    return words[1]
        legacy = LEGACY_HEADERS.get(self.service_type)
        if legacy and headers.get(legacy):
            return headers[legacy].strip()
        return None

    def above_cap(self, microversion: str | None) -> bool:
        parsed = _parse(microversion or "")
        return parsed is not None and parsed[0] == self._cap[0] and parsed > self._cap

    def below_floor(self, microversion: str | None) -> bool:
        parsed = _parse(microversion or "")
        return self._floor is not None and parsed is not None and parsed[0] == self._floor[0] and parsed < self._floor

    def minimum(self) -> str:
        """The real service's minimum microversion (from its root version document), for
        the 406 message; asked once."""
        if self._minimum is None:
            response = self._pool.request("GET", self.upstream + "/")
            document = json.loads(response.data or b"{}")
            minima = [
                entry.get("min_version")
                for entry in document.get("versions", [])
                if entry.get("min_version")
                and _parse(entry.get("version", "")) is not None
                and _parse(entry["version"])[0] == self._cap[0]
            ]
            self._minimum = minima[0] if minima else f"{self._cap[0]}.0"
        return self._minimum

    def refusal(self, microversion: str) -> tuple[int, dict[str, str], bytes]:
        """What Nova and Cinder answer for a microversion above their maximum (both use
        the ``computeFault`` shape)."""
        name = SERVICE_HEADER_NAMES[self.service_type][0]
        body = {
            "computeFault": {
                "code": 406,
                "message": f"Version {microversion} is not supported by the API. "
                f"Minimum is {self.minimum()} and maximum is {self.maximum}.",
            }
        }
        headers = {
            "OpenStack-API-Version": f"{name} {microversion}",
            "Vary": "OpenStack-API-Version",
            "Content-Type": "application/json; charset=UTF-8",
        }
        legacy = LEGACY_HEADERS.get(self.service_type)
        if legacy:
            headers[legacy] = microversion
        return 406, headers, json.dumps(body).encode()

    def capped_headers(self, headers: Any) -> dict[str, str]:
        """The request's headers to forward: hop-by-hop ones dropped, ``latest`` made the
        cap; the Host header kept, so the service builds its links on the proxy's address."""
        forwarded: dict[str, str] = {}
        for key, value in headers.items():
            if key.lower() in HOP_BY_HOP:
                continue
            if key.lower() == "openstack-api-version":
                value = re.sub(r"\blatest\b", self.maximum, value, flags=re.IGNORECASE)
            elif key.lower() == (LEGACY_HEADERS.get(self.service_type) or "").lower():
                value = self.maximum if value.strip().lower() == "latest" else value
            forwarded[key] = value
        if self._floor is not None and self.requested_microversion(headers) is None:
            # A service answers a request that names no microversion at its minimum.
            name = SERVICE_HEADER_NAMES[self.service_type][0]
            forwarded["OpenStack-API-Version"] = f"{name} {self._minimum}"
        return forwarded

    def forward(
        self, method: str, target: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        response = self._pool.request(
            method,
            self.upstream + target,
            body=body,
            headers=headers,
            redirect=False,
            preload_content=True,
            decode_content=False,
        )
        header_items = [
            (key, value) for key, value in response.headers.items() if key.lower() not in HOP_BY_HOP
        ]
        content = response.data or b""
        encoded = any(key.lower() == "content-encoding" for key, _ in header_items)
        if method == "GET" and not encoded and _is_version_path(target):
            content = self.rewrite_version_document(content)
        return response.status, header_items, content

    def rewrite_version_document(self, content: bytes) -> bytes:
        """The document with every maximum of the capped major version lowered to the cap
        and every link to the real service pointing at the proxy; anything that is not a
        version document is returned as it came."""
        try:
            document = json.loads(content)
        except ValueError:
            return content
        if not isinstance(document, dict):
            return content
        entries: list[dict] = []
        if isinstance(document.get("version"), dict):
            entries.append(document["version"])
        for key in ("versions", "choices"):
            value = document.get(key)
            if isinstance(value, dict):  # Keystone-style {"versions": {"values": [...]}}
                value = value.get("values")
            if isinstance(value, list):
                entries.extend(entry for entry in value if isinstance(entry, dict))
        if not entries:
            return content
        for entry in entries:
            advertised = _parse(str(entry.get("version") or ""))
            if advertised is not None and advertised[0] == self._cap[0] and advertised > self._cap:
                entry["version"] = self.maximum
            if advertised is not None and self._floor is not None and advertised[0] == self._floor[0] and entry.get("min_version"):
                entry["min_version"] = self._minimum
            for link in entry.get("links") or []:
                if isinstance(link, dict) and isinstance(link.get("href"), str):
                    link["href"] = link["href"].replace(self.upstream, self.url)
        return json.dumps(document).encode()


def _is_version_path(target: str) -> bool:
    # "/", "/v2.1", "/v2.1/", "/v3/": the root and the major versions' documents.
    segments = [segment for segment in urlsplit(target).path.split("/") if segment]
    return len(segments) == 0 or (
        len(segments) == 1 and re.fullmatch(r"v\d+(\.\d+)?", segments[0]) is not None
    )


def _handler_for(proxy: CappingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, as the test cloud's uWSGI answers too.
        protocol_version = "HTTP/1.0"

        def _handle(self) -> None:
            method = self.command
            microversion = proxy.requested_microversion(self.headers)
            proxy._record(method, urlsplit(self.path).path, microversion)
            held = proxy.stalled(method, urlsplit(self.path).path)
            if held is not None:
                time.sleep(held)
                self.close_connection = True
                return
            if proxy.above_cap(microversion) or proxy.below_floor(microversion):
                status, headers, content = proxy.refusal(microversion)
                self._answer(status, list(headers.items()), content)
                return
            try:
                status, header_items, content = proxy.forward(
                    method, self.path, proxy.capped_headers(self.headers), self._body()
                )
            except urllib3.exceptions.HTTPError as error:
                # The real service did not answer: say so as a gateway would.
                self._answer(
                    502, [("Content-Type", "text/plain")], f"capping proxy: {error}".encode()
                )
                return
            self._answer(status, header_items, content)

        def _body(self) -> bytes | None:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                return b"".join(chunks)
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else None

        def _answer(self, status: int, header_items: list[tuple[str, str]], content: bytes) -> None:
            self.send_response_only(status)
            for key, value in header_items:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(content)))
            self.send_header("Connection", "close")
            self.end_headers()
            if content and self.command != "HEAD":
                self.wfile.write(content)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass  # .requests is the record; stderr stays the test's

    return Handler


class CappedEnviron(dict):
    """The environment variables ``capped_environ`` yields; ``.proxy`` is its proxy."""

    proxy: CappingProxy


@contextmanager
def capped_environ(
    openstack_cloud: Any,
    service_type: str = "compute",
    maximum: str = "2.36",
    user: str = "admin",
    settings: dict[str, Any] | None = None,
    minimum: str | None = None,
) -> Iterator[CappedEnviron]:
    """``OS_CLIENT_CONFIG_FILE`` and ``OS_CLOUD`` for ``user`` of the test cloud, with
    ``service_type`` ("compute" or "block-storage") behind a ``CappingProxy`` at
    ``maximum``, and ``settings`` added to the cloud's clouds.yaml entry (``api_timeout``,
    say); with ``minimum``, a cloud that offers nothing older. The yielded dict's ``.proxy``
    is that proxy."""
    endpoint = urlsplit(openstack_cloud.endpoints[service_type])
    name = openstack_cloud.cloud(user)
    configuration = yaml.safe_load(Path(openstack_cloud.clouds_yaml).read_text())
    entry = {**configuration["clouds"][name], **(settings or {})}
    with CappingProxy(f"{endpoint.scheme}://{endpoint.netloc}", maximum, service_type, minimum) as proxy:
        # openstacksdk reads <service_type with _>_endpoint_override (and its aliases:
        # volumev3_..., block_storage_...) and discovers versions from that URL.
        entry[f"{service_type.replace('-', '_')}_endpoint_override"] = proxy.url + endpoint.path
        capped_name = f"{name}-{service_type}-{maximum}"
        with tempfile.TemporaryDirectory(prefix="stoker-capped-") as directory:
            clouds_yaml = Path(directory) / "clouds.yaml"
            clouds_yaml.write_text(yaml.safe_dump({"clouds": {capped_name: entry}}))
            environ = CappedEnviron(OS_CLIENT_CONFIG_FILE=str(clouds_yaml), OS_CLOUD=capped_name)
            environ.proxy = proxy
            yield environ
