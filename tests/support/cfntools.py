"""heat-cfntools' ``cfn-get-metadata`` (a test dependency, in stoker's venv) run as on a
server whose ``/`` is a test's directory: the real script and the real boto 2 underneath,
which sign ``DescribeStackResource`` (AWS signature version 4) and call the CFN API at
``<host>:<port>/v1/``.

Heat's user data tells a server's tools where the API is in two files under
``/var/lib/heat-cfntools``: ``cfn-boto-cfg`` (boto's configuration: the host) and
``cfn-metadata-server`` (the URL, of which the tools read the port). The tools' paths
(those files, ``/var/log/cfn-get-metadata.log``, the metadata cache under
``/var/cache/heat-cfntools``) are written into them, so a run is put under the test's
directory by a few lines that load boto's configuration from there (``BOTO_CONFIG``,
before heat-cfntools points it at ``/var/lib``) and change those default paths before
the script runs, and nothing else.

Must not: start stoker, or write outside the directory it is given.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

CFN_GET_METADATA = Path(sys.executable).with_name("cfn-get-metadata")
# Seconds one run may take: a Python start-up and one request.
RUN_TIMEOUT_S = 120

# Runs the script with the server's paths moved under ROOT (argv[1]); the rest of argv
# is the script's own.
_SHIM = """
import logging
import runpy
import sys

root = sys.argv.pop(1)
import boto.cloudformation  # noqa: F401 - its configuration read now, from BOTO_CONFIG
from heat_cfntools.cfntools import cfn_helper

cfn_helper.metadata_server_port.__defaults__ = (root + "/var/lib/heat-cfntools/cfn-metadata-server",)
cfn_helper.Metadata.retrieve.__defaults__ = (
    None,
    root + "/var/lib/heat-cfntools/cfn-init-data",
    root + "/var/cache/heat-cfntools/last_metadata",
)
_file_handler = logging.FileHandler
logging.FileHandler = lambda path, *rest, **named: _file_handler(root + path, *rest, **named)
script = sys.argv[0] = sys.argv.pop(1)
runpy.run_path(script, run_name="__main__")
"""


@dataclass
class CfnRun:
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"cfn-get-metadata exited {self.returncode}:\n{self.stdout}\n{self.stderr}"


def prepare_server(directory: Path, api_url: str) -> Path:
    """Write Heat's ``cfn-boto-cfg`` and ``cfn-metadata-server`` for a CFN API reached at
    ``api_url`` (``http://host:port``) under ``directory/root``; returns the root."""
    root = directory / "root"
    address = urlparse(api_url)
    boto = root / "var" / "lib" / "heat-cfntools" / "cfn-boto-cfg"
    boto.parent.mkdir(parents=True, exist_ok=True)
    boto.write_text(
        "[Boto]\ndebug = 0\nis_secure = False\nhttps_validate_certificates = True\n"
        f"cfn_region_name = heat\ncfn_region_endpoint = {address.hostname}\n"
    )
    hint = boto.with_name("cfn-metadata-server")
    hint.write_text(f"{address.scheme}://{address.hostname}:{address.port}\n")
    for directory_needed in ("var/log", "var/cache/heat-cfntools"):
        (root / directory_needed).mkdir(parents=True, exist_ok=True)
    return root


def cfn_get_metadata(
    directory: Path,
    api_url: str,
    stack: str,
    resource: str,
    access: str,
    secret: str,
    key: str | None = None,
) -> CfnRun:
    """``cfn-get-metadata -s STACK -r RESOURCE --access-key ... --secret-key ...`` on the
    server laid out under ``directory``; its stdout is the metadata (or ``key``'s part)."""
    root = prepare_server(directory, api_url)
    arguments = ["-s", stack, "-r", resource, "--access-key", access, "--secret-key", secret]
    if key is not None:
        arguments += ["-k", key]
    environment = {name: value for name, value in os.environ.items() if not name.startswith("BOTO")}
    no_proxy = ",".join(filter(None, [os.environ.get("no_proxy"), "127.0.0.1", "localhost"]))
    environment.update(
        BOTO_CONFIG=str(root / "var" / "lib" / "heat-cfntools" / "cfn-boto-cfg"),
        no_proxy=no_proxy,
        NO_PROXY=no_proxy,
    )
    command = [sys.executable, "-c", _SHIM, str(root), str(CFN_GET_METADATA), *arguments]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=environment,
        timeout=RUN_TIMEOUT_S,
        cwd=directory,
        check=False,
    )
    return CfnRun(result.returncode, result.stdout, result.stderr)
