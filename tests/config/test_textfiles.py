"""config.textfiles.read_utf8: each way a named file can fail is one message naming it (and the bad line)."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from config.textfiles import TextFileError, read_utf8
from studies.cli import read_text_file


def test_text_is_returned_with_line_ends_untouched(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes("héllo\r\nworld\r".encode())
    assert read_utf8(path, "--x a.txt") == "héllo\r\nworld\r"
    # the command-line reader of studies/cli.py reads line ends as text mode does
    assert read_text_file(str(path), "--x") == "héllo\nworld\n"


def test_failures_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(TextFileError, match=r"^--x nope\.txt: no such file$"):
        read_utf8(tmp_path / "nope.txt", "--x nope.txt")
    with pytest.raises(TextFileError, match=r"^--x dir: is a directory; give one file \(hint\)$"):
        read_utf8(tmp_path, "--x dir", directory_hint=" (hint)")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nab\xffc\n")
    with pytest.raises(TextFileError, match=r"^--x bad: line 2: not UTF-8 text \(invalid start byte at byte 3 "):
        read_utf8(bad, "--x bad")
    with pytest.raises(CommandError, match=r"^--items: .*bad\.txt: line 2: not UTF-8 text") as info:
        read_text_file(str(bad), "--items", returncode=2)
    assert info.value.returncode == 2


def test_gzip_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "a.txt.gz"
    path.write_bytes(gzip.compress("ü\n".encode()))
    assert read_utf8(path, "--x", gunzip=True) == "ü\n"
    with pytest.raises(TextFileError, match="line 1: not UTF-8 text"):  # gzip's magic bytes are not UTF-8
        read_utf8(path, "--x")
