"""DiP lexical consistency on the WMT21 TED talks: the default lexicon backend against a spaCy pipeline.

``python bench/lexical_consistency_ted.py RELEASE_DIR [--pair zhen] [--reference refB] [--site DIR]``

``RELEASE_DIR`` is a clone of Google's ``google/wmt-mqm-human-evaluation`` (Apache-2.0); its
``ted/<pair>/mqm_ted_<pair>.tsv`` has one row per error (or per segment without one) with the system's
output in ``target``, the error span marked ``<v>...</v>``.  Each system's outputs (markers removed)
are its translation of the talks (``doc``, segments in ``seg_id`` order); ``--reference`` (default
``refB``, the better of the release's two human translations) is the reference, the other systems
(the first human translation, ``ref``, among them) are scored.  Segments are those every system has.

``lexical-consistency`` runs with the lexicon backend, and, when spaCy can load the pipeline
(``en_core_web_sm`` for zh->en, ``de_core_news_sm`` for en->de: installed, or from ``--site DIR``,
a site-packages directory added at the end of ``sys.path``, e.g. the scratch environment of
bench/blonde_upstream.py), with ``spacy:<pipeline>``; it prints both backends' %Con and %Full per
system, the largest and mean absolute differences, and how many samples (block, word in focus) the two
backends find in the reference and have in common.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.metrics.corpus import Corpus, Segment, SystemScore  # noqa: E402
from bench.ted_outputs import read_outputs  # noqa: E402
from evaluators.metrics.language.base import Backend  # noqa: E402
from evaluators.metrics.language.lexicon_backend import LexiconBackend  # noqa: E402
from evaluators.metrics.lexical_consistency import LEXICAL_CONSISTENCY  # noqa: E402

PIPELINES = {"zhen": ("en", "en_core_web_sm"), "ende": ("de", "de_core_news_sm")}


def read_release(path: Path, reference: str) -> Corpus:
    """The talks of one TED file as a corpus: ``reference``'s outputs against every other system's."""
    outputs, shared = read_outputs(path, reference)
    keys = shared
    systems = sorted(s for s in outputs if s != reference)
    segments = [Segment(f"{doc}:{seg}", doc, outputs[reference][(doc, seg)],
                        {s: outputs[s][(doc, seg)] for s in systems})
                for doc, seg in sorted(keys, key=lambda k: (k[0], k[1]))]
    return Corpus(segments, target_language="")


def spacy_backend(pipeline: str) -> Backend | None:
    try:
        import spacy

        from evaluators.metrics.language.spacy_backend import SpacyBackend

        return SpacyBackend(spacy.load(pipeline), name=pipeline)
    except (ImportError, OSError) as exc:
        print(f"spaCy side skipped: {pipeline} cannot be loaded ({exc})")
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("release", type=Path, help="a clone of google/wmt-mqm-human-evaluation")
    parser.add_argument("--pair", choices=sorted(PIPELINES), default="zhen")
    parser.add_argument("--reference", default="refB")
    parser.add_argument("--site", type=Path, help="a site-packages directory holding the spaCy pipeline")
    parser.add_argument("--without-tagger", action="store_true",
                        help="the lexicon backend's context-free rules alone (its figures before the tagger)")
    args = parser.parse_args()
    if args.site:
        sys.path.append(str(args.site))
    language, pipeline = PIPELINES[args.pair]
    corpus = read_release(args.release / "ted" / args.pair / f"mqm_ted_{args.pair}.tsv", args.reference)
    corpus = Corpus(corpus.segments, target_language=language)
    docs = len({s.document for s in corpus.segments})
    print(f"TED {args.pair}: {len(corpus.segments)} segments in {docs} talks, reference {args.reference}, "
          f"{len(corpus.systems)} systems")
    backends: list[Backend] = [LexiconBackend(use_tagger=not args.without_tagger)]
    other = spacy_backend(pipeline)
    if other is not None:
        backends.append(other)
    results: dict[str, dict[str, SystemScore]] = {}
    for backend in backends:
        start = time.process_time()
        result = LEXICAL_CONSISTENCY.evaluate(corpus, nlp=backend)
        results[backend.name] = {s.system: s for s in result.systems}
        print(f"{backend.name}: {time.process_time() - start:.1f} s CPU; "
              f"signature {result.systems[0].signature if result.systems else '-'}")
    samples = []
    for backend in backends:
        refs = dict(zip((s.key for s in corpus.segments), backend.analyse([s.reference for s in corpus.segments],
                                                                          language)))
        found = LEXICAL_CONSISTENCY.samples(corpus, refs, unknown_as_focus=backend.name == "lexicon")
        samples.append({(x.document, x.block, x.lemma) for x in found})
    if len(samples) == 2:
        mine, theirs = samples
        print(f"samples (block, word in focus): lexicon {len(mine)}, spaCy {len(theirs)}, "
              f"both {len(mine & theirs)}")
    names = list(results)
    print(f"{'system':14s} " + "  ".join(f"{n[:22]:>22s} %Con / %Full" for n in names))
    gaps: dict[str, list[float]] = {"%Con": [], "%Full": []}
    for system in corpus.systems:
        cells = []
        for n in names:
            cats = results[n][system].categories or {}
            cells.append(f"{_pct(cats.get('%Con')):>22s} / {_pct(cats.get('%Full')):>5s}")
        print(f"{system:14s} " + "  ".join(cells))
        if len(names) == 2:
            a, b = (results[n][system].categories or {} for n in names)
            for k in gaps:
                if a.get(k) is not None and b.get(k) is not None:
                    gaps[k].append(abs(a[k] - b[k]))
    for k, values in gaps.items():
        if values:
            print(f"{k}: |lexicon - spaCy| largest {max(values):.2f}, mean {sum(values) / len(values):.2f} points")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
