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


#: No key file: the checkout's own .secret_key (written by `make demo`/`make test`) must not hide a missing key.
NO_KEY_FILE = str(ROOT / "tests" / "config" / "no-such-secret-key-file")


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "DATABASE_URL")}
    base["SECRET_KEY_FILE"] = NO_KEY_FILE
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


def test_no_debug_and_no_key_refuses_to_start_naming_the_variable():
    """A fresh deployment that sets nothing (DEBUG unset, no SECRET_KEY, no key file) does not start
    on the published development key."""
    assert not Path(NO_KEY_FILE).exists()
    result = manage("check")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr and "DEBUG=1" in result.stderr, result.stderr[-2000:]


def test_the_published_development_key_is_refused_without_debug():
    from config.settings import DEVELOPMENT_SECRET_KEY
    for env in ({}, {"DEBUG": "0"}, {"DEBUG": "1", "HTTPS": "true"}):
        result = manage("check", SECRET_KEY=DEVELOPMENT_SECRET_KEY, **env)
        assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr, env


def test_https_with_debug_on_still_needs_a_key():
    result = manage("check", DEBUG="1", HTTPS="true")
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_debug_explicitly_on_starts_with_the_development_key():
    code = "from django.conf import settings as s; print(s.DEBUG, s.SECRET_KEY)"
    result = manage("shell", "-v", "0", "-c", code, DEBUG="1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["True", "insecure-development-key-change-me"]


def test_the_key_file_is_read_when_the_variable_is_unset(tmp_path):
    """What `make demo` relies on: a random key in a git-ignored file, DEBUG left off."""
    key = secrets.token_urlsafe(50)
    (tmp_path / "key").write_text(key + "\n")
    code = "from django.conf import settings as s; print(s.DEBUG, s.SECRET_KEY)"
    result = manage("shell", "-v", "0", "-c", code, SECRET_KEY_FILE=str(tmp_path / "key"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["False", key]
    # The variable wins over the file.
    result = manage("shell", "-v", "0", "-c", code, SECRET_KEY_FILE=str(tmp_path / "key"), SECRET_KEY="from-env-" + key)
    assert result.stdout.split() == ["False", "from-env-" + key]


def test_make_writes_the_demo_key_to_a_git_ignored_file():
    makefile = (ROOT / "Makefile").read_text()
    assert "\n.secret_key:\n" in makefile
    for target in ("demo", "test", "messages", "typecheck"):
        [line] = [ln for ln in makefile.splitlines() if ln.startswith(f"{target}:")]
        assert ".secret_key" in line, target
    ignored = subprocess.run(["git", "check-ignore", "-q", ".secret_key"], cwd=ROOT)
    assert ignored.returncode == 0


def test_https_settings_and_redis_cache_from_the_environment():
    code = ("from django.conf import settings as s; "
            "print(s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
            "s.SECURE_HSTS_SECONDS, s.CACHES['ratelimit']['BACKEND'], s.DATABASES['default']['CONN_HEALTH_CHECKS'])")
    result = manage("shell", "-v", "0", "-c", code, **PRODUCTION, REDIS_URL="redis://127.0.0.1:6390/0",
                    DATABASE_URL="postgres://postgres@127.0.0.1:5432/x")
    assert result.stdout.split() == ["True", "('HTTP_X_FORWARDED_PROTO',", "'https')", "True", "True", "31536000",
                                     "django.core.cache.backends.redis.RedisCache", "True"], result.stderr


def test_https_refuses_a_short_or_repetitive_secret_key():
    """Django's W009 only warns; behind HTTPS a weak key stops start-up (docs/deploy.md)."""
    for key, why in (("k" * 20 + "abcde", "25 characters"), ("abab" * 20, "2 of them distinct"),
                     ("django-insecure-" + secrets.token_urlsafe(50), "django-insecure-")):
        result = manage("check", **{**PRODUCTION, "SECRET_KEY": key})
        assert result.returncode != 0, key
        assert "SECRET_KEY is too weak for HTTPS=true" in result.stderr and why in result.stderr, result.stderr[-800:]
    strong = manage("check", **{**PRODUCTION, "SECRET_KEY": "abcde" * 10})  # 50 characters, 5 distinct: enough
    assert strong.returncode == 0, strong.stderr[-800:]
    # Without HTTPS (a development checkout) a short key still starts, as before.
    assert manage("check", DEBUG="1", SECRET_KEY="short-dev-key").returncode == 0


def test_a_yes_no_variable_refuses_an_unknown_value_naming_it_and_the_accepted_ones():
    for name, value in (("HTTPS", "ture"), ("DEBUG", "yes please"), ("HSTS_PRELOAD", "2")):
        env = {**PRODUCTION, name: value} if name != "DEBUG" else {name: value, "SECRET_KEY": PRODUCTION["SECRET_KEY"]}
        result = manage("check", **env)
        assert result.returncode != 0, (name, value)
        assert f"{name}={value!r} is not a yes/no value" in result.stderr, result.stderr[-800:]
        assert "1, true, yes, on (on) or 0, false, no, off (off)" in result.stderr


def test_a_yes_no_variable_takes_the_accepted_words_in_any_case_and_empty_for_the_default():
    code = "from django.conf import settings as s; print(s.DEBUG)"
    key = PRODUCTION["SECRET_KEY"]
    for value, expected in (("1", "True"), ("TRUE", "True"), (" Yes ", "True"), ("on", "True"),
                            ("0", "False"), ("False", "False"), ("NO", "False"), ("off", "False"), ("", "False")):
        result = manage("shell", "-v", "0", "-c", code, DEBUG=value, SECRET_KEY=key)
        assert result.returncode == 0 and result.stdout.split() == [expected], (value, result.stderr[-800:])
