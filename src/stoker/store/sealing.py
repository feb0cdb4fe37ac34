"""Resource data a plugin stores with ``data_set(key, value, redact=True)`` (a key pair's
private key, a random password) is kept encrypted at rest, as Heat encrypts redacted
resource data with its ``auth_encryption_key``.

The plugin sees plain values; the stored row holds ``{"$sealed": "<Fernet token>"}`` in
place of each redacted value. Fernet (the ``cryptography`` package: AES-128-CBC with an
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

from sqlalchemy.engine import make_url

from stoker.sdk.exceptions import StokerError

SEALED = "$sealed"
KEY_VARIABLE = "STOKER_ENCRYPTION_KEY"


class SealingError(StokerError):
    """A sealed value cannot be opened (no key, or not the key it was sealed with)."""


def is_sealed(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(SEALED), str)


def default_key_file(database_url: str) -> Path:
    """``encryption.key`` beside an SQLite database file; otherwise in stoker's data directory."""
    try:
        url = make_url(database_url)
    except Exception:  # noqa: BLE001 - an odd URL is the store's error to report
        url = None
    if url is not None and url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return Path(url.database).expanduser().resolve().parent / "encryption.key"
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "stoker" / "encryption.key"


class Sealer:
    """Seals and opens the redacted values of resource data."""

    def __init__(self, keys: Iterable[str] | None = None, key_file: Path | None = None):
        self._given = [k.strip() for k in keys or () if k.strip()]
        self._key_file = key_file
        self._fernet: Any = None
        self._lock = threading.Lock()

    @classmethod
    def for_database(cls, database_url: str, keys: Iterable[str] | None = None) -> Sealer:
        if not keys and os.environ.get(KEY_VARIABLE):
            keys = os.environ[KEY_VARIABLE].split(",")
        return cls(keys, default_key_file(database_url))

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
                data[key] = self._open_value(key, value[SEALED])
                redacted.add(key)
        return data, redacted

    # -- keys ------------------------------------------------------------------------

    def _open_value(self, key: str, token: str) -> Any:
        from cryptography.fernet import InvalidToken

        try:
            return _load(self._cipher().decrypt(token.encode("ascii")))
        except InvalidToken:
            raise SealingError(
                f"The secret resource data {key!r} was encrypted with a key this engine does not have "
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
