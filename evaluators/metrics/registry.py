"""Every registered automatic evaluator: importing this module imports each evaluator module once.

An evaluator module registers its evaluators at import time
(:func:`evaluators.metrics.corpus.register`); add a new module's import here.
"""
from __future__ import annotations

from evaluators.metrics.corpus import CorpusEvaluator, registered

# One import per evaluator module (each registers its evaluators on import).
# (none yet: the issue-13 branches add theirs here)
from evaluators.metrics import blonde  # noqa: F401,E402  (blonde, dblonde, blonde-plus, blonde-lex, dblonde-lex)
from evaluators.metrics import dcoem  # noqa: F401,E402  (dcoem)
from evaluators.metrics import lexical_consistency  # noqa: F401,E402  (lexical-consistency)
from evaluators.metrics import sacrebleu_metrics  # noqa: F401,E402  (bleu, chrf, ter: corpus level)
from evaluators.metrics import document_metrics  # noqa: F401,E402  (doc-bleu, doc-chrf, doc-ter)
from evaluators.metrics import wordlists  # noqa: F401,E402  (pronoun-p/r/f, connective-acc/any)


def evaluators() -> dict[str, CorpusEvaluator]:
    """Every registered evaluator, by name."""
    return registered()
