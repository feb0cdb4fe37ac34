"""Ctrl-C during an action a command waits for (``stack create/update --wait``).

On the embedded engine the action runs in this process: the first Ctrl-C (SIGINT)
cancels it as ``stoker stack cancel`` does (the resources in progress end, then it
rolls back unless the stack has rollback disabled) and says what happened and what to
run next; a second one leaves at once, and the next ``stoker`` command that changes
stacks finishes what was left IN_PROGRESS. Against a server (``--url``) Ctrl-C only
stops the waiting: the server goes on with the action.

Where Ctrl-C only stops watching (against a server, and ``event list --follow``), the
handler itself says so and leaves at once (``os._exit``), as the second press does: a
KeyboardInterrupt raised into the waiting could land inside the HTTP client's or the
store's lock handling, or a finalizer that swallows it, and leave the process waiting.

Must not: touch the store from the signal handler itself (the main thread may be in
the middle of a store call): the cancel is asked on a thread of its own. The one
exception is leaving at once, which halts the store's writer and reads the stack's state
on a connection of its own (``Store.left_stack_state``), never through the pool.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

from stoker.cli.invocation import message, message_text
from stoker.cli.progress import Progress, is_terminal

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class Interruption:
    """Around an action of ``backend`` on stack ``name``; ``action``: create, update
    or delete (only a create or update can be cancelled)."""

    def __init__(self, backend: Any, name: str, action: str, progress: Progress):
        self.backend = backend
        self.name = name
        self.action = action
        self.progress = progress
        self.embedded = hasattr(backend, "cancel_acting")
        self.presses = 0
        self.cancelled: tuple[Any, bool] | None = None  # (the stack, it rolls back)
        self._ended = threading.Event()
        self._previous: Any = None
        self._handled = False

    def __enter__(self) -> Interruption:
        if threading.current_thread() is not threading.main_thread():
            return self
        if self.embedded and self.action in ("create", "update"):
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            self._handled = True
        elif not self.embedded:
            self._previous = signal.signal(signal.SIGINT, self._on_sigint_remote)
            self._handled = True
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _trace: object
    ) -> None:
        self._ended.set()
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
        if (
            kind is not None
            and issubclass(kind, KeyboardInterrupt)
            and (self._handled or not self.embedded)
        ):
            self.progress.close()
            if self.embedded:
                message(
                    "note",
                    f"Interrupted (Ctrl-C) before the {self.action} of stack {self.name} started: nothing was changed.",
                )
            else:
                message("note", self._stopped_waiting())
            sys.exit(EXIT_INTERRUPTED)

    def _stopped_waiting(self) -> str:
        return (
            f"Stopped waiting (Ctrl-C): the server goes on with the {self.action} of stack {self.name}. "
            f"Follow it with 'stoker stack event list {self.name} --follow'"
            + (
                f", or stop it with 'stoker stack cancel {self.name}'."
                if self.action in ("create", "update")
                else "."
            )
        )

    def _on_sigint_remote(self, _signal: int, _frame: Any) -> None:
        # Nothing here to stop or clean up: the server goes on with the action.
        leave_at_once(message_text("note", self._stopped_waiting()), EXIT_INTERRUPTED)

    def _on_sigint(self, _signal: int, _frame: Any) -> None:
        self.presses += 1
        if self.presses == 1:
            if self.backend.acting_on is None:
                raise KeyboardInterrupt  # nothing stored yet: stop where we are
            threading.Thread(target=self._cancel, name="stoker-cancel", daemon=True).start()
            return
        # Leave at once: no clean-up that could wait on a lock the main thread holds.
        # The state it is left in: nothing more commits, then its row is read (the cancel
        # may have begun the rollback, stored before its event reached the progress).
        state = self.backend.left_state() or self.progress.stack_state or f"{self.action.upper()}_IN_PROGRESS"
        if state.endswith("_IN_PROGRESS"):
            then = "the next stoker command that changes stacks finishes it."
        else:
            # The cancel had stored the action FAILED and its rollback had not begun: no
            # action is left to finish (recovery resumes IN_PROGRESS stacks only).
            then = (
                f"its rollback had not begun, and nothing finishes it: 'stoker stack delete "
                f"{self.name}', or an update, goes on from here."
            )
        left = message_text("note", f"Left at once (second Ctrl-C): stack {self.name} stays {state}; {then}")
        leave_at_once(left, EXIT_INTERRUPTED)

    def _cancel(self) -> None:
        self.progress.note(
            f"Ctrl-C: stopping the {self.action} of stack {self.name} (press Ctrl-C again to leave at once)..."
        )
        found = self.backend.cancel_acting(self._ended.is_set)
        if found is None:
            return
        self.cancelled = found
        _, rolls_back = found
        then = (
            "then it rolls back" if rolls_back else "it is not rolled back (rollback is disabled)"
        )
        self.progress.note(f"Cancelling: the resources in progress end, {then}.")

    def explain(self, stack: dict[str, Any]) -> None:
        """After the action: what a Ctrl-C did, and what to run next."""
        if not self.presses or self.cancelled is None:
            return
        name, state = stack["stack_name"], stack["stack_status"]
        if state.startswith("ROLLBACK_") and self.action == "create" or state.startswith("CREATE_"):
            then = f"delete it with 'stoker stack delete {name}', then create it again"
        else:
            then = f"run 'stoker stack update {name} ...' again when ready"
        message(
            "note",
            f"Interrupted (Ctrl-C): the {self.action} of stack {name} was cancelled and the stack is {state}. Next: {then}.",
        )


def leave_at_once(note: str | None, code: int) -> NoReturn:
    """From a SIGINT handler: what was printed so far flushed, ``note`` on stderr, and
    the process ended with ``code``, with no clean-up that could wait on a lock the
    interrupted main thread holds."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):  # RuntimeError: a reentrant flush
            pass
    if note is not None:
        if is_terminal(sys.stderr):
            note = "\x1b[?25h" + note  # a status line's hidden cursor shown again
        os.write(sys.stderr.fileno(), f"\n{note}\n".encode())
    os._exit(code)


@contextlib.contextmanager
def leaving_on_ctrl_c(code: int = 0) -> Iterator[None]:
    """Around a read that runs until Ctrl-C (``event list --follow``): Ctrl-C ends the
    process with ``code`` at once, what was printed flushed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda _signal, _frame: leave_at_once(None, code))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

