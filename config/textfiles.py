"""Reading a UTF-8 text file a user named: one error naming the file for each way it can fail.

The commands that read files (``import_study``, ``invite``, ``import_judgments``, ``import_scores`` through
studies/cli.py; ``score`` through evaluators/metrics/file_scores.py) share this reader, so a missing file, a
directory, a file that cannot be read, a broken gzip file or bytes that are not UTF-8 get the same sentence
everywhere, with the line of the first bad byte.  No Django: the callers turn :class:`TextFileError` into
their own error (a ``CommandError`` with their exit status).
"""
from __future__ import annotations

import gzip
from pathlib import Path


class TextFileError(ValueError):
    """A file that cannot be read as UTF-8 text; the message names the file (and the line, for bad bytes)."""


def read_utf8(path: Path, where: str, *, directory_hint: str = "", gunzip: bool = False) -> str:
    """The text of ``path`` decoded as UTF-8, line ends untouched.

    ``where`` starts every error message (``"--items: data/items.csv"``, ``"--hyp out/a.txt"``);
    ``directory_hint`` ends the message for a directory; with ``gunzip``, a name ending in ``.gz`` is
    decompressed first (sacrebleu reads such files too).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TextFileError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise TextFileError(f"{where}: is a directory; give one file{directory_hint}") from None
    except PermissionError:
        raise TextFileError(f"{where}: cannot be read (permission denied)") from None
    except OSError as exc:
        raise TextFileError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL in the name: the operating system cannot be asked for it
        raise TextFileError(f"{where}: not a usable file name ({exc})") from None
    if gunzip and path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise TextFileError(f"{where}: not a readable gzip file ({exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TextFileError(f"{where}: line {line}: not UTF-8 text ({exc.reason} at byte {column} "
                            "of the line)") from None
