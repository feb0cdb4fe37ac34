"""Secrets at rest: what a copy of the database must not reveal is kept encrypted in it,
as Heat encrypts with its ``auth_encryption_key``.

- Resource data a plugin stores with ``data_set(key, value, redact=True)`` (a key pair's
  private key, a random password): each redacted value is sealed (``seal``/``open``).
- Whole columns that carry hidden parameter values or what is made from them (Heat's
  ``encrypt_parameters_and_properties``, on by default here): a stack's parameters,
  its environment, template and files (environment files among them), resources'
  properties, attributes and definitions, snapshots, software configs, software
  deployments' inputs, and the credentials stoker acts for a user with. Their columns
  are ``SealedJSON`` (tables.py): the value is sealed as it is bound and opened as it is
  read, so no other code sees the sealed form. A value stored before sealing was on is
  read as it is, and sealed at its next write.

The plugin sees plain values; the stored row holds ``{"$sealed": "<Fernet token>"}`` in
place of each sealed value. Fernet (the ``cryptography`` package: AES-128-CBC with an
HMAC-SHA256, versioned tokens) is made for exactly this, and ``MultiFernet`` gives key
rotation: the first key seals, every key opens.

Keys, first found wins:
- ``STOKER_ENCRYPTION_KEY`` (or ``Settings.encryption_keys``): Fernet keys separated by
  commas, the first one used to seal. Every engine and API worker sharing a database must
  have the key its values were sealed with.
- otherwise a key file, created on first need (mode 0600): ``encryption.key`` beside an
  SQLite database, or under ``$XDG_DATA_HOME/stoker`` for another database. Copying or
  leaking the database file alone then reveals no secret.

The key is read only when a sealed value is written or read, so stacks without secrets
never touch it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator

from stoker.sdk.exceptions import StokerError
from stoker.settings import store_directory

SEALED = "$sealed"
KEY_VARIABLE = "STOKER_ENCRYPTION_KEY"


class SealingError(StokerError):
    """A sealed value cannot be opened (no key, or not the key it was sealed with)."""


def is_sealed(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(SEALED), str)


def default_key_file(database_url: str) -> Path:
    """``encryption.key`` beside an SQLite database file; otherwise in stoker's data directory."""
    return store_directory(database_url) / "encryption.key"


class Sealer:
    """Seals and opens the redacted values of resource data."""

    def __init__(self, keys: Iterable[str] | None = None, key_file: Path | None = None, seal_columns: bool = True):
        self._given = [k.strip() for k in keys or () if k.strip()]
        # Seal the SealedJSON columns (STOKER_ENCRYPT_PARAMETERS_AND_PROPERTIES); the
        # credentials column is sealed whatever this says.
        self.seal_columns = seal_columns
        self._key_file = key_file
        self._fernet: Any = None
        self._lock = threading.Lock()
        if self._given:
            self._cipher()  # keys given are checked at once: a bad one stops the engine starting

    @classmethod
    def for_database(cls, database_url: str, keys: Iterable[str] | None = None, seal_columns: bool = True) -> Sealer:
        if not keys and os.environ.get(KEY_VARIABLE):
            keys = os.environ[KEY_VARIABLE].split(",")
        return cls(keys, default_key_file(database_url), seal_columns)

    # -- the stored form -------------------------------------------------------------

    def seal(self, data: Mapping[str, Any], redacted: Iterable[str]) -> dict[str, Any]:
        """``data`` as stored: every redacted key's value sealed (JSON inside)."""
        stored = dict(data)
        for key in redacted:
            if key in stored and not is_sealed(stored[key]):
                stored[key] = {SEALED: self._cipher().encrypt(_dump(stored[key])).decode("ascii")}
        return stored

    def open(self, stored: Mapping[str, Any] | None) -> tuple[dict[str, Any], set[str]]:
        """The plain data and the set of its redacted keys."""
        data = dict(stored or {})
        redacted: set[str] = set()
        for key, value in data.items():
            if is_sealed(value):
                data[key] = self._open_value(f"resource data {key!r}", value[SEALED])
                redacted.add(key)
        return data, redacted

    def seal_value(self, value: Any) -> dict[str, str]:
        """One whole value (a column's JSON document), sealed."""
        return {SEALED: self._cipher().encrypt(_dump(value)).decode("ascii")}

    def open_value(self, value: Any, what: str) -> Any:
        """A column's value as stored: opened if sealed, else as it is."""
        return self._open_value(what, value[SEALED]) if is_sealed(value) else value

    # -- keys ------------------------------------------------------------------------

    def _open_value(self, key: str, token: str) -> Any:
        from cryptography.fernet import InvalidToken

        try:
            return _load(self._cipher().decrypt(token.encode("ascii")))
        except InvalidToken:
            raise SealingError(
                f"The secret {key} was encrypted with a key this engine does not have "
                f"({self._where()}); set {KEY_VARIABLE} to the key (or keys, comma-separated) "
                "the engine that stored it used"
            )

    def _where(self) -> str:
        return f"keys from {KEY_VARIABLE}" if self._given else f"key file {self._key_file}"

    def _cipher(self) -> Any:
        with self._lock:
            if self._fernet is None:
                from cryptography.fernet import Fernet, MultiFernet

                keys = self._given or [self._file_key()]
                try:
                    self._fernet = MultiFernet([Fernet(k.encode("ascii")) for k in keys])
                except (ValueError, UnicodeEncodeError):
                    raise SealingError(
                        f"{KEY_VARIABLE} must hold Fernet keys (32 url-safe base64-encoded bytes), separated by "
                        'commas; make one with: python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
                    )
            return self._fernet

    def _file_key(self) -> str:
        """The key file's key, the file created with a new key if there is none yet (two
        processes creating it at once agree: only one creation succeeds)."""
        from cryptography.fernet import Fernet

        path = self._key_file or default_key_file("")
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        key = Fernet.generate_key()
        # Written whole under another name, then linked into place: a reader never sees a
        # half-written file, and a link that finds the name taken keeps the first key.
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(key + b"\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            return path.read_text().strip()
        finally:
            temporary.unlink()
        return key.decode("ascii")


def _dump(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _load(data: bytes) -> Any:
    import json

    return json.loads(data)


def json_type(dialect: Any) -> Any:
    """A JSON column's type on ``dialect``: JSONB on PostgreSQL, JSON elsewhere. Imported
    here, on first use, so that the embedded command on SQLite never loads the PostgreSQL
    dialect (every driver of it, ~25 ms of a read's start)."""
    if dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import JSONB

        return dialect.type_descriptor(JSONB())
    return dialect.type_descriptor(sa.JSON())


class JSONDocument(TypeDecorator):
    """A JSON column: JSONB on PostgreSQL, JSON elsewhere (``json_type``)."""

    impl = sa.JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Any) -> Any:
        return json_type(dialect)


class SealedJSON(TypeDecorator[Any]):
    """A JSON column (JSONB on PostgreSQL) whose values are sealed at rest by the store's
    sealer, found on the engine's dialect (``attach``): each Store has its own keys."""

    impl = sa.JSON
    cache_ok = True

    def __init__(self, what: str, always: bool = False):
        super().__init__()
        # What the column holds, for the error when its key is missing; ``always``: seal
        # even with encrypt_parameters_and_properties off (credentials).
        self.what = what
        self.always = always

    def load_dialect_impl(self, dialect: Any) -> Any:
        return json_type(dialect)

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        sealer: Sealer | None = getattr(dialect, SEALER_ATTRIBUTE, None)
        if value is None or sealer is None or is_sealed(value) or not (self.always or sealer.seal_columns):
            return value
        return sealer.seal_value(value)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        sealer: Sealer | None = getattr(dialect, SEALER_ATTRIBUTE, None)
        if not is_sealed(value) or sealer is None:
            # An engine stoker did not make (a tool, a test reading rows) sees the
            # sealed form: it has no key, and learns nothing from it.
            return value
        return sealer.open_value(value, self.what)


SEALER_ATTRIBUTE = "stoker_sealer"


def attach(engine: Any, sealer: Sealer) -> None:
    """Let ``engine``'s SealedJSON columns seal and open with ``sealer``. The dialect is
    the engine's own object (every engine made has a new one), shared by the engines
    derived with execution_options."""
    setattr(engine.dialect, SEALER_ATTRIBUTE, sealer)
