"""Write plain files for `score` from the DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0, see its README).

    python docs/examples/diabla_files.py OUT_DIR

For each MT model of the subset (`baseline`, `2to2`) and each direction, one segment a line:
`<model>.<lang>.ref` (human reference translations), `<model>.<lang>.mt` (the live MT output),
`<model>.<lang>.docs` (the dialogue id of each line) and `<model>.<lang>.src` (the source), in
dialogue and turn order. In DiaBLa each dialogue was translated by one model, so the two models
translated different dialogues: compare their corpus scores side by side, not with a paired test.
A paired test needs two outputs of the same segments; `<model>.en.mt-damaged` is the model's own
output with every third line's first word moved to its end, a deliberately damaged second system.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "diabla-files")
    out.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in (ROOT / "fixtures" / "diabla" / "utterances.jsonl").open(encoding="utf-8")]
    target = {"french": "en", "english": "fr"}  # the language of the translation
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["model"], target[row["source_language"]]), []).append(row)
    for (model, lang), items in sorted(groups.items()):
        items.sort(key=lambda r: (r["dialogue_id"], r["turn"]))
        stem = out / f"{model}.{lang}"
        for suffix, key in (("ref", "reference"), ("mt", "mt"), ("src", "source"), ("docs", "dialogue_id")):
            Path(f"{stem}.{suffix}").write_text("".join(" ".join(r[key].split()) + "\n" for r in items),
                                                 encoding="utf-8")
        damaged = []
        for k, r in enumerate(items):
            words = r["mt"].split()
            damaged.append(" ".join(words[1:] + words[:1]) if k % 3 == 0 and len(words) > 1 else " ".join(words))
        Path(f"{stem}.mt-damaged").write_text("".join(line + "\n" for line in damaged), encoding="utf-8")
        print(f"{stem}.*: {len(items)} segments, {len({r['dialogue_id'] for r in items})} dialogues")


if __name__ == "__main__":
    main()
