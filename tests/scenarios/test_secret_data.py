"""Secret resource data (``data_set(..., redact=True)``) is encrypted at rest: the database
holds a Fernet token, the plugin and the user read the value."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet

from stoker.store import tables
from stoker.store.sealing import SEALED, Sealer, SealingError
from tests.support.stacks import template

BODY = """
heat_template_version: 2021-04-16
resources:
  password:
    type: OS::Heat::RandomString
    properties: {length: 24}
  holder:
    type: OS::Heat::TestResource
    properties: {value: {get_resource: password}}
outputs:
  password: {value: {get_attr: [password, value]}}
  held: {value: {get_attr: [holder, output]}}
"""


def stored_data(url: str, name: str) -> dict:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            row = connection.execute(sa.select(tables.resources.c.data).where(tables.resources.c.name == name)).one()
    finally:
        engine.dispose()
    return row.data


def outputs(service, stack: str) -> dict:
    return {o["output_key"]: o["output_value"] for o in service.outputs(stack)}


def test_the_database_holds_a_token_and_the_stack_reads_the_value(make_service, database_url):
    key = Fernet.generate_key().decode()
    service = make_service(database_url, encryption_keys=[key])
    service.create_stack("s", template(BODY))
    values = outputs(service, "s")
    password = values["password"]
    assert len(password) == 24 and values["held"] == password

    data = stored_data(database_url, "password")
    assert password not in repr(data)
    assert Fernet(key.encode()).decrypt(data["value"][SEALED].encode()) == f'"{password}"'.encode()
    # another engine with the key reads it, and an update keeps it sealed
    service.close()
    again = make_service(database_url, encryption_keys=[key])
    assert outputs(again, "s")["password"] == password
    assert again.update_stack("s", template(BODY.replace("outputs:", "  extra: {type: OS::Heat::None}\noutputs:"))).state == "UPDATE_COMPLETE"
    assert stored_data(database_url, "password")["value"][SEALED]
    assert outputs(again, "s")["password"] == password


def test_without_a_key_a_key_file_is_made_beside_the_sqlite_database(make_service, sqlite_url, tmp_path):
    service = make_service(sqlite_url)
    service.create_stack("s", template(BODY))
    key_file = tmp_path / "encryption.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    token = stored_data(sqlite_url, "password")["value"][SEALED]
    assert Fernet(key.encode()).decrypt(token.encode()).decode().strip('"') == outputs(service, "s")["password"]


def test_a_stack_without_secrets_never_needs_the_key(make_service, sqlite_url, tmp_path):
    service = make_service(sqlite_url)
    service.create_stack("plain", template("heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::TestResource}\n"))
    assert not (tmp_path / "encryption.key").exists()


def test_the_wrong_key_is_a_clear_error_and_loses_nothing(make_service, sqlite_url):
    first, other = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    service = make_service(sqlite_url, encryption_keys=[first])
    service.create_stack("s", template(BODY))
    password = outputs(service, "s")["password"]
    service.close()

    wrong = make_service(sqlite_url, encryption_keys=[other])
    with pytest.raises(SealingError, match="encrypted with a key this engine does not have.*STOKER_ENCRYPTION_KEY"):
        wrong.export_stack("s")
    wrong.close()
    # rotation: a new first key seals, the old one still opens
    rotated = make_service(sqlite_url, encryption_keys=[other, first])
    assert outputs(rotated, "s")["password"] == password
    assert rotated.export_stack("s")["resources"]["password"]["resource_data"] == {"value": password}


def test_a_key_that_is_no_fernet_key_says_how_to_make_one(make_service, sqlite_url):
    service = make_service(sqlite_url, encryption_keys=["not-a-key"])
    stack = service.create_stack("s", template(BODY))
    assert stack.state == "CREATE_FAILED"
    assert "must hold Fernet keys" in stack.status_reason and "Fernet.generate_key()" in stack.status_reason


def test_export_and_adopt_carry_the_plain_value(make_service):
    service = make_service(enable_stack_abandon=True, enable_stack_adopt=True)
    service.create_stack("old", template(BODY))
    password = outputs(service, "old")["password"]
    data = service.abandon_stack("old")
    assert data["resources"]["password"]["resource_data"] == {"value": password}
    assert service.adopt_stack("new", data).state == "ADOPT_COMPLETE"
    assert outputs(service, "new")["password"] == password


def test_processes_making_the_key_file_at_once_agree_on_one_key(tmp_path: Path):
    key_file = tmp_path / "keys" / "encryption.key"
    tokens: list[str] = []
    barrier = threading.Barrier(8)

    def seal() -> None:
        barrier.wait()
        tokens.append(Sealer(key_file=key_file).seal({"v": "secret"}, {"v"})["v"][SEALED])

    threads = [threading.Thread(target=seal) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reader = Sealer(key_file=key_file)
    assert all(reader.open({"v": {SEALED: token}}) == ({"v": "secret"}, {"v"}) for token in tokens)
    assert [p.name for p in key_file.parent.iterdir()] == ["encryption.key"]
