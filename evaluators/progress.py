"""Progress of long evaluation work, reported without knowing who listens.

Evaluator code calls :func:`report` (or wraps a loop in :func:`steps`) as it
goes; whoever runs the work decides where progress goes by installing a
listener with :func:`listening`: a background job writes it to its
``EvaluationJob`` row (the compare page's progress bar), the ``evaluate``
command draws a bar on a terminal, and with no listener the calls cost one
context-variable lookup.  A context variable, not a global, so two jobs in
two threads of one worker never mix their progress.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

Listener = Callable[[int, int, str], None]
T = TypeVar("T")

_listener: ContextVar[Listener | None] = ContextVar("evaluation_progress", default=None)


def report(done: int, total: int, label: str = "") -> None:
    """``done`` of ``total`` units of work are finished (``label``: what is being worked on)."""
    listener = _listener.get()
    if listener is not None:
        listener(done, total, label)


def steps(items: Iterable[T], total: int, label: str = "") -> Iterator[T]:
    """Yield ``items``, reporting progress as each one is finished (and 0 before the first)."""
    if _listener.get() is None:
        yield from items
        return
    report(0, total, label)
    done = 0
    for item in items:
        yield item
        done += 1
        report(done, total, label)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send the progress reported inside the block to ``listener``; nested blocks see their own."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
