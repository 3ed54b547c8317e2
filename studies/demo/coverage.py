"""How much of the DiaBLa demo can carry a context probe (docs/ai-assistance.md, "Context probes").

Two counts, both with studies/controls/context_probes.py's own ``probe_options``:

- ``dialogues``: each DiaBLa dialogue of fixtures/diabla/ read whole in each of its two languages
  (every turn as a reader of that language has it, studies/demo/data.py ``target_side``): a
  document with three or more turns *gets a probe* when some turn can take one with the turns
  before it as context;
- ``studies``: each document of each demo study file (fixtures/studies/diabla-*.json, what
  ``load_demo`` loads) whose items show three or more sentences in all (context and candidate):
  it gets a probe when some candidate of one of its items can take one, with the item's context as
  the study shows it (in studies that show the source, only the context lines the source-side context
  shows as they are: ``context_shown``).
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings

from studies.controls.context_probes import context_shown, probe_options, sentence_offsets
from studies.demo.data import LANGUAGE_CODE, load_dialogues, target_side

STUDY_FILES = Path(settings.BASE_DIR) / "fixtures" / "studies"


def _share(with_probe: int, eligible: int) -> float | None:
    return with_probe / eligible if eligible else None


def dialogue_coverage() -> dict[str, Any]:
    eligible = with_probe = 0
    kinds: Counter[str] = Counter()
    for dialogue in load_dialogues():
        for language in ("english", "french"):
            turns = [target_side(u, language) for u in dialogue["utterances"]]
            if len(turns) < 3:
                continue
            eligible += 1
            found: Counter[str] = Counter()
            for k, turn in enumerate(turns):
                for kind, probes in probe_options(text=turn, context=turns[:k],
                                                  language=LANGUAGE_CODE[language]).items():
                    found[kind] += len(probes)
            with_probe += bool(found)
            kinds.update(found)
    return {"eligible": eligible, "with_probe": with_probe, "share": _share(with_probe, eligible),
            "by_kind": dict(sorted(kinds.items()))}


def study_coverage() -> dict[str, Any]:
    eligible = with_probe = 0
    by_study: dict[str, dict[str, Any]] = {}
    for path in sorted(STUDY_FILES.glob("diabla-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        fields = data["settings"]
        documents: dict[str, list[bool]] = {}
        sentences: Counter[str] = Counter()
        for item in data["items"]:
            document = item.get("document_id") or item["id"]
            language = item.get("target_language") or fields.get("target_language", "")
            fits = False
            for cand in item["candidates"]:
                text = cand.get("text") or "\n".join(cand.get("sentences", []))
                fits = fits or bool(probe_options(text=text, sentences=cand.get("sentences", []),
                                                  context=item.get("target_context", []), language=language,
                                                  context_on_screen=context_shown(
                                                      target_context=item.get("target_context", []),
                                                      source_context=item.get("source_context", []),
                                                      show_source=fields.get("show_source", False))))
            reference = next((c for c in item["candidates"] if c.get("is_reference")), item["candidates"][0])
            shown = len(sentence_offsets(reference.get("text") or "\n".join(reference.get("sentences", [])),
                                         reference.get("sentences", [])))
            sentences[document] = max(sentences[document], len(item.get("target_context", [])) + shown)
            documents.setdefault(document, []).append(fits)
        long_enough = [d for d in documents if sentences[d] >= 3 or len(documents[d]) >= 3]
        hits = sum(any(documents[d]) for d in long_enough)
        by_study[data["slug"]] = {"eligible": len(long_enough), "with_probe": hits,
                                  "share": _share(hits, len(long_enough))}
        eligible += len(long_enough)
        with_probe += hits
    return {"eligible": eligible, "with_probe": with_probe, "share": _share(with_probe, eligible),
            "by_study": by_study}


def demo_probe_coverage() -> dict[str, Any]:
    """Both counts (module docstring)."""
    return {"dialogues": dialogue_coverage(), "studies": study_coverage()}
