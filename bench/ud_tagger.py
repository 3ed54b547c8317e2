"""Train and measure the lexicon backend's part-of-speech tagger on Universal Dependencies treebanks.

Train (writes ``evaluators/metrics/language/data/tagger/<lang>.npz`` unless ``--out``)::

    python bench/ud_tagger.py train en TRAIN.conllu [TRAIN.conllu ...] [--dev DEV.conllu] [--iterations 8]

Measure (the figures of docs/evaluators.md, "The default language backend's tagger")::

    python bench/ud_tagger.py evaluate en TEST.conllu [TEST.conllu ...] [--model FILE] [--speed [--min-speed N]]

``make bench`` runs it on the committed English sample (``fixtures/ud/``) with ``--speed --min-speed 10000``.

``evaluate`` tags each sentence of the treebank on its gold tokenisation, cut as the backend's tokenizer
cuts text (:func:`evaluators.metrics.language.tagger.read_conllu`: English contractions are UD's words,
``did`` ``n't``; elsewhere a multi-word token such as French ``du`` is one token tagged as its first
word, ADP) and prints the UPOS accuracy, precision, recall and F1 of the words tagged NOUN,
ADJ or PROPN against the rest, the same figures per tag, and with ``--speed`` the tokens tagged per
second of CPU time (one process, the model already loaded) and the tokens a fresh lexicon backend
analyses per second (the sentences' words joined by spaces: tokenizer, tagger, lemmas, entities).

The treebanks are not part of the repository: clone ``UniversalDependencies/UD_English-EWT`` (and
German-GSD, French-GSD, Chinese-GSD) and pass their ``.conllu`` files.  The shipped models were
trained as docs/evaluators.md and ``evaluators/metrics/language/data/tagger/README.md`` say.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.metrics.language import tagger  # noqa: E402
from evaluators.metrics.language.lexicon_backend import LexiconBackend  # noqa: E402

FOCUS = frozenset({"NOUN", "ADJ", "PROPN"})
Sentence = tuple[list[str], list[str]]  # tokens, UPOS tags


def read_all(paths: Sequence[Path], language: str) -> list[Sentence]:
    return [s for p in paths for s in tagger.read_conllu(p, language)]


# --------------------------------------------------------------------------- training
def build_tagdict(sentences: Sequence[Sentence], *, min_count: int = 20, ambiguity: float = 0.97) -> dict[str, str]:
    """Normalised words seen at least ``min_count`` times, ``ambiguity`` of them with one tag -> that tag."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for words, tags in sentences:
        for w, t in zip(words, tags):
            counts[tagger.normalise(w)][t] += 1
    out = {}
    for w, c in counts.items():
        tag, n = c.most_common(1)[0]
        total = sum(c.values())
        if total >= min_count and n / total >= ambiguity:
            out[w] = tag
    return out


class Trainer:
    """Averaged perceptron over a fixed feature vocabulary (features seen with the gold tags)."""

    def __init__(self, language: str, sentences: Sequence[Sentence], tagdict: dict[str, str]) -> None:
        self.tagdict = tagdict
        self.classes = sorted({t for _, tags in sentences for t in tags})
        self.class_index = {c: i for i, c in enumerate(self.classes)}
        counts: Counter[str] = Counter()
        self.static: list[list[np.ndarray]] = []
        feats_of: list[list[list[str]]] = []
        for words, tags in sentences:
            norm = [tagger.normalise(w) for w in words]
            lex = tagger.lexicon_tags(language, words)
            per = []
            p1, p2 = tagger.START
            for i in range(len(words)):
                fs = tagger.static_features(words, i, norm, lex)
                per.append(fs)
                counts.update(fs)
                counts.update(tagger.tag_features(norm[i], p1, p2))
                p2, p1 = p1, tags[i]
            feats_of.append(per)
        self.features = [f for f, _ in counts.most_common()]
        self.index = {f: i for i, f in enumerate(self.features)}
        self.static = [[np.array([self.index[f] for f in fs], dtype=np.int64) for fs in per] for per in feats_of]
        n = len(self.features)
        self.weights = np.zeros((n, len(self.classes)))
        self.totals = np.zeros_like(self.weights)
        self.stamps = np.zeros(self.weights.shape, dtype=np.int64)
        self.clock = 0
        self.counts = counts

    def _rows(self, k: int, i: int, norm: Sequence[str], p1: str, p2: str) -> np.ndarray:
        dyn = [r for f in tagger.tag_features(norm[i], p1, p2) if (r := self.index.get(f)) is not None]
        return np.concatenate([self.static[k][i], np.array(dyn, dtype=np.int64)])

    def _update(self, rows: np.ndarray, truth: int, guess: int) -> None:
        for c, delta in ((truth, 1.0), (guess, -1.0)):
            self.totals[rows, c] += (self.clock - self.stamps[rows, c]) * self.weights[rows, c]
            self.stamps[rows, c] = self.clock
            self.weights[rows, c] += delta

    def epoch(self, sentences: Sequence[Sentence], order: Sequence[int]) -> float:
        right = total = 0
        for k in order:
            words, tags = sentences[k]
            norm = [tagger.normalise(w) for w in words]
            p1, p2 = tagger.START
            for i, gold in enumerate(tags):
                guess_tag = self.tagdict.get(norm[i])
                if guess_tag is None:
                    rows = self._rows(k, i, norm, p1, p2)
                    guess = int(self.weights[rows].sum(axis=0).argmax())
                    truth = self.class_index[gold]
                    self.clock += 1
                    if guess != truth:
                        self._update(rows, truth, guess)
                    guess_tag = self.classes[guess]
                right += guess_tag == gold
                total += 1
                p2, p1 = p1, guess_tag
        return right / total

    def averaged(self) -> np.ndarray:
        totals = self.totals + (self.clock - self.stamps) * self.weights
        return totals / max(self.clock, 1)


def train(language: str, paths: Sequence[Path], *, iterations: int, out: Path, version: str,
          min_feature_count: int, prune: float, seed: int = 0) -> None:
    sentences = read_all(paths, language)
    tagdict = build_tagdict(sentences)
    start = time.process_time()
    trainer = Trainer(language, sentences, tagdict)
    order = list(range(len(sentences)))
    rng = random.Random(seed)
    for it in range(iterations):
        rng.shuffle(order)
        acc = trainer.epoch(sentences, order)
        print(f"iteration {it + 1}: training accuracy {acc:.4f} ({time.process_time() - start:.0f} s CPU)")
    weights = trainer.averaged()
    keep = [i for i, f in enumerate(trainer.features)
            if trainer.counts[f] >= min_feature_count and np.abs(weights[i]).max() >= prune]
    print(f"features: {len(trainer.features)} -> {len(keep)} kept (seen >= {min_feature_count} times, "
          f"a weight >= {prune}); tag dictionary {len(tagdict)} words")
    tagger.save(out, language=language, version=version, classes=trainer.classes,
                features_=[trainer.features[i] for i in keep], weights=weights[keep], tagdict=tagdict)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")


# --------------------------------------------------------------------------- measuring
def evaluate(model: tagger.Model, sentences: Sequence[Sentence], *, speed: bool) -> float:
    """Print the figures; return the lexicon backend's tokens per CPU second (0 without ``speed``)."""
    tp = fp = fn = right = total = 0
    per_tag: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # tp, fp, fn
    model.tag(sentences[0][0])  # loads what the model loads on first use (jieba's dictionary for Chinese)
    start = time.process_time()
    predicted = [model.tag(words) for words, _ in sentences]
    cpu = time.process_time() - start
    for (_, gold), pred in zip(sentences, predicted):
        for g, p in zip(gold, pred):
            total += 1
            right += g == p
            gf, pf = g in FOCUS, p in FOCUS
            tp += gf and pf
            fp += pf and not gf
            fn += gf and not pf
            if g == p:
                per_tag[g][0] += 1
            else:
                per_tag[p][1] += 1
                per_tag[g][2] += 1
    print(f"{model.language} model {model.version}: {len(sentences)} sentences, {total} tokens (gold tokenisation)")
    print(f"  UPOS accuracy {right / total:.4f}")
    print(f"  NOUN/ADJ/PROPN vs rest: P {_ratio(tp, tp + fp):.4f}  R {_ratio(tp, tp + fn):.4f}  "
          f"F1 {_ratio(2 * tp, 2 * tp + fp + fn):.4f}")
    for tag in ("NOUN", "ADJ", "PROPN", "VERB"):
        a, b, c = per_tag[tag]
        print(f"  {tag:5s} P {_ratio(a, a + b):.4f}  R {_ratio(a, a + c):.4f}  F1 {_ratio(2 * a, 2 * a + b + c):.4f}")
    if speed:
        print(f"  speed, tagger: {total / cpu:,.0f} tokens/s CPU ({cpu:.2f} s for {total} tokens)")
        return backend_speed(model.language, sentences)
    return 0.0


def backend_speed(language: str, sentences: Sequence[Sentence]) -> float:
    """Tokens per CPU second of a fresh lexicon backend analysing the sentences' texts (words joined by spaces)."""
    texts = [("" if language == "zh" else " ").join(words) for words, _ in sentences]
    backend = LexiconBackend()
    backend.analyse(texts[:1], language)  # loads the model, the lexicons and jieba's dictionary
    start = time.process_time()
    analysed = backend.analyse(texts[1:], language)
    cpu = time.process_time() - start
    n = sum(len(s.tokens) for s in analysed)
    print(f"  speed, lexicon backend (a fresh backend: tokens, tags, lemmas, entities): {n / cpu:,.0f} tokens/s CPU "
          f"({cpu:.2f} s for {n} tokens)")
    return n / cpu


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a model on UD .conllu files")
    t.add_argument("language", choices=tagger.LANGUAGES)
    t.add_argument("conllu", nargs="+", type=Path)
    t.add_argument("--dev", type=Path, help="a .conllu file to measure the written model on")
    t.add_argument("--iterations", type=int, default=8)
    t.add_argument("--min-feature-count", type=int, default=2, help="drop features seen fewer times")
    t.add_argument("--prune", type=float, default=0.05, help="drop features whose averaged weights are all smaller")
    t.add_argument("--out", type=Path)
    e = sub.add_parser("evaluate", help="measure a model on UD .conllu files (gold tokenisation)")
    e.add_argument("language", choices=tagger.LANGUAGES)
    e.add_argument("conllu", nargs="+", type=Path)
    e.add_argument("--model", type=Path, help="a model file (default: the shipped one)")
    e.add_argument("--speed", action="store_true", help="also print tokens tagged per CPU second")
    e.add_argument("--min-speed", type=float, default=0.0,
                   help="with --speed: exit 1 when the backend analyses fewer tokens per CPU second")
    args = parser.parse_args()
    if args.command == "train":
        out = args.out or tagger.DATA_DIR / f"{args.language}.npz"
        out.parent.mkdir(parents=True, exist_ok=True)
        train(args.language, args.conllu, iterations=args.iterations, out=out, version=tagger.MODEL_VERSION,
              min_feature_count=args.min_feature_count, prune=args.prune)
        if args.dev:
            evaluate(tagger.read(out), read_all([args.dev], args.language), speed=False)
    else:
        model = tagger.read(args.model) if args.model else tagger.model(args.language)
        if model is None:
            sys.exit(f"no model for {args.language} in {tagger.DATA_DIR}")
        rate = evaluate(model, read_all(args.conllu, args.language), speed=args.speed)
        if args.speed and rate < args.min_speed:
            sys.exit(f"the lexicon backend analysed {rate:,.0f} tokens/s, below --min-speed {args.min_speed:,.0f}")


if __name__ == "__main__":
    main()
