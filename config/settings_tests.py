"""The test suite's settings: the project's, with a fast password hasher.

Only pytest.ini names this module. Django's default hasher (PBKDF2, hundreds of thousands of
iterations) costs about 0.9 s a hash on a small machine, and the suite creates and logs in users
thousands of times; the hash's strength protects nothing in a throwaway test database.
Production and ``manage.py`` keep ``config.settings`` and its hasher.
"""
from config.settings import *  # noqa: F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
