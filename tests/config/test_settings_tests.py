"""The suite runs with a fast password hasher; the project's own settings keep Django's strong default."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth.hashers import get_hasher

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_hashes_passwords_with_md5():
    assert settings.PASSWORD_HASHERS == ["django.contrib.auth.hashers.MD5PasswordHasher"]
    assert get_hasher().algorithm == "md5"


def test_the_projects_settings_keep_a_strong_hasher():
    code = ("import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; django.setup(); "
            "from django.contrib.auth.hashers import get_hasher; print(get_hasher().algorithm)")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() in ("pbkdf2_sha256", "argon2", "scrypt", "bcrypt_sha256")
