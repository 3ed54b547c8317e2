"""manage.py: a command's objects are frozen for the garbage collector before the interpreter exits (fast exit),
and what the command wrote and its exit status are those of a normal exit."""
from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command

import manage

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_main_freezes_what_the_command_left_alive(monkeypatch: pytest.MonkeyPatch, unfrozen: None) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr("django.core.management.execute_from_command_line", lambda argv: ran.append(list(argv)))
    monkeypatch.setattr(sys, "argv", ["manage.py", "check"])
    assert gc.get_freeze_count() == 0
    manage.main()
    assert ran == [["manage.py", "check"]]
    assert gc.get_freeze_count() > 0


def test_main_freezes_when_the_command_fails_and_passes_the_exit_on(monkeypatch: pytest.MonkeyPatch,
                                                                     unfrozen: None) -> None:
    def failing(argv: list[str]) -> None:
        raise SystemExit(2)

    monkeypatch.setattr("django.core.management.execute_from_command_line", failing)
    with pytest.raises(SystemExit) as exit_:
        manage.main()
    assert exit_.value.code == 2
    assert gc.get_freeze_count() > 0


def test_a_real_process_writes_its_whole_output_and_exit_status(tmp_path: Path) -> None:
    ratings = tmp_path / "ratings.csv"
    lines = ["item,rater,label"] + [f"i{i},r{r},{'ab'[(i * r) % 3 == 0]}" for i in range(300) for r in range(1, 4)]
    ratings.write_text("\n".join(lines) + "\n")
    out = tmp_path / "agreement.json"
    proc = subprocess.run([sys.executable, "manage.py", "agreement", "--ratings", str(ratings), "--json",
                           "--output", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    expected = io.StringIO()
    call_command("agreement", "--ratings", str(ratings), "--json", stdout=expected)
    assert json.loads(out.read_text()) == json.loads(expected.getvalue())
    proc = subprocess.run([sys.executable, "manage.py", "agreement", "--ratings", str(tmp_path / "missing.csv")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and "missing.csv" in proc.stderr
