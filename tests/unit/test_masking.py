"""What ``masking.HiddenValues`` shows of a stack's files and of what software configs
and deployments keep for users (issue 26)."""

from __future__ import annotations

import json

import yaml

from stoker.masking import MASK, HiddenValues
from stoker.template import loader
from stoker.template.parameters import ParameterSchema


def parse(text: str):
    return loader.parse_environment(text).data


HIDDEN = HiddenValues.of(
    {"password": ParameterSchema(name="password", type="string", hidden=True), "pin": ParameterSchema(name="pin", type="number", hidden=True)},
    {"password": "Zebra-S3cret-77", "pin": 42},
)


def test_masking_files_rewrites_an_environment_file_that_gives_a_hidden_value():
    files = {
        "env.yaml": "# the password\nparameters:\n  password: Zebra-S3cret-77\n  size: 3\n",
        "env.json": json.dumps({"parameter_defaults": {"pin": 42, "label": "x"}}),
        "plain.yaml": "parameters:\n  size: 3\n",
        "template.yaml": "heat_template_version: 2021-04-16\nparameters:\n  password: {type: string, hidden: true}\n",
        "script.sh": "#!/bin/sh\necho Zebra-S3cret-77 42\n",
    }
    shown = HIDDEN.files(files, parse)
    assert yaml.safe_load(shown["env.yaml"]) == {"parameters": {"password": MASK, "size": 3}}
    # A short value (the pin) is masked by name, not inside other text.
    assert json.loads(shown["env.json"]) == {"parameter_defaults": {"pin": MASK, "label": "x"}}
    assert shown["plain.yaml"] == files["plain.yaml"]
    assert shown["template.yaml"] == files["template.yaml"]
    assert shown["script.sh"] == f"#!/bin/sh\necho {MASK} 42\n"


def test_masking_shown_is_none_for_a_value_with_nothing_hidden():
    body = {"config": "#!/bin/sh\n", "inputs": [{"name": "password", "value": "Zebra-S3cret-77"}, {"name": "pin", "value": 42}]}
    assert HIDDEN.shown(body) == {"config": "#!/bin/sh\n", "inputs": [{"name": "password", "value": MASK}, {"name": "pin", "value": MASK}]}
    assert HIDDEN.shown({"config": "#!/bin/sh\n"}) is None
    assert HIDDEN.shown(None) is None
    assert HiddenValues().shown(body) is None
