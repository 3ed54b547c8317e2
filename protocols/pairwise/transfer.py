"""The pairwise protocol in exports and imports: a score (and spans) per candidate row, the preference in
the ``choice`` column (the preferred system, or ``tie``) of both rows; and Appraise's pairwise score export
(``import_judgments --format appraise-pairwise-csv``) turned into such rows."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from annotation.importing.base import MAX_ERRORS, JudgmentImportError
from protocols.pairwise.appraise import AppraisePairwiseError, PairResult, parse_appraise_pairwise
from protocols.spans.transfer import SpanTransfer

if TYPE_CHECKING:
    from studies.models import Candidate, Item

APPRAISE_PAIRWISE = "appraise-pairwise-csv"
#: Appraise's quality-control results, not judgments of the systems: counted in the provenance and dropped.
CONTROL_TYPES = ("BAD", "REF", "CHK")


class PairwiseTransfer(SpanTransfer):
    imports_scores = True
    import_formats: ClassVar[dict[str, str]] = {
        APPRAISE_PAIRWISE: "Appraise's pairwise score export (ExportSystemScoresToCSV of a pairwise campaign)"}

    def rated_row_problems(self, row: Any) -> list[str]:
        return [f"line {row.line}: score is empty in a pairwise study"] if row.score is None else []

    def import_answer(self, rows: list[Any], candidates: dict[tuple[int, str], Candidate], item: Item) -> dict[str, Any]:
        answer = super().import_answer(rows, candidates, item)
        preferred = rows[0].choice
        if preferred == "tie":
            answer["choice"] = {"option": "tie"}
        elif preferred:
            chosen = candidates.get((item.pk, preferred))
            if chosen is None:
                raise JudgmentImportError([f"line {rows[0].line}: choice {preferred!r} is neither 'tie' nor a system "
                                           f"of item {item.external_id!r}"])
            answer["choice"] = {"candidate": chosen.pk}
        return answer

    def import_records(self, fmt: str, name: str, content: str) -> tuple[list[tuple[int, dict[str, Any]]], str]:
        if fmt != APPRAISE_PAIRWISE:
            return super().import_records(fmt, name, content)
        try:
            results = parse_appraise_pairwise(name, content)
        except AppraisePairwiseError as exc:
            raise JudgmentImportError(exc.problems[:MAX_ERRORS]) from None
        return appraise_records(name, results, self.name)


def _system(side: Any) -> str:
    """A side's system: its name, or Appraise's own ``sysA+sysB`` when several systems gave the same output."""
    return "+".join(side.systems)


def _base_item(result: PairResult) -> str:
    # Document campaigns number segments within each document, as the score import's items do.
    return f"{result.document}#{result.segment}" if result.document else result.segment


def appraise_records(name: str, results: list[PairResult], protocol: str) -> tuple[list[tuple[int, dict[str, Any]]], str]:
    """Appraise's results as export records: an item per segment and pair of systems, the preference the
    higher-scored side (a tie when the scores are equal); whole-document and control results counted and dropped."""
    problems: list[str] = []
    kept = [r for r in results if r.item_type == "TGT" and not r.complete_document]
    n_documents = sum(r.complete_document for r in results if r.item_type == "TGT")
    n_controls = sum(r.item_type in CONTROL_TYPES for r in results)
    pairs: dict[str, set[tuple[str, str]]] = {}
    for r in kept:
        pairs.setdefault(_base_item(r), set()).add(tuple(sorted((_system(r.first), _system(r.second)))))  # type: ignore[arg-type]
    seen_appraise: dict[str, tuple[str, tuple[str, str], int]] = {}
    seen_judgments: dict[tuple[str, str], int] = {}
    records: list[tuple[int, dict[str, Any]]] = []
    for r in kept:
        pair = tuple(sorted((_system(r.first), _system(r.second))))
        base = _base_item(r)
        item = base if len(pairs[base]) == 1 else f"{base} ({pair[0]} vs {pair[1]})"
        if r.appraise_item:
            first = seen_appraise.setdefault(r.appraise_item, (base, pair, r.line))  # type: ignore[arg-type]
            if first[:2] != (base, pair):
                problems.append(f"{name}, line {r.line}: item id {r.appraise_item}: segment {base!r} with systems "
                                f"{' and '.join(pair)}, but segment {first[0]!r} with systems {' and '.join(first[1])} "
                                f"on line {first[2]} (one Appraise item is one segment and one pair of outputs)")
                continue
        earlier = seen_judgments.setdefault((r.annotator, item), r.line)
        if earlier != r.line:
            problems.append(f"{name}, line {r.line}: annotator {r.annotator!r} scored item {item!r} again (line "
                            f"{earlier}); a deliberate second look is Appraise's CHK type")
            continue
        if r.first.score == r.second.score:
            choice = "tie"
        else:
            choice = _system(r.first if r.first.score > r.second.score else r.second)
        assert r.started_at is not None and r.submitted_at is not None  # the reader refuses results without times
        duration = round((r.submitted_at - r.started_at).total_seconds() * 1000)
        for position, side in enumerate((r.first, r.second), start=1):
            records.append((side.lines[0], {
                "item": item, "document": r.document, "annotator": r.annotator, "system": _system(side),
                "is_reference": False, "is_spam": False, "is_spam_candidate": False, "rank": "", "choice": choice,
                "label": "", "screen_position": position, "started_at": r.started_at.isoformat(),
                "submitted_at": r.submitted_at.isoformat(), "duration_ms": duration, "score": int(side.score) if side.score.is_integer() else side.score,
                "protocol": protocol, "revision": 1, "judgment": f"{r.annotator}|{item}"}))
    if problems:
        raise JudgmentImportError(problems[:MAX_ERRORS])
    if not records:
        raise JudgmentImportError([f"{name}: no pairwise result of type TGT on a segment (whole-document scores "
                                   "and BAD, REF and CHK results are not judgments of the systems)"])
    notes = [f"{len(kept)} results, {len(records)} scores"]
    if n_documents:
        notes.append(f"{n_documents} whole-document results dropped")
    if n_controls:
        notes.append(f"{n_controls} quality-control results (BAD, REF, CHK) dropped")
    return records, "; ".join(notes)
