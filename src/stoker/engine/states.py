"""Actions and statuses of stacks and resources (``ACTION_STATUS``)."""

from enum import StrEnum


class Action(StrEnum):
    INIT = "INIT"
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    ROLLBACK = "ROLLBACK"
    SUSPEND = "SUSPEND"
    RESUME = "RESUME"
    CHECK = "CHECK"
    SNAPSHOT = "SNAPSHOT"
    ADOPT = "ADOPT"
    RESTORE = "RESTORE"


class Status(StrEnum):
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


STACK_TYPE = "OS::Heat::Stack"
