"""Production settings come from the environment (docs/deploy.md): with the documented variables
`manage.py check --deploy` prints no warning; without them it does; no key, no start."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION = {
    "DEBUG": "0",
    "HTTPS": "true",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "eval.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://eval.example.org",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "DATABASE_URL")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_with_the_documented_variables():
    result = manage("check", "--deploy", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr
    assert "WARNINGS" not in result.stderr


def test_check_deploy_warns_without_https():
    result = manage("check", "--deploy", **{**PRODUCTION, "HTTPS": "false"})
    for code in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert code in result.stderr, code


def test_production_without_secret_key_refuses_to_start():
    env = {k: v for k, v in PRODUCTION.items() if k != "SECRET_KEY"}
    result = manage("check", **env)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_https_settings_and_redis_cache_from_the_environment():
    code = ("from django.conf import settings as s; "
            "print(s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
            "s.SECURE_HSTS_SECONDS, s.CACHES['ratelimit']['BACKEND'], s.DATABASES['default']['CONN_HEALTH_CHECKS'])")
    result = manage("shell", "-v", "0", "-c", code, **PRODUCTION, REDIS_URL="redis://127.0.0.1:6390/0",
                    DATABASE_URL="postgres://postgres@127.0.0.1:5432/x")
    assert result.stdout.split() == ["True", "('HTTP_X_FORWARDED_PROTO',", "'https')", "True", "True", "31536000",
                                     "django.core.cache.backends.redis.RedisCache", "True"], result.stderr
