"""Test data for the sacrebleu evaluators, the paired tests and the ``score`` command, and sacrebleu's CLI.

English: the French->English utterances of the DiaBLa subset in ``fixtures/diabla/`` (CC BY-SA 4.0, see its
README): reference = the human translation, ``mt`` = the live machine translation, ``shuffled`` = ``mt`` with
every third line's words rotated by one, ``oracle`` = the reference on odd lines and ``mt`` on even lines (a
system clearly better than ``mt``, so that some paired test is significant).

Chinese, Japanese, Korean: short sentences written for these tests.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SACREBLEU = str(Path(sys.executable).with_name("sacrebleu"))


def english() -> tuple[list[str], dict[str, list[str]]]:
    rows = [json.loads(line) for line in (ROOT / "fixtures" / "diabla" / "utterances.jsonl").open(encoding="utf-8")]
    rows = [r for r in rows if r["source_language"] == "french"]
    refs = [r["reference"].strip() for r in rows]
    mt = [r["mt"].strip() for r in rows]
    shuffled = []
    for i, line in enumerate(mt):
        words = line.split()
        shuffled.append(" ".join(words[1:] + words[:1]) if i % 3 == 0 and len(words) > 1 else line)
    oracle = [ref if i % 2 else hyp for i, (ref, hyp) in enumerate(zip(refs, mt))]
    return refs, {"mt": mt, "shuffled": shuffled, "oracle": oracle}


CHINESE_REFS = [
    "我们明天早上八点在火车站见面。", "这家餐厅的菜很好吃，但是价格有点贵。", "他昨天晚上没有回家，因为工作太忙了。",
    "请把窗户关上，外面风很大。", "当我到达的时候，会议已经开始了。", "她们正在讨论下个月的旅行计划。",
    "你能帮我找一下我的钥匙吗？", "这本书我已经看了三遍了。", "如果明天下雨，我们就不去公园了。",
    "他们说这个问题很难解决。", "我觉得你应该早点休息。", "这个城市的交通比以前好多了。",
]
CHINESE_SYSTEMS = {
    "sys1": [
        "我们明天早上八点在车站见面。", "这个餐厅的菜很好吃，可是价格有点贵。", "他昨晚没回家，因为工作很忙。",
        "请关上窗户，外面风很大。", "我到的时候，会议已经开始了。", "她们在讨论下个月的旅游计划。",
        "你可以帮我找我的钥匙吗？", "这本书我看了三次了。", "要是明天下雨，我们就不去公园。",
        "他们说这个问题很难解决。", "我认为你应该早点休息。", "这个城市的交通比以前好很多。",
    ],
    "sys2": [
        "明天八点我们见面在火车站。", "餐厅的菜好吃，价格贵。", "昨天他不回家，工作忙。",
        "关窗户，风大。", "会议开始了当我到达。", "他们讨论旅行计划下个月。",
        "你帮我找钥匙？", "书我看三遍。", "下雨明天，不去公园。",
        "问题难解决他们说。", "你早休息我觉得。", "城市交通好了。",
    ],
}
JAPANESE_REFS = ["猫が窓のそばで寝ています。", "明日は雨が降るそうです。", "駅までどのくらいかかりますか。"]
JAPANESE_HYPS = ["猫は窓の近くで寝ている。", "明日は雨だそうです。", "駅までどれくらいかかりますか。"]
KOREAN_REFS = ["고양이가 창문 옆에서 자고 있어요.", "내일은 비가 온대요.", "역까지 얼마나 걸려요?"]
KOREAN_HYPS = ["고양이는 창문 근처에서 자요.", "내일 비가 온다고 해요.", "역까지 얼마나 걸립니까?"]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_systems(directory: Path, refs: list[str], systems: dict[str, list[str]]) -> tuple[Path, list[Path]]:
    """``ref.txt`` and one ``NAME.txt`` per system, in order."""
    ref = write(directory / "ref.txt", refs)
    return ref, [write(directory / f"{name}.txt", lines) for name, lines in systems.items()]


def sacrebleu_cli(*args: str, env: dict[str, str] | None = None) -> Any:
    """sacrebleu's own command (``--format json``, quiet, 10 decimals) on files; its parsed JSON output."""
    proc = subprocess.run([SACREBLEU, *args, "-q", "--format", "json", "-w", "10"], capture_output=True,
                          text=True, env=env, check=True)
    return json.loads(proc.stdout)
