"""The stored shape of ``Study.tutorial``, checked by Study.clean (admin, shell edits).

Apart from studies/importing/tutorial.py (which imports the models) so that studies.models
can call it without an import cycle; the full check of a study file's tutorial
is studies/importing/tutorial.py.
"""
from __future__ import annotations

from typing import Any


def tutorial_model_errors(value: Any) -> list[str]:
    """Study.clean's check of a tutorial edited by hand (admin, shell): the stored shape, with candidate ids."""
    if not isinstance(value, list):
        return ["Must be a list of tutorial items."]
    problems = []
    for k, item in enumerate(value):
        cands = item.get("candidates") if isinstance(item, dict) else None
        if not isinstance(cands, list) or not all(isinstance(c, dict) and c.get("id") and "system" in c for c in cands):
            problems.append(f"tutorial[{k}]: each candidate needs an id, a system and a text (import the study file "
                            "to have them made)")
            continue
        gold = item.get("gold")
        if not isinstance(gold, dict) or not gold:
            problems.append(f"tutorial[{k}].gold: required")
    return problems
