"""Engine errors.

    StokerError (stoker.sdk.exceptions)
      EngineError
        StackNotFoundError       no live stack by that name or id
        StackExistsError         a live stack already has that name
        ActionInProgressError    the stack is busy with another action
          StackChangedError      an action changed the stack while its drift was detected
        NothingToResumeError     a resumed job found its stack no longer in progress
        ActionStartedError       an accepted action's job found it started (or ended) already
        ActionFailedError        the stack action ended FAILED (carries the reason)
        NotSupportedError        what is kept but no longer offered (a HIDDEN type's schema)
        InvalidValueError        a request's value is none the engine knows (Heat's Invalid)
"""

from stoker.sdk.exceptions import StokerError


class EngineError(StokerError):
    pass


class StackNotFoundError(EngineError):
    def __init__(self, name: str):
        super().__init__(f"The Stack ({name}) could not be found.", hint="see 'stoker stack list'")


class StackExistsError(EngineError):
    def __init__(self, name: str):
        super().__init__(f"The Stack ({name}) already exists.", hint="choose another name or delete the old stack")


class ActionInProgressError(EngineError):
    def __init__(self, name: str, state: str):
        super().__init__(f"Stack {name} is busy: {state}", hint="wait for the action to finish")


class StackChangedError(ActionInProgressError):
    def __init__(self, name: str, state: str):
        EngineError.__init__(
            self,
            f"Stack {name} changed while its drift was detected (it is {state} now): the result was not kept",
            hint="detect the drift again once no action runs",
        )


class NothingToResumeError(EngineError):
    def __init__(self, name: str, state: str):
        super().__init__(f"Stack {name} is {state}: there is no action in progress to finish")


class ActionStartedError(EngineError):
    def __init__(self, name: str, action: str):
        super().__init__(f"Stack {name}: this {action} was started already (a job of it ran before): it is not started again")


class ActionFailedError(EngineError):
    pass


class NotSupportedError(EngineError):
    """Heat's NotSupported (400): ``<feature> is not supported.``"""

    def __init__(self, feature: str, hint: str | None = None):
        super().__init__(f"{feature} is not supported.", hint=hint)


class InvalidValueError(EngineError):
    """Heat's Invalid (400): ``Data supplied was not valid: <reason>``."""

    def __init__(self, reason: str):
        super().__init__(f"Data supplied was not valid: {reason}")
