"""The language layer the automatic evaluators share: tokens, lemmas, tags, entities, WordNet, Chinese words.

Two backends behind one interface (:mod:`evaluators.metrics.language.base`):
``lexicon`` (the default: pip-installed lexicons, no download at run time) and
``spacy:<pipeline>`` (when the user installs spaCy and a pipeline).  Every score
records which backend produced it; the two are never mixed within one run.
"""
