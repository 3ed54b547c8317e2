"""A WSGI wrapper that profiles the app in each gunicorn worker (``bench/loadtest.py --profile``).

Every request runs under the worker's cProfile profiler; the worker writes its
statistics to ``$LOADTEST_PROFILE_DIR/worker-<pid>.prof`` when gunicorn stops
it, and the benchmark merges them (``profile_summary``). Profiling slows the
app down (roughly a third): use it to see where the time goes, not for the figures.
"""
from __future__ import annotations

import atexit
import cProfile
import io
import os
import pstats
from pathlib import Path
from typing import Any, Callable, Iterable


def _wrap() -> Callable[..., Iterable[bytes]]:
    from config.wsgi import application as app

    profiler = cProfile.Profile()
    out = Path(os.environ.get("LOADTEST_PROFILE_DIR", "."))

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        profiler.enable()
        try:
            return app(environ, start_response)
        finally:
            profiler.disable()

    atexit.register(lambda: profiler.dump_stats(str(out / f"worker-{os.getpid()}.prof")))
    return application


def profile_summary(directory: Path, *, limit: int = 25) -> str:
    """The merged profile of every worker: functions by cumulative time, then by own time."""
    files = sorted(str(p) for p in directory.glob("worker-*.prof"))
    if not files:
        return "(no profile written)"
    buf = io.StringIO()
    stats = pstats.Stats(*files, stream=buf)
    stats.strip_dirs()
    stats.sort_stats("cumulative").print_stats(limit)
    stats.sort_stats("tottime").print_stats(limit)
    return buf.getvalue()


if os.environ.get("LOADTEST_PROFILE_DIR"):
    application = _wrap()
