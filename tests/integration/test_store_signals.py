"""Signals and signal credentials in the store, and ``engine.signals`` over it, on a
SQLite file and on PostgreSQL (the ``store`` fixture runs each test on both)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from stoker.engine import signals
from stoker.engine.signals import ResourceSignals, SignalCredentialError
from stoker.identifiers import new_secret
from stoker.store import Store
from tests.support.records import make_stack, new_id


def test_signals_are_numbered_and_a_repeated_id_is_not_counted_twice(store: Store) -> None:
    stack = make_stack(store)
    resource = new_id()
    first, new = store.signals.add_signal(stack.id, resource, {"status": "SUCCESS"})
    assert (first.signal_id, first.ordinal, new) == ("1", 1, True)
    named, new = store.signals.add_signal(stack.id, resource, {"id": "x", "data": "ü"}, "x")
    assert (named.signal_id, named.ordinal, new) == ("x", 2, True)
    again, new = store.signals.add_signal(stack.id, resource, {"id": "x", "data": "changed"}, "x")
    assert (again.id, again.ordinal, new) == (named.id, 2, False)
    third, _ = store.signals.add_signal(stack.id, resource, {})
    assert third.signal_id == "3"
    listed = store.signals.list_signals(resource)
    assert [(s.signal_id, s.ordinal, s.details) for s in listed] == [("1", 1, {"status": "SUCCESS"}), ("x", 2, {"id": "x", "data": "changed"}), ("3", 3, {})]
    assert store.signals.list_signals(new_id()) == []
    store.signals.mark_signals_handled([listed[0].id])
    assert [s.handled_at is not None for s in store.signals.list_signals(resource)] == [True, False, False]
    assert store.signals.delete_signals(resource) == 3
    assert store.signals.list_signals(resource) == []


def test_signals_sent_at_once_each_get_their_own_number(store: Store) -> None:
    stack = make_stack(store)
    resource = new_id()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: store.signals.add_signal(stack.id, resource, {"n": n}), range(40)))
    listed = store.signals.list_signals(resource)
    assert sorted(int(s.signal_id) for s in listed) == list(range(1, 41))


def test_credentials_are_stored_hashed_checked_replaced_and_revoked(store: Store) -> None:
    stack = make_stack(store)
    resource = new_id()
    box = ResourceSignals(store, stack.id, resource)
    credential = box.issue_credential()
    assert credential.secret not in repr(credential)
    (stored,) = store.signals.signal_credentials(resource)
    assert stored.secret_hash == signals.secret_hash(credential.secret) != credential.secret
    assert signals.credential_valid(store, resource, credential.secret)
    assert not signals.credential_valid(store, new_id(), credential.secret)  # valid for that resource only
    assert signals.credential_by_url(store, credential.id, credential.secret).resource_uuid == resource
    with pytest.raises(SignalCredentialError) as refused:
        signals.credential_by_url(store, credential.id, "guess")
    assert "guess" not in str(refused.value)
    # a new one replaces it
    newer = box.issue_credential()
    assert not signals.credential_valid(store, resource, credential.secret)
    assert signals.credential_valid(store, resource, newer.secret)
    assert box.revoke_credentials() == 1
    assert not signals.has_credentials(store, resource)
    with pytest.raises(SignalCredentialError):
        signals.credential_by_url(store, newer.id, newer.secret)


def test_secrets_are_letters_and_digits_so_an_agents_command_line_takes_them() -> None:
    # token_urlsafe's "-" first broke ``cfn-get-metadata --secret-key -x...`` (argparse takes
    # it as an option); 2000 draws of an alphabet with "-" would begin with it ~30 times.
    drawn = [new_secret() for _ in range(2000)]
    assert {len(secret) for secret in drawn} == {43}
    assert all(secret.isascii() and secret.isalnum() for secret in drawn)
    assert len(set(drawn)) == 2000
    assert new_secret(32).isalnum() and len(new_secret(32)) == 32


def test_read_only_signals_refuse_writes(store: Store) -> None:
    box = ResourceSignals(store, make_stack(store).id, new_id(), read_only=True)
    assert box.received() == []
    with pytest.raises(Exception, match="nothing may be recorded"):
        box.add({})
    with pytest.raises(Exception, match="nothing may be recorded"):
        box.issue_credential()
