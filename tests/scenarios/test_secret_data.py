"""Secrets at rest: secret resource data (``data_set(..., redact=True)``) and, with Heat's
``encrypt_parameters_and_properties`` (on by default), hidden parameter values and
everything made from them are encrypted in the database: it holds Fernet tokens, the
plugin and the user read the values, and a copy of the database file reveals none."""

from __future__ import annotations

import json
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


def stored_data(url: str, name: str, sealer: Sealer) -> dict:
    """The resource's data as stored, the sealed column opened (its redacted values
    still sealed one by one)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            text = connection.execute(sa.text("SELECT data FROM resources WHERE name = :name"), {"name": name}).scalar_one()
    finally:
        engine.dispose()
    stored = text if isinstance(text, dict) else json.loads(text)
    assert set(stored) == {SEALED}
    return sealer.open_value(stored, "resource data")


def outputs(service, stack: str) -> dict:
    return {o["output_key"]: o["output_value"] for o in service.outputs(stack)}


def test_the_database_holds_a_token_and_the_stack_reads_the_value(make_service, database_url):
    key = Fernet.generate_key().decode()
    service = make_service(database_url, encryption_keys=[key])
    service.create_stack("s", template(BODY))
    values = outputs(service, "s")
    password = values["password"]
    assert len(password) == 24 and values["held"] == password

    data = stored_data(database_url, "password", Sealer([key]))
    assert password not in repr(data)
    assert Fernet(key.encode()).decrypt(data["value"][SEALED].encode()) == f'"{password}"'.encode()
    # another engine with the key reads it, and an update keeps it sealed
    service.close()
    again = make_service(database_url, encryption_keys=[key])
    assert outputs(again, "s")["password"] == password
    assert again.update_stack("s", template(BODY.replace("outputs:", "  extra: {type: OS::Heat::None}\noutputs:"))).state == "UPDATE_COMPLETE"
    assert stored_data(database_url, "password", Sealer([key]))["value"][SEALED]
    assert outputs(again, "s")["password"] == password


def test_without_a_key_a_key_file_is_made_beside_the_sqlite_database(make_service, sqlite_url, tmp_path):
    service = make_service(sqlite_url)
    service.create_stack("s", template(BODY))
    key_file = tmp_path / "encryption.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    token = stored_data(sqlite_url, "password", Sealer(key_file=key_file))["value"][SEALED]
    assert Fernet(key.encode()).decrypt(token.encode()).decode().strip('"') == outputs(service, "s")["password"]


def test_without_sealed_columns_a_stack_without_secrets_never_needs_the_key(make_service, sqlite_url, tmp_path):
    service = make_service(sqlite_url, encrypt_parameters_and_properties=False)
    service.create_stack("plain", template("heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::TestResource}\n"))
    assert not (tmp_path / "encryption.key").exists()
    assert stored_columns(sqlite_url, tables.stacks.c.parameters) == [{}]


HIDDEN = """
heat_template_version: 2021-04-16
parameters:
  db_password: {type: string, hidden: true}
  size: {type: number, default: 3}
resources:
  holder:
    type: OS::Heat::TestResource
    properties: {value: {list_join: ["-", ["user", {get_param: db_password}]]}}
  echo:
    type: OS::Heat::Value
    properties: {value: {get_param: db_password}}
outputs:
  held: {value: {get_attr: [holder, output]}}
"""
PASSWORD = "s3cret-Pa55word-of-a-user"


def stored_columns(url: str, column: sa.Column) -> list:
    """The column's values as the database holds them (JSON, not opened)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(sa.text(f"SELECT {column.name} FROM {column.table.name}"))
            return [value if isinstance(value, dict) else json.loads(value) for (value,) in rows]
    finally:
        engine.dispose()


def every_stored_text(url: str) -> str:
    """Every row of every table as the database returns it, without stoker's types."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return "\n".join(
                repr(row) for table in tables.metadata.sorted_tables for row in connection.execute(sa.text(f'SELECT * FROM "{table.name}"'))
            )
    finally:
        engine.dispose()


def test_hidden_parameters_and_what_is_made_of_them_are_sealed_at_rest(make_service, database_url, tmp_path):
    key = Fernet.generate_key().decode()
    service = make_service(database_url, encryption_keys=[key])
    environment = tmp_path / "env.yaml"
    environment.write_text(f"parameter_defaults:\n  db_password: {PASSWORD}\n")
    from stoker.service import Source

    stack = service.create_stack("s", template(HIDDEN), environments=[Source(environment.read_text(), str(environment))])
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert {o["output_key"]: o["output_value"] for o in service.outputs("s")}["held"] == f"user-{PASSWORD}"
    snapshot = service.create_snapshot("s", "before")
    assert snapshot.status == "COMPLETE"
    assert service.update_stack("s", template(HIDDEN), parameters={"db_password": PASSWORD + "2"}, existing=True).state == "UPDATE_COMPLETE"

    # The engine reads the values back (a restore, a rollback's old parameters)...
    assert service.restore_snapshot("s", snapshot.id).state == "RESTORE_COMPLETE"
    assert service.stack_parameters(service.get_stack("s"))["db_password"] == "******"
    assert service.export_stack("s")["environment"]["parameter_defaults"]["db_password"] == PASSWORD
    # ...and no row of any table holds them: the columns carry Fernet tokens.
    stored = every_stored_text(database_url)
    assert PASSWORD not in stored
    assert "s3cret" not in stored
    assert all(set(value) == {SEALED} for value in stored_columns(database_url, tables.stacks.c.parameters))
    environments = [Fernet(key.encode()).decrypt(value[SEALED].encode()).decode() for value in stored_columns(database_url, tables.raw_templates.c.environment)]
    assert any(PASSWORD in text for text in environments)
    if database_url.startswith("sqlite"):
        # A copy of the file (and its write-ahead log) holds no trace of them either.
        path = Path(database_url.split(":///", 1)[1])
        for copy in (path, path.with_name(path.name + "-wal")):
            if copy.exists():
                assert PASSWORD.encode() not in copy.read_bytes()


def test_a_database_written_without_sealing_is_read_and_sealed_at_the_next_write(make_service, sqlite_url):
    plain = make_service(sqlite_url, encrypt_parameters_and_properties=False)
    plain.create_stack("s", template(HIDDEN), parameters={"db_password": PASSWORD})
    assert PASSWORD in every_stored_text(sqlite_url)
    plain.close()

    sealing = make_service(sqlite_url)
    assert {o["output_key"]: o["output_value"] for o in sealing.outputs("s")}["held"] == f"user-{PASSWORD}"
    assert sealing.update_stack("s", template(HIDDEN), parameters={"db_password": "another-secret-value"}, existing=True).state == "UPDATE_COMPLETE"
    assert "another-secret-value" not in every_stored_text(sqlite_url)
    assert all(set(value) == {SEALED} for value in stored_columns(sqlite_url, tables.stacks.c.parameters))


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


def test_a_key_that_is_no_fernet_key_stops_the_engine_and_says_how_to_make_one(make_service, sqlite_url):
    with pytest.raises(SealingError, match=r"must hold Fernet keys.*Fernet\.generate_key\(\)"):
        make_service(sqlite_url, encryption_keys=["not-a-key"])


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


DEPLOYED = """
heat_template_version: 2021-04-16
parameters:
  db_password: {type: string, hidden: true}
resources:
  server:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_TEMP_URL}
  config:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, inputs: [{name: db_password}], config: "#!/bin/sh\\n"}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: NO_SIGNAL
      input_values: {db_password: {get_param: db_password}}
"""


def test_software_configs_and_deployments_written_in_clear_are_read_and_sealed_at_the_next_action(make_service, database_url):
    # Rows of a database older than sealing them (and than their masked copies, which
    # migration 0013 adds empty): read as they are, and replaced sealed and masked by
    # the deployment's next action.
    key = Fernet.generate_key().decode()  # secret resource data is sealed whatever the setting
    plain = make_service(database_url, encrypt_parameters_and_properties=False, encryption_keys=[key])
    assert plain.create_stack("s", template(DEPLOYED), parameters={"db_password": PASSWORD}).state == "CREATE_COMPLETE"
    plain.close()
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(sa.text("UPDATE software_config SET shown = NULL"))
            connection.execute(sa.text("UPDATE software_deployments SET shown_input_values = NULL"))
    finally:
        engine.dispose()
    assert PASSWORD in every_stored_text(database_url)

    sealing = make_service(database_url, encryption_keys=[key])
    stack = sealing.get_stack("s")
    (old,) = sealing.resource_metadata(stack, "server")["deployments"]
    # Without its masked copy, the server's stack masks the value it knows.
    assert {item["name"]: item["value"] for item in old["inputs"]}["db_password"] == "******"
    assert {item["name"]: item["value"] for item in sealing.store.software_configs.get_software_config(old["id"]).config["inputs"]}["db_password"] == PASSWORD

    updated = sealing.update_stack("s", template(DEPLOYED), parameters={"db_password": "another-secret-value"}, existing=True)
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    (new,) = sealing.resource_metadata(sealing.get_stack("s"), "server")["deployments"]
    assert {item["name"]: item["value"] for item in new["inputs"]}["db_password"] == "******"
    # The new derived config and the deployment are sealed; the engine reads the value.
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as connection:
            stored = connection.execute(sa.text("SELECT config FROM software_config WHERE id = :id"), {"id": new["id"]}).scalar_one()
    finally:
        engine.dispose()
    assert set(stored if isinstance(stored, dict) else json.loads(stored)) == {SEALED}
    assert all(set(value) == {SEALED} for value in stored_columns(database_url, tables.software_deployments.c.input_values))
    derived = sealing.store.software_configs.get_software_config(new["id"])
    assert {item["name"]: item["value"] for item in derived.config["inputs"]}["db_password"] == "another-secret-value"
    assert "another-secret-value" not in every_stored_text(database_url)
