"""gunicorn settings shared by the load benchmark's two apps (``bench/loadtest_servers.py``).

A Django worker loads the URL configuration — and with it every view module and
what those import: pandas and SciPy for the research pages — on its first
request: ~1.5 CPU-seconds each, which the first requests of a short run would
otherwise wait for. Loading it as the worker starts keeps that out of the
measurement (and is what a production gunicorn configuration would do too).
"""
from __future__ import annotations

from typing import Any


def post_worker_init(worker: Any) -> None:
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 — the attribute access imports the URLconf
