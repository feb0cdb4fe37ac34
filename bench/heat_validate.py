"""Heat's template-validate on the inputs the public-templates sweep gave stoker.

Run by bench/.heat-venv's python (see heat_env.py), never by stoker's: it reads the JSON
files ``bench/heat_templates.py --dump DIR`` wrote (a template, the files map stoker sent
with it, the environment files) and asks OpenStack Heat 27.0.1's EngineService, set up in
process as heat_runner.py sets it up, to validate each, as ``openstack orchestration
template validate`` would. It prints one line per template (ok, Heat's error, or the
exception Heat's engine raised) and a summary, to set beside the sweep's.

    python3 bench/heat_env.py
    .venv/bin/python bench/heat_templates.py thr --dump /tmp/thr-dump
    bench/.heat-venv/bin/python bench/heat_validate.py /tmp/thr-dump
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import heat_runner  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", type=Path, help="the directory bench/heat_templates.py --dump wrote")
    parser.add_argument("--max-nested-depth", type=int, default=5, help="Heat's max_nested_depth (default 5, Heat's)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        engine = heat_runner.configure_heat(f"sqlite:///{Path(directory) / 'heat.sqlite'}", production=False)
        from heat.common import template_format
        from heat.tests import utils
        from oslo_config import cfg

        cfg.CONF.set_override("max_nested_stack_depth", arguments.max_nested_depth)
        counts = {"ok": 0, "refused": 0, "raised": 0}
        for path in sorted(arguments.dump.glob("*.json")):
            dumped = json.loads(path.read_text())
            files = dict(dumped["files"])
            environment_files = []
            for environment in dumped["environments"]:
                files[environment["name"]] = environment["text"]
                environment_files.append(environment["name"])
            try:
                # The environment as python-heatclient sends it: every section, empty.
                environment = {"parameters": {}, "parameter_defaults": {}, "resource_registry": {}, "event_sinks": []}
                answer = engine.validate_template(
                    utils.dummy_context(), template_format.parse(dumped["text"]), environment, files=files, environment_files=environment_files or None
                )
                outcome = "ok" if "Error" not in answer else "refused"
                text = "ok" if outcome == "ok" else str(answer["Error"]).splitlines()[0]
            except Exception as error:  # noqa: BLE001 - what the API would answer with a 4xx/5xx
                # oslo.messaging's ExpectedException carries the engine's own (Heat's 4xx).
                error = getattr(error, "exc_info", (None, error))[1]
                outcome, text = "raised", f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            counts[outcome] += 1
            print(f"{dumped['template']:70} heat: {text}", flush=True)
    print()
    print(f"{sum(counts.values())} templates: {counts['ok']} validate in Heat, {counts['refused']} refused, {counts['raised']} raise")


if __name__ == "__main__":
    main()
