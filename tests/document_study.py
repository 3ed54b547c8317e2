"""Document-unit study files for the document view's tests: blocks given as sentence lists.

A document of ``blocks`` blocks of ``sentences`` sentences each, ``candidates``
systems (the first one the reference). Sentence lengths vary from row to row and
from system to system, so aligned rows have to stretch to their longest cell.
"""
from __future__ import annotations

from typing import Any

SOURCE = [
    "The storm reached the harbour shortly after midnight.",
    "Nobody had expected it so early.",
    "The fishermen tied their boats twice, then a third time, because the wind kept turning and the old "
    "ropes had already snapped once that winter.",
    "Marta stayed awake.",
    "She remembered the last storm, and how the lighthouse keeper had walked along the pier with a lamp.",
    "In the morning the sea was grey and calm.",
    "Two boats were missing.",
    "The whole village gathered on the quay and waited, some praying, some simply staring at the horizon.",
]
OUTPUTS = [  # one way of translating each source sentence per system: (short, long)
    ("Le orage a atteint le port peu après minuit.", "La tempête est arrivée au port juste après minuit, "
     "plus tôt que prévu."),
    ("Personne ne l'attendait si tôt.", "Personne ne s'y attendait."),
    ("Les pêcheurs ont attaché leurs bateaux deux fois, puis une troisième.", "Les pêcheurs amarrèrent leurs "
     "bateaux deux fois, puis une troisième, car le vent tournait sans cesse et les vieilles cordes avaient "
     "déjà cédé une fois cet hiver-là."),
    ("Marta est restée éveillée.", "Marta ne dormait pas."),
    ("Elle se souvenait de la dernière tempête.", "Elle se rappelait la dernière tempête, et le gardien du phare "
     "qui avait longé la jetée avec une lampe."),
    ("Au matin, la mer était grise et calme.", "Le matin, la mer était grise et calme."),
    ("Deux bateaux manquaient.", "Il manquait deux bateaux."),
    ("Tout le village s'est réuni sur le quai.", "Tout le village s'est rassemblé sur le quai et a attendu, "
     "certains en priant, d'autres en fixant simplement l'horizon."),
]


def block_sentences(block: int, sentences: int, system: int | None) -> list[str]:
    """Sentences of one block: the source (system None) or one system's translation."""
    out = []
    for i in range(sentences):
        k = (block * sentences + i) % len(SOURCE)
        if system is None:
            out.append(SOURCE[k])
        else:
            short, long = OUTPUTS[k]
            out.append(long if (i + system) % 3 == 0 else short)
    return out


def document_study_file(*, slug: str, candidates: int, sentences: int, blocks: int = 2,
                        show_source: bool = True, **settings: Any) -> dict[str, Any]:
    items = []
    for b in range(blocks):
        n = sentences if b == blocks - 1 else min(sentences, 4)  # earlier blocks short, the judged one full size
        items.append({
            "id": f"{slug}-b{b + 1}", "document_id": f"{slug}-doc", "position": b + 1,
            "source_sentences": block_sentences(b, n, None),
            "candidates": [{"system": "reference" if s == 0 else f"system-{s}", "is_reference": s == 0,
                            "sentences": block_sentences(b, n, s)} for s in range(candidates)],
        })
    return {"slug": slug, "title": "Document ranking, English → French", "protocol": "ranking",
            "settings": {"unit": "document", "show_source": show_source, "allow_ties": True, "redundancy": 1,
                         "spam_rate": 0.0,
                         "question": "Rank the translations of this block, best first (1 = best).",
                         **settings},
            "items": items}
