"""The baseline of the load benchmark: the least a Django app can do per request.

A separate, tiny project (no admin, no auth, no sessions, no middleware, no
DRF): ``GET /next`` is one indexed SELECT, ``POST /submit/<key>`` one INSERT.
``bench/loadtest.py`` serves it with the same gunicorn settings as the real
app, on the same PostgreSQL cluster, with the same clients, so the ratio of
the two throughputs is what the application itself costs.
"""
from __future__ import annotations

import os

import dj_database_url

DEBUG = False
SECRET_KEY = os.getenv("SECRET_KEY", "baseline-only-key")
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["rows"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "baseline_project.urls"
WSGI_APPLICATION = "baseline_project.wsgi.application"
DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"],
                                              conn_max_age=int(os.getenv("CONN_MAX_AGE", "60")))}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
