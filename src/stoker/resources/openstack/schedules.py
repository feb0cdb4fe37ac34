"""Heat's common custom constraints on schedules (``cron_expression``, ``timezone``), as
the alarms' ``time_constraints`` use them: checked locally, no cloud asked.

A cron expression is what croniter accepts (Heat's check; croniter comes with
procrastinate); a time zone is an IANA name the zone database knows (Heat asks pytz, whose
database is the same).
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["CronExpression", "Timezone", "constraint_mapping"]


class _ScheduleConstraint:
    name: ClassVar[str] = ""

    def __init__(self) -> None:
        self.reason = ""

    def validate(self, value: Any, context: Any = None, template: Any = None) -> bool:
        if not value:
            return True
        try:
            self.check(str(value))
        except Exception as error:  # noqa: BLE001 - croniter's and zoneinfo's many types
            self.reason = str(error) or type(error).__name__
            return False
        return True

    def check(self, value: str) -> None:
        raise NotImplementedError


class CronExpression(_ScheduleConstraint):
    name = "cron_expression"

    def check(self, value: str) -> None:
        import croniter

        croniter.croniter(value)

    def error(self, value: Any) -> str:
        return f"Invalid CRON expression: {self.reason}"


class Timezone(_ScheduleConstraint):
    name = "timezone"

    def check(self, value: str) -> None:
        import zoneinfo

        if "\\" in value or value.startswith("/") or ".." in value:
            raise ValueError(repr(value))
        try:
            zoneinfo.ZoneInfo(value)
        except zoneinfo.ZoneInfoNotFoundError:
            # pytz's message (Heat's): the name, quoted.
            raise ValueError(repr(value)) from None

    def error(self, value: Any) -> str:
        return f"Invalid timezone: {self.reason}"


def constraint_mapping() -> dict[str, type[_ScheduleConstraint]]:
    return {constraint.name: constraint for constraint in (CronExpression, Timezone)}
