"""Settings for the discourse-MT evaluation project.

One module, driven by environment variables with small typed helpers. With no
variables set it runs on an embedded SQLite database; ``DATABASE_URL`` switches
to PostgreSQL (``postgres://user@127.0.0.1:5432/name``). Production variables
(``HTTPS``, ``REDIS_URL``, the rate limits, …) are listed in docs/deploy.md.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def envbool(name: str, default: str = "False") -> bool:
    """A yes/no variable: one of TRUE_WORDS or FALSE_WORDS (any case), empty or unset for the default.

    Anything else refuses to start: a typo such as HTTPS=ture must not quietly mean "off".
    """
    raw = os.getenv(name, "")
    value = (raw.strip() or default).lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a yes/no value: use one of {', '.join(TRUE_WORDS)} (on) or "
        f"{', '.join(FALSE_WORDS)} (off), in any case; empty or unset means {default.lower()} (docs/deploy.md).")


def envint(name: str, default: str) -> int:
    return int(os.getenv(name, default))


def envlist(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.getenv(name, default).split(",") if part.strip()]


DEBUG = envbool("DEBUG", "False")
HTTPS = envbool("HTTPS", "False")
# The key: the SECRET_KEY variable, else the file SECRET_KEY_FILE (default .secret_key, git-ignored,
# which `make demo` and `make test` fill with a random key), else — only with DEBUG explicitly on —
# a published development key. Anything else refuses to start (docs/deploy.md).
DEVELOPMENT_SECRET_KEY = "insecure-development-key-change-me"
SECRET_KEY_FILE = Path(os.getenv("SECRET_KEY_FILE", str(BASE_DIR / ".secret_key")))
SECRET_KEY = os.getenv("SECRET_KEY", "").strip()
if not SECRET_KEY and SECRET_KEY_FILE.is_file():
    SECRET_KEY = SECRET_KEY_FILE.read_text(encoding="utf-8").strip()
if not SECRET_KEY and DEBUG and not HTTPS:
    SECRET_KEY = DEVELOPMENT_SECRET_KEY
if not SECRET_KEY or (SECRET_KEY == DEVELOPMENT_SECRET_KEY and (HTTPS or not DEBUG)):
    raise ImproperlyConfigured(
        "SECRET_KEY must be set: export SECRET_KEY=<50 random characters> (docs/deploy.md), or put one in "
        f"{SECRET_KEY_FILE} (`make demo` writes a random one). The published development key is only "
        "used with DEBUG=1.")
#: Django's own bar for a strong key (its check security.W009, which only warns): behind HTTPS, i.e. in
#: production, a weaker key refuses to start, since it signs sessions, CSRF tokens and password resets.
SECRET_KEY_MIN_LENGTH, SECRET_KEY_MIN_DISTINCT = 50, 5
if HTTPS and (len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH or len(set(SECRET_KEY)) < SECRET_KEY_MIN_DISTINCT
              or SECRET_KEY.startswith("django-insecure-")):
    raise ImproperlyConfigured(
        f"SECRET_KEY is too weak for HTTPS=true: it has {len(SECRET_KEY)} characters, {len(set(SECRET_KEY))} of "
        f"them distinct; it needs at least {SECRET_KEY_MIN_LENGTH} characters and {SECRET_KEY_MIN_DISTINCT} "
        "distinct ones, and no 'django-insecure-' prefix. Make one with: python -c \"import secrets; "
        "print(secrets.token_urlsafe(50))\" (docs/deploy.md).")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")
SITE_URL = os.getenv("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

if HTTPS:
    # Behind a TLS proxy (docs/deploy.md): the proxy terminates TLS and says so in a header,
    # which Django may only trust because the proxy overwrites whatever the client sent.
    _proxy_header = os.getenv("SECURE_PROXY_SSL_HEADER", "HTTP_X_FORWARDED_PROTO").strip()
    if _proxy_header:
        SECURE_PROXY_SSL_HEADER = (_proxy_header, "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = envint("HSTS_SECONDS", "31536000")
    SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("HSTS_INCLUDE_SUBDOMAINS", "true")
    SECURE_HSTS_PRELOAD = envbool("HSTS_PRELOAD", "true")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files for /api/v1/docs/, served as our static files
    "django_htmx",
    "django_tasks",
    "django_tasks_db",
    "studies",
    "annotation",
    "evaluators",
    "research",
    "config",  # the project's own table: the rate-limit counters without Redis (config/ratelimit.py)
    # The annotation protocols: one app each registers its spec (docs/architecture.md, "How to add a protocol").
    "protocols",
    "protocols.ranking",
    "protocols.choice",
    "protocols.judgment",
    "protocols.mqm",
    "protocols.esa",
    "protocols.pairwise",
]

MIDDLEWARE = [
    # Outermost: every response says what the access log may keep of its path (no token, no query string).
    "config.logpath.LogPathMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before everything that reads the body or the database: 413 for oversize API bodies,
    # 429 for an address over its rate limit, 503 when the database is unreachable.
    "config.middleware.ApiGuardMiddleware",
    # The annotation API's next and submit, answered here for the ordinary request: no URL resolution, no DRF
    # dispatch, none of the middleware below, the same answers (annotation/api/fastpath.py, docs/load.md).
    "annotation.api.fastpath.AnnotationFastPathMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASE_URL = os.getenv("DATABASE_URL", "")
if DATABASE_URL:
    # Health checks: a persistent connection that died while the worker was idle (PostgreSQL
    # restarted) is replaced before the next request instead of failing it.
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=envint("CONN_MAX_AGE", "60"),
                                                  conn_health_checks=True)}
    # One test database per process, so concurrent test runs never drop each other's.
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.getenv("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # IMMEDIATE takes the write lock when a transaction starts, so two
            # annotators handed work at the same moment are serialised instead of
            # both reading a stale count (PostgreSQL uses row locks instead).
            "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
            # A file (not Django's in-memory default) so threads — the live server of
            # browser tests, concurrency tests — share the test database; one per process.
            "TEST": {"NAME": os.path.join(tempfile.gettempdir(), f"dmt-test-{os.getpid()}.sqlite3")},
        }
    }

# The annotation hot path's fixed statements are prepared on each PostgreSQL connection
# (annotation/handout/statements.py): False for a transaction pooler that cannot keep prepared
# statements (PgBouncer before 1.21).
DB_PREPARED_STATEMENTS = envbool("DB_PREPARED_STATEMENTS", "True")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# One Redis shared by every app server when REDIS_URL is set (rate limits must be counted
# across servers; the report caches are keyed by content, so sharing them is safe), else
# per-process memory for reports. With Redis, the rate-limit counters are its own "ratelimit"
# alias (clearing it never drops reports); without, there is no such alias and they are rows
# of this database's config_ratelimitcounter table (config/models.py, created by `migrate`),
# which every gunicorn worker — and every app server on the same database — sees, so the limit
# is not multiplied by the worker count (config/ratelimit.py).
REDIS_URL = os.getenv("REDIS_URL", "")
CACHES: dict[str, dict[str, object]]
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL},
        "ratelimit": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                      "KEY_PREFIX": "ratelimit"},
    }
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "default"},
    }

# Background work (evaluators, large score imports, large comparisons) runs as tasks of
# Django's Tasks framework (the django-tasks backport), never inside a web request; see
# docs/deploy.md. TASKS_BACKEND: "database" (default: the tasks table of this database, run by
# `python manage.py db_worker`; `make demo` starts one), "rq" (the Redis of REDIS_URL, run by
# `python manage.py rqworker default --job-class django_tasks_rq.Job` on any number of
# machines) or "immediate" (run inside the call that queues it: tests, and one-off scripts).
TASKS_BACKEND = os.getenv("TASKS_BACKEND", "database")
_TASK_BACKENDS = {
    "database": "django_tasks_db.DatabaseBackend",
    "rq": "django_tasks_rq.RQBackend",
    "immediate": "django_tasks.backends.immediate.ImmediateBackend",
}
if TASKS_BACKEND not in _TASK_BACKENDS:
    raise ImproperlyConfigured(f"TASKS_BACKEND={TASKS_BACKEND!r}: use one of {', '.join(_TASK_BACKENDS)}")
if TASKS_BACKEND == "rq":
    if not REDIS_URL:
        raise ImproperlyConfigured("TASKS_BACKEND=rq needs REDIS_URL (the Redis the workers take tasks from)")
    INSTALLED_APPS.append("django_rq")
    RQ_QUEUES = {"default": {"URL": REDIS_URL, "DEFAULT_TIMEOUT": envint("TASK_TIMEOUT", "21600")}}
# A comparison of a study with more judgments than this is computed by a background task.
COMPARE_INLINE_JUDGMENTS = envint("COMPARE_INLINE_JUDGMENTS", "20000")
# ... or with more stored evaluator scores than this (each evaluator's item-level statistics cost per score).
COMPARE_INLINE_SCORES = envint("COMPARE_INLINE_SCORES", "20000")
# An uploaded score file larger than this (bytes) is imported by a background task.
SCORE_IMPORT_INLINE_BYTES = envint("SCORE_IMPORT_INLINE_BYTES", "1000000")
TASKS = {"default": {"BACKEND": _TASK_BACKENDS[TASKS_BACKEND], "QUEUES": ["default"]}}

# Rate limits per client address, "<count>/<seconds>" (config/ratelimit.py, docs/deploy.md):
# failed token authentications (API 401s, unknown invitation links) and Prolific entries.
RATELIMIT_INVALID_TOKENS = os.getenv("RATELIMIT_INVALID_TOKENS", "20/60")
RATELIMIT_PROLIFIC = os.getenv("RATELIMIT_PROLIFIC", "30/60")
# How many proxies in front of the app append to X-Forwarded-For (0: use REMOTE_ADDR and
# ignore the header, which any client can forge).
RATELIMIT_TRUSTED_PROXIES = envint("RATELIMIT_TRUSTED_PROXIES", "0")
# Largest request body (bytes) Django reads: API bodies over it get 413 JSON.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", str(2_621_440))
# Seconds the 503 of an unreachable database tells clients to wait (Retry-After): about how
# long a restarted PostgreSQL takes to accept connections again (docs/deploy.md).
DB_UNAVAILABLE_RETRY_AFTER = envint("DB_UNAVAILABLE_RETRY_AFTER", "5")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
# Languages of the annotator interface (translations in locale/, compiled by make). Only the
# annotator's pages switch language (annotation/pages/views.py activates it per request, from the
# study's interface_language or the browser's Accept-Language); researcher and admin pages stay
# in English, so there is no LocaleMiddleware.
LANGUAGES = [
    ("en", "English"),
    ("fr", "Français"),
    ("de", "Deutsch"),
    ("es", "Español"),
    ("zh-hans", "简体中文"),
    ("ar", "العربية"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "admin:login"

REST_FRAMEWORK = {
    # Token first: DRF answers an anonymous request with the first class's header, so every
    # researcher endpoint gives 401 + "WWW-Authenticate: Token" (Session first would give 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "config.errors.api_exception_handler",
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Discourse MT human evaluation API",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "annotation.api.schema.judgment_in_requires_an_answer",
        "config.schema.add_error_responses",
    ],
    # /api/v1/docs/ loads Swagger UI from drf-spectacular-sidecar's static files, never a CDN;
    # no validator badge (it would fetch validator.swagger.io).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # deepLinking off: with it on, each operation's path is a link inside its expand button
    # (axe nested-interactive); templates/drf_spectacular/swagger_ui.html sets lang and colours.
    "SWAGGER_UI_SETTINGS": {"deepLinking": False, "validatorUrl": None},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "WARNING")},
}
