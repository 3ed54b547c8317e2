"""Lexical consistency on DiaBLa, the lexicon backend against spaCy, and its speed (the figures of docs/evaluators.md).

``python bench/lexical_consistency_check.py [--site DIR] [--speed-only]``

1. DiaBLa (``/work/shared/data/diabla``, else ``fixtures/diabla``): each MT model's dialogues in one direction as
   documents against the references; ``lexical-consistency`` with the lexicon backend, both directions.
2. When spaCy can load ``en_core_web_sm`` (installed, or from ``--site DIR``, a site-packages directory added at the
   end of ``sys.path`` — e.g. the BlonDe check's scratch environment, see bench/blonde_upstream.py): the same for
   French->English with ``spacy:en_core_web_sm``, the samples both backends find, and how often the two backends give
   the same tokens, UPOS, Penn tags and lemmas of the references, with the most frequent UPOS disagreements; and
   ``blonde`` on spaCy next to ``blonde-lex`` on the lexicon backend.
3. Speed: 2,000 documents x 10 segments x 5 systems (20,000 segments, generated from DiaBLa's English text), CPU time
   of one ``evaluate`` with a fresh lexicon backend (its analysis of the texts included).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.metrics.corpus import Corpus, Segment, SystemScore  # noqa: E402
from evaluators.metrics.language.base import Backend, Sentence  # noqa: E402
from evaluators.metrics.language.lexicon_backend import LexiconBackend  # noqa: E402
from evaluators.metrics.lexical_consistency import LEXICAL_CONSISTENCY  # noqa: E402

DIABLA = [Path("/work/shared/data/diabla/utterances.jsonl"), ROOT / "fixtures" / "diabla" / "utterances.jsonl"]


def utterances() -> list[dict[str, str]]:
    path = next(p for p in DIABLA if p.exists())
    with open(path, encoding="utf-8") as fh:
        return [u for u in map(json.loads, fh) if u.get("mt") and u.get("reference")]


def model_corpus(rows: list[dict[str, str]], model: str, source: str, target: str) -> Corpus:
    segs = [Segment(f"{u['dialogue_id']}:{u['turn']}", u["dialogue_id"], u["reference"].strip(),
                    {model: u["mt"].strip()})
            for u in rows if u["model"] == model and u["source_language"] == source]
    return Corpus(segs, target_language=target)


def line(model: str, backend: Backend, score: SystemScore, cpu: float) -> str:
    c = score.counts or {}
    full = (score.categories or {}).get("%Full")
    con = "-" if score.score is None else f"{score.score:.2f}"
    return (f"{model:9s} {backend.name:22s} %Con {con:>6s}  %Full {'-' if full is None else f'{full:.2f}':>6s}  "
            f"c/i/u {c.get('consistent')}/{c.get('inconsistent')}/{c.get('undetermined')}  ({cpu:.2f} s CPU)")


def compare_with_spacy(rows: list[dict[str, str]], lexicon: LexiconBackend) -> None:
    try:
        import spacy

        from evaluators.metrics.language.spacy_backend import SpacyBackend

        spacy_backend = SpacyBackend(spacy.load("en_core_web_sm"), name="en_core_web_sm")
    except (ImportError, OSError) as exc:
        print(f"spaCy comparison skipped: en_core_web_sm cannot be loaded ({exc})")
        return
    same_seg = total_seg = n = same_pos = same_tag = same_lemma = 0
    confusions: Counter[tuple[str, str, str]] = Counter()
    for model in ("baseline", "2to2"):
        corpus = model_corpus(rows, model, "french", "en")
        for backend in (lexicon, spacy_backend):
            start = time.process_time()
            (score,) = LEXICAL_CONSISTENCY.evaluate(corpus, nlp=backend).systems
            print(line(model, backend, score, time.process_time() - start))
        texts = [s.reference for s in corpus.segments]
        keys = [s.key for s in corpus.segments]
        lex: dict[str, Sentence] = dict(zip(keys, lexicon.analyse(texts, "en")))
        spa: dict[str, Sentence] = dict(zip(keys, spacy_backend.analyse(texts, "en", need={"pos", "tag", "lemma"})))
        a = {(x.document, x.block, x.lemma) for x in LEXICAL_CONSISTENCY.samples(corpus, lex)}
        b = {(x.document, x.block, x.lemma) for x in LEXICAL_CONSISTENCY.samples(corpus, spa, unknown_as_focus=False)}
        print(f"  samples: lexicon {len(a)}, spaCy {len(b)}, both {len(a & b)}")
        for key in keys:
            total_seg += 1
            mine = lex[key].tokens
            theirs = [t for t in spa[key].tokens if not t.text.isspace()]
            if [t.text for t in mine] != [t.text for t in theirs]:
                continue
            same_seg += 1
            for x, y in zip(mine, theirs):
                n += 1
                same_pos += x.pos == y.pos
                same_tag += x.tag == y.tag
                same_lemma += x.lemma.lower() == y.lemma.lower()
                if x.pos != y.pos:
                    confusions[(x.text.lower(), x.pos, y.pos)] += 1
    from evaluators.metrics.blonde import BLONDE, BLONDE_LEX

    for model in ("baseline", "2to2"):
        corpus = model_corpus(rows, model, "french", "en")
        for evaluator, nlp in ((BLONDE, spacy_backend), (BLONDE_LEX, lexicon)):
            (score,) = evaluator.evaluate(corpus, nlp=nlp).systems
            cats = score.categories or {}
            f1 = {k: cats[k]["f1"] for k in ("tense", "pronoun", "entity", "dm", "1-gram", "4-gram") if k in cats}
            print(f"{model:9s} {evaluator.name:10s} {nlp.name:22s} F1 {score.score:.4f}  dBlonDe "
                  f"{cats['dblonde']['f1']:.2f}  " + "  ".join(f"{k} {v:.2f}" for k, v in f1.items() if v is not None))
    print(f"references tokenised identically: {same_seg}/{total_seg}; on their {n} tokens the same UPOS "
          f"{same_pos / n:.3f}, Penn tag {same_tag / n:.3f}, lemma {same_lemma / n:.3f}")
    print("most frequent UPOS disagreements (word, lexicon, spaCy, count):",
          ", ".join(f"{w} {p}/{q} {c}" for (w, p, q), c in confusions.most_common(15)))


def speed(rows: list[dict[str, str]]) -> None:
    english = [(u["reference"], u["mt"]) for u in rows if u["source_language"] == "french"]
    segs = []
    for i in range(20_000):
        ref, mt = english[i % len(english)]
        tag = "" if i < len(english) else f" ({i // len(english)})"  # every text distinct
        words = mt.split(" ")
        outputs = {}
        for k in range(5):
            w = list(words)
            if k and len(w) > 2:
                j = (i * k) % (len(w) - 1)
                w[j], w[j + 1] = w[j + 1], w[j]
                del w[(i + k) % len(w)]
            outputs[f"S{k}"] = " ".join(w) + tag
        segs.append(Segment(str(i), f"d{i // 10}", ref + tag, outputs))
    corpus = Corpus(segs, target_language="en")
    backend = LexiconBackend()
    start = time.process_time()
    LEXICAL_CONSISTENCY.evaluate(corpus, nlp=backend)
    print(f"speed: 2,000 documents x 10 segments x 5 systems: {time.process_time() - start:.1f} s CPU")
    start = time.process_time()
    LexiconBackend().analyse([s.reference for s in segs] + [h for s in segs for h in s.hypotheses.values()], "en")
    print(f"speed: analysing those 120,000 segments with a fresh backend: {time.process_time() - start:.1f} s CPU")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--site", type=Path, default=None, help="a site-packages directory holding en_core_web_sm")
    parser.add_argument("--speed-only", action="store_true")
    args = parser.parse_args()
    if args.site:
        sys.path.append(str(args.site))
    rows = utterances()
    if not args.speed_only:
        lexicon = LexiconBackend()
        for source, target in (("french", "en"), ("english", "fr")):
            for model in ("baseline", "2to2"):
                start = time.process_time()
                (score,) = LEXICAL_CONSISTENCY.evaluate(model_corpus(rows, model, source, target), nlp=lexicon).systems
                print(f"{source[:2]}->{target} " + line(model, lexicon, score, time.process_time() - start))
        compare_with_spacy(rows, lexicon)
    speed(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
