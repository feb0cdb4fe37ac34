"""The embedded engine's log (cli/engine_log.py): a plugin's unexpected error fails its
resource with a one-line reason on the terminal, and its traceback, which says where the
bug is, goes to ``stoker.log`` beside the store (or to STOKER_LOG_FILE), never to the
command's output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.acceptance.conftest import client_environment

STOKER = str(Path(sys.executable).with_name("stoker"))

PLUGIN = """\
from stoker.sdk import resource


class Broken(resource.Resource):
    \"\"\"A resource whose create has a bug.\"\"\"

    def handle_create(self):
        settings = {}
        self.resource_id_set(settings["missing_key"])


def resource_mapping():
    return {"Test::Broken": Broken}
"""

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  boom:
    type: Test::Broken
"""


def create(tmp_path: Path, name: str, **variables: str) -> subprocess.CompletedProcess:
    env = client_environment(
        {"STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'store' / 'cli.sqlite'}", **variables}
    )
    return subprocess.run(
        [STOKER, "--plugin-dir", str(tmp_path / "plugins"), "stack", "create", name, "-t", str(tmp_path / "boom.yaml"), "--wait"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_cli_engine_log_holds_a_plugin_bugs_traceback_and_the_terminal_its_reason(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "broken.py").write_text(PLUGIN)
    (tmp_path / "boom.yaml").write_text(TEMPLATE)
    (tmp_path / "store").mkdir()

    result = create(tmp_path, "first")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert "KeyError: resources.boom: 'missing_key'" in result.stderr, result.stderr
    log = (tmp_path / "store" / "stoker.log").read_text()
    assert "ERROR stoker.engine.lifecycle: resource boom failed by an unexpected KeyError" in log, (
        log
    )
    assert "Traceback" in log and 'broken.py", line 9, in handle_create' in log, log

    # STOKER_LOG_FILE puts it elsewhere.
    elsewhere = tmp_path / "logs" / "engine.log"
    again = create(tmp_path, "second", STOKER_LOG_FILE=str(elsewhere))
    assert again.returncode != 0 and "Traceback" not in again.stderr, again.stderr
    assert "resource boom failed by an unexpected KeyError" in elsewhere.read_text()
