"""The scaling arithmetic of resources/heat/capacity.py against Heat's rules."""

from __future__ import annotations

import pytest

from stoker.resources.heat.capacity import batches, new_capacity


@pytest.mark.parametrize(
    ("current", "adjustment", "adjustment_type", "min_step", "expected"),
    [
        (2, 1, "change_in_capacity", None, 3),
        (2, -3, "change_in_capacity", None, 1),  # min_size
        (2, 7, "exact_capacity", None, 5),  # max_size
        (4, 25, "percent_change_in_capacity", None, 5),  # exactly one member
        (4, 10, "percent_change_in_capacity", None, 5),  # under one member: one
        (4, -10, "percent_change_in_capacity", None, 3),
        (5, 50, "percent_change_in_capacity", None, 5),  # 2.5 -> 2, then max_size
        (4, -60, "percent_change_in_capacity", None, 2),  # -2.4 -> -2
        (4, 10, "percent_change_in_capacity", 3, 5),  # the step, then max_size
        (3, -10, "percent_change_in_capacity", 2, 1),
    ],
)
def test_new_capacity_follows_heat(current, adjustment, adjustment_type, min_step, expected):
    assert new_capacity(current, adjustment, adjustment_type, min_step, 1, 5) == expected


def test_batches_without_min_in_service_replace_in_place():
    assert list(batches(4, 4, 2, 0)) == [(4, 2), (4, 2)]
    assert list(batches(3, 3, 5, 0)) == [(3, 3)]


def test_batches_keep_min_in_service_by_growing_first():
    assert list(batches(2, 2, 1, 2)) == [(3, 1), (3, 1), (2, 0)]
    assert list(batches(3, 3, 1, 3)) == [(4, 1), (4, 1), (4, 1), (3, 0)]


def test_batches_shrink_to_a_smaller_target():
    assert list(batches(2, 4, 2, 0)) == [(2, 2)]
    assert list(batches(0, 0, 1, 0)) == []
