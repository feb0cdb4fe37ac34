"""stoker.engine.collector: the collector's thresholds while actions run."""

from __future__ import annotations

import gc

import pytest

from stoker.engine import collector


@pytest.fixture(autouse=True)
def keep_thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_relaxed_raises_the_young_threshold_and_restores_it():
    gc.set_threshold(700, 10, 10)

    with collector.relaxed():
        assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, 10, 10)

    assert gc.get_threshold() == (700, 10, 10)


def test_relaxed_overlapping_actions_restore_once_the_last_ends():
    gc.set_threshold(700, 10, 10)
    first, second = collector.relaxed(), collector.relaxed()

    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to start ends first
    assert gc.get_threshold()[0] == collector.YOUNG_THRESHOLD
    second.__exit__(None, None, None)

    assert gc.get_threshold() == (700, 10, 10)


def test_relaxed_keeps_a_threshold_already_higher():
    gc.set_threshold(collector.YOUNG_THRESHOLD * 2, 5, 5)

    with collector.relaxed():
        assert gc.get_threshold() == (collector.YOUNG_THRESHOLD * 2, 5, 5)


def test_relaxed_restores_after_an_error():
    gc.set_threshold(700, 10, 10)

    with pytest.raises(RuntimeError), collector.relaxed():
        raise RuntimeError("boom")

    assert gc.get_threshold() == (700, 10, 10)
