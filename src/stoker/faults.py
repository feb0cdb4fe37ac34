"""Fault injection for the crash tests: a process that stops itself at a named point.

Owns the one read of ``STOKER_FAULT_AT`` and the points a process honours. It must do
nothing else: unset (always, outside the tests), reaching a point is one comparison.

``STOKER_FAULT_AT=<point>`` SIGKILLs the process the first time it reaches ``<point>``;
``STOKER_FAULT_AT=<point>:STOP`` SIGSTOPs it there instead (once), so that a test can
let other processes act before it sends SIGCONT. The points:

- ``job-taken``: a worker has taken a stack job from the queue (procrastinate has it
  ``doing``) and has not run it yet (``workers.StackWorker._stack_job``, and
  ``_signal_job`` for a scaling signal's job).
- ``lock-taken``: a job holds its stack's lock and has recorded nothing yet, its action
  not IN_PROGRESS (``Engine.run``); a scaling signal holds the lock and its policy
  has not acted (``engine.scaling.signal``).
- ``token-saved``: a resource's handler has returned and its token is stored: the engine
  polls the resource from here (``engine.lifecycle._save_token``), and one that dies now
  is resumed, not failed.
- ``delete-complete``: a delete has recorded its stack DELETE_COMPLETE and has not yet
  deleted the stack's resource rows nor marked the stack deleted (``engine.delete``).
- ``stalled-jobs-listed``: a worker's recovery round has listed the stalled jobs of
  dead workers (at least one) and has not settled them yet (``workers.StackWorker``).

The store's writer has a fault of its own, by count: ``STOKER_FAULT_KILL_AFTER_COMMITS``
(store/writer.py).
"""

from __future__ import annotations

import os
import signal

_POINT, _, _HOW = (os.environ.get("STOKER_FAULT_AT") or "").partition(":")
_reached = False


def point(name: str) -> None:
    """Stop this process here when ``STOKER_FAULT_AT`` names this point."""
    global _reached
    if name != _POINT or _reached:
        return
    _reached = True
    os.kill(os.getpid(), signal.SIGSTOP if _HOW.upper() == "STOP" else signal.SIGKILL)
