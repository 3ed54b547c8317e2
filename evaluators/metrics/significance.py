"""Paired significance tests between systems for a corpus metric, by sacrebleu's own ``PairedTest``.

Sources: paired bootstrap resampling (Koehn 2004, EMNLP, "Statistical
Significance Tests for Machine Translation Evaluation"; sacrebleu replicates
Moses' ``bootstrap-hypothesis-difference-significance.pl``) and approximate
randomisation (Riezler & Maxwell 2005; Clark et al. 2011, MultEval), as
implemented in ``sacrebleu.significance`` (Post 2018; the paired tests were
added in sacrebleu 2.0).  Nothing is re-implemented here: the corpus is turned
into sacrebleu's inputs, its ``PairedTest`` runs with the CLI's defaults, and its
results are returned as plain data.

Defaults (those of ``sacrebleu --paired-bs`` / ``--paired-ar``):

* ``bs``: 1,000 bootstrap resamples; each system's bootstrap mean and 95% CI
  (half-width, as sacrebleu prints ``score (mean ± ci)``); the p-value of the
  absolute score difference to the baseline, ``(c + 1) / (n + 1)``;
* ``ar``: 10,000 approximate-randomisation trials, no CI (the CLI computes
  none);
* seed 12345 (sacrebleu's default ``SACREBLEU_SEED``); the same seed gives the
  same p-values as ``sacrebleu REF -i BASE SYS --paired-bs`` on the same
  segments.  The ``SACREBLEU_SEED`` environment variable is *not* read: pass
  ``seed``.
* The first system is the baseline (``baseline`` moves a named system first),
  as in sacrebleu; every other system is compared with it.
* Significant at 0.05 means ``p_value < 0.05``, as sacrebleu's own
  explanation says ("p-values < 0.05 (marked with "*")"); its code stars
  ``p <= 0.05``, which calls p = 0.05 exactly significant: no verdict is given
  here at p ≥ α.

Memory: sacrebleu materialises all resamples at once (``n_samples x
n_segments x n_statistics`` float32: about 800 MB for BLEU on 20,000
segments with 1,000 resamples), as its command-line tool does.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from evaluators.metrics.corpus import Corpus, reference_streams
from evaluators.metrics.sacrebleu_metrics import KINDS, SacrebleuEvaluator
from evaluators.metrics.sacrebleu_metrics import BLEU_EVALUATOR, CHRF_EVALUATOR, TER_EVALUATOR

#: sacrebleu's CLI defaults (``--paired-bs-n``, ``--paired-ar-n``, ``SACREBLEU_SEED``).
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}
DEFAULT_SEED = 12345
ALPHA = 0.05
METHODS = {"bs": "paired bootstrap resampling", "ar": "paired approximate randomization"}
_EVALUATORS: dict[str, SacrebleuEvaluator] = {e.name: e for e in (BLEU_EVALUATOR, CHRF_EVALUATOR, TER_EVALUATOR)}
# PairedTest reads its seed from the environment while it is constructed; serialise that moment.
_SEED_LOCK = threading.Lock()


def paired_test(corpus: Corpus, evaluator: str, *, baseline: str | None = None, method: str = "bs",
                n_samples: int | None = None, seed: int | None = None) -> list[dict[str, Any]]:
    """sacrebleu's paired significance test of every system against the baseline, for one corpus metric.

    :param corpus: the systems' hypotheses and the references (``corpus.target_language`` chooses the
        tokenizer exactly as the ``bleu``/``chrf``/``ter`` evaluators do).  Only segments that every system
        translated are used (their number is returned as ``n_segments``, and a note says how many were left out).
    :param evaluator: ``"bleu"``, ``"chrf"`` or ``"ter"`` (sacrebleu supports no other metric); anything else
        is a ``ValueError``.
    :param baseline: the baseline system's name; ``None``: the corpus' first system (``corpus.systems[0]``).
    :param method: ``"bs"`` (paired bootstrap resampling, sacrebleu ``--paired-bs``) or ``"ar"`` (approximate
        randomization, ``--paired-ar``).
    :param n_samples: resamples (bs) or trials (ar); ``None``: sacrebleu's defaults, 1000 and 10000.
    :param seed: the random seed, a positive integer; ``None``: sacrebleu's default 12345.
    :returns: one dict per system, the baseline first, JSON-serialisable: ``system``, ``baseline`` (the
        baseline's name), ``is_baseline``, ``evaluator``, ``metric`` (sacrebleu's name: BLEU, chrF2, TER),
        ``higher_is_better``, ``score`` (the corpus score, 0-100), ``mean`` and ``ci`` (bs only: the
        bootstrap mean and the half-width of its 95% CI, sacrebleu's ``mean ± ci``; ``None`` for ar),
        ``p_value`` and ``significant`` (``p_value < 0.05``; both ``None`` for the baseline), ``method``,
        ``n_samples``, ``seed``, ``n_segments``, ``signature`` (sacrebleu's, with the test's ``bs:``/``ar:``
        and ``seed:`` fields) and ``notes``.
    :raises ValueError: an unsupported evaluator or method, fewer than two systems, an unknown baseline,
        no segment translated by every system, or a non-positive ``n_samples`` or ``seed``.
    """
    if evaluator not in _EVALUATORS:
        raise ValueError(f"paired tests are available for sacrebleu's corpus metrics only ({', '.join(KINDS)}), "
                         f"not {evaluator!r}")
    if method not in METHODS:
        raise ValueError(f"unknown paired test method {method!r}: 'bs' (bootstrap) or 'ar' (approximate "
                         "randomization)")
    n = DEFAULT_SAMPLES[method] if n_samples is None else n_samples
    if n < 1:
        raise ValueError(f"n_samples must be a positive integer, not {n_samples!r}")
    seed_value = DEFAULT_SEED if seed is None else seed
    if seed_value < 1:  # sacrebleu treats a seed of 0 as "unseeded" for the compared systems only
        raise ValueError(f"seed must be a positive integer, not {seed!r}")
    systems = corpus.systems
    if baseline is not None:
        if baseline not in systems:
            raise ValueError(f"baseline {baseline!r} is not one of the systems: {', '.join(systems)}")
        systems = [baseline] + [s for s in systems if s != baseline]
    if len(systems) < 2:
        raise ValueError(f"a paired test needs at least two systems; the corpus has {len(systems)}")

    common = [seg for seg in corpus.segments if all(seg.hypotheses.get(s) is not None for s in systems)]
    if not common:
        raise ValueError("no segment has a hypothesis from every system: nothing to compare")
    ev = _EVALUATORS[evaluator]
    setup = ev.setup(corpus)
    notes = list(setup.notes)
    if len(common) < len(corpus.segments):
        notes.append(f"{len(corpus.segments) - len(common)} of {len(corpus.segments)} segments left out: "
                     "not every system translated them")

    # sacrebleu.significance takes ~0.4 s to import: only a paired test pays for it.
    from sacrebleu.significance import PairedTest, Result

    metric = setup.metric
    metric._ref_cache = metric._cache_references(reference_streams(common))
    named: list[tuple[str, Sequence[str]]] = [(name, [seg.hypotheses[name] for seg in common]) for name in systems]
    with _SEED_LOCK:
        saved = os.environ.get("SACREBLEU_SEED")
        os.environ["SACREBLEU_SEED"] = str(seed_value)
        try:
            test = PairedTest(named, {ev.name: metric}, references=None, test_type=method, n_samples=n)
        finally:
            if saved is None:
                del os.environ["SACREBLEU_SEED"]
            else:
                os.environ["SACREBLEU_SEED"] = saved
    signatures, scores = test()
    (metric_name, signature), = signatures.items()
    out: list[dict[str, Any]] = []
    for name, result in zip(scores["System"], scores[metric_name], strict=True):
        assert isinstance(name, str) and isinstance(result, Result)
        is_baseline = name == systems[0]
        p = None if result.p_value is None else float(result.p_value)
        out.append({
            "system": name, "baseline": systems[0], "is_baseline": is_baseline, "evaluator": ev.name,
            "metric": metric_name, "higher_is_better": ev.higher_is_better,
            "score": float(result.score),
            "mean": None if result.mean is None else float(result.mean),
            "ci": None if result.ci is None else float(result.ci),
            "p_value": p, "significant": None if p is None else p < ALPHA,
            "method": method, "n_samples": test.n_samples, "seed": seed_value, "n_segments": len(common),
            "signature": signature.format(), "notes": list(notes),
        })
    return out
