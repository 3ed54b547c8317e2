"""config/logpath.py and the access-log format of docs/deploy.md: no annotator token, no query string."""
from __future__ import annotations

import logging
import re
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.test import Client
from gunicorn.config import Config  # type: ignore[import-untyped]
from gunicorn.glogging import Logger  # type: ignore[import-untyped]

from annotation.handout.services import annotators_create
from config.logpath import log_path
from tests.factories import make_study

DEPLOY = Path(settings.BASE_DIR) / "docs" / "deploy.md"


def documented_format() -> str:
    """The ``--access-logformat`` of docs/deploy.md's gunicorn command, as the shell passes it."""
    found = re.search(r"--access-logformat '([^']+)'", DEPLOY.read_text(encoding="utf-8"))
    assert found, "docs/deploy.md gives no --access-logformat"
    return found.group(1)


@pytest.mark.parametrize("path, logged", [
    ("/a/s-0Ls9bGR5TnHa0IHuCK8IQlFE38fXdQ/", "/a/<token>/"),
    ("/a/tok/item/Xy12/", "/a/<token>/item/Xy12/"),
    ("/a/", "/a/"), ("/a/item/Xy12/", "/a/item/Xy12/"), ("/a/done/", "/a/done/"), ("/a/tutorial/2/", "/a/tutorial/2/"),
    ("/p/study/?PROLIFIC_PID=abc&SESSION_ID=x", "/p/study/"),
    ("/studies/x/", "/studies/x/"),
    ("/api/v1/annotate/ \x15\x08/judgment", "/api/v1/annotate/%20%15%08/judgment"),  # a header takes no controls
    ("/a/é/", "/a/<token>/"), ("/studies/é/", "/studies/%C3%A9/"),
])
def test_log_path_drops_tokens_and_query_strings(path: str, logged: str) -> None:
    assert log_path(path) == logged


@pytest.mark.django_db
def test_every_response_says_what_the_log_may_keep() -> None:
    study = make_study(n_items=1)
    annotator = annotators_create(study=study)[0]
    client = Client()
    link = client.get(f"/a/{annotator.token}/?x=1")
    assert link.status_code == 302 and link["X-Log-Path"] == "/a/<token>/"
    page = client.get(link["Location"])
    assert page.status_code == 200 and page["X-Log-Path"] == "/a/"
    entry = Client().get(f"/p/{study.slug}/?PROLIFIC_PID=abc123&STUDY_ID=s&SESSION_ID=x")
    assert entry["X-Log-Path"] == f"/p/{study.slug}/"
    assert Client().get("/no-such-page/")["X-Log-Path"] == "/no-such-page/"


class _Collect(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_the_documented_gunicorn_format_logs_neither_token_nor_query_nor_referer() -> None:
    """gunicorn's default format logs the request line and the Referer, both of which carry the token."""
    token = "s-0Ls9bGR5TnHa0IHuCK8IQlFE38fXdQ"
    cfg = Config()
    cfg.set("accesslog", "-")
    cfg.set("access_log_format", documented_format())
    logger = Logger(cfg)
    lines: list[str] = []
    logger.access_log.handlers.clear()
    logger.access_log.addHandler(_Collect(lines))
    path = f"/a/{token}/item/Xy12/"
    req = SimpleNamespace(method="GET", path=path, query="PROLIFIC_PID=p1", uri=f"{path}?PROLIFIC_PID=p1",
                          version=(1, 1), headers=[("REFERER", f"https://eval.example.org/a/{token}/"),
                                                   ("USER-AGENT", "test")])
    resp = SimpleNamespace(status="200 OK", status_code=200, sent=1234, response_length=1234,
                           headers=[("Content-Type", "text/html"), ("X-Log-Path", log_path(path))])
    environ = {"REMOTE_ADDR": "203.0.113.9", "REQUEST_METHOD": "GET", "RAW_URI": req.uri, "PATH_INFO": path,
               "QUERY_STRING": req.query, "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_REFERER": req.headers[0][1],
               "HTTP_USER_AGENT": "test"}
    logger.access(resp, req, environ, timedelta(seconds=0.01))
    [line] = lines
    assert re.fullmatch(r"203\.0\.113\.9 \[.*\] \"GET \S+ HTTP/1\.1\" 200 1234 10000us \"test\"", line), line
    assert "/a/<token>/item/Xy12/" in line and "GET" in line and " 200 " in line
    assert token not in line and "PROLIFIC_PID" not in line
