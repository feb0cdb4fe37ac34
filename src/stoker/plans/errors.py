"""Plan errors.

StokerError (stoker.sdk.exceptions)
  PlanError          a saved plan that cannot be read or applied as it is (400)
    StalePlanError   the stack or its inputs changed since the plan was made (409)
"""

from __future__ import annotations

from stoker.sdk.exceptions import StokerError


class PlanError(StokerError):
    pass


class StalePlanError(PlanError):
    pass
