"""The arithmetic of scaling groups, as Heat does it: a policy's adjustment turned into
a new capacity within the group's bounds, and the batches of a rolling update.

Pure functions of numbers; what a group and a policy do with them is theirs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

ADJUSTMENT_TYPES = (EXACT_CAPACITY, CHANGE_IN_CAPACITY, PERCENT_CHANGE_IN_CAPACITY) = (
    "exact_capacity",
    "change_in_capacity",
    "percent_change_in_capacity",
)


# The same adjustment types as AWS::AutoScaling::ScalingPolicy names them.
CFN_ADJUSTMENT_TYPES = (CFN_CHANGE_IN_CAPACITY, CFN_EXACT_CAPACITY, CFN_PERCENT_CHANGE_IN_CAPACITY) = (
    "ChangeInCapacity",
    "ExactCapacity",
    "PercentChangeInCapacity",
)
_FROM_CFN = dict(zip(CFN_ADJUSTMENT_TYPES, ADJUSTMENT_TYPES[1:2] + ADJUSTMENT_TYPES[:1] + ADJUSTMENT_TYPES[2:], strict=True))


def _percent_step(current: int, percent: float, min_step: int | None) -> int:
    """A percentage of ``current`` as a whole number of members: a change smaller than
    one member still moves one (rounded away from zero), a larger one is rounded
    toward zero; ``min_step`` raises the size of the step, keeping its sign."""
    delta = current * percent / 100.0
    if abs(delta) < 1.0:
        step = math.ceil(delta) if delta > 0 else math.floor(delta)
    else:
        step = math.floor(delta) if delta > 0 else math.ceil(delta)
    if min_step and min_step > abs(step):
        step = min_step if step > 0 else -min_step
    return int(step)


def new_capacity(
    current: int,
    adjustment: float,
    adjustment_type: str,
    min_step: int | None,
    lower: int,
    upper: int,
) -> int:
    """The capacity after ``adjustment`` of ``adjustment_type`` (either spelling), kept
    in [lower, upper]."""
    adjustment_type = _FROM_CFN.get(adjustment_type, adjustment_type)
    if adjustment_type == CHANGE_IN_CAPACITY:
        wanted = current + int(adjustment)
    elif adjustment_type == EXACT_CAPACITY:
        wanted = int(adjustment)
    else:
        wanted = current + _percent_step(current, adjustment, min_step)
    return max(lower, min(upper, wanted))


def batches(target: int, capacity: int, batch_size: int, min_in_service: int) -> Iterator[tuple[int, int]]:
    """The steps of a rolling update from ``capacity`` members to ``target``, each
    (the group's size after the step, how many members get the new definition in it:
    new members first, then existing ones). ``min_in_service`` members with either
    definition are kept throughout, so the group may grow above its target meanwhile."""
    updated = 0
    # Done when every member has the new definition and the size is the target.
    while not (updated >= capacity == target):
        floor = min(min_in_service, target, capacity)
        step = min(batch_size, max(target - updated, 0))
        capacity = step + max(min(capacity, target - step), floor)
        updated += step
        yield capacity, step
