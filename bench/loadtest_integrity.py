"""Integrity of a load-benchmark run, read from the database after the clients stop.

Plain SQL on the tables every version of the hand-out keeps (study, item,
annotator, assignment, judgment), through any DB-API cursor with ``%s``
parameters: psycopg in ``bench/loadtest.py``, Django's cursor in the test.
Nothing here imports the application, so it checks whatever the code does.

The clients never revise an answer (a retry sends the identical payload), so
every assignment of the run has at most one judgment row.
"""
from __future__ import annotations

from typing import Any

#: (name, what it means, SQL returning one row per violation; the one parameter is the study id).
CHECKS: list[tuple[str, str, str]] = [
    ("annotator_twice", "an annotator holds two assignments of one item",
     """SELECT a.annotator_id, a.item_id FROM annotation_assignment a
        JOIN studies_item i ON i.id = a.item_id WHERE i.study_id = %s
        GROUP BY a.annotator_id, a.item_id HAVING COUNT(*) > 1"""),
    ("two_current", "an annotator has two current judgments of one item",
     """SELECT a.annotator_id, a.item_id FROM annotation_judgment j
        JOIN annotation_assignment a ON a.id = j.assignment_id
        JOIN studies_item i ON i.id = a.item_id
        WHERE i.study_id = %s AND j.is_current
        GROUP BY a.annotator_id, a.item_id HAVING COUNT(*) > 1"""),
    ("doubled_rows", "an assignment has two judgment rows (the clients never revise: a retry stored twice)",
     """SELECT j.assignment_id FROM annotation_judgment j
        JOIN annotation_assignment a ON a.id = j.assignment_id
        JOIN studies_item i ON i.id = a.item_id
        WHERE i.study_id = %s GROUP BY j.assignment_id HAVING COUNT(*) > 1"""),
    ("over_redundancy", "an item has more current judgments of non-excluded annotators than the redundancy",
     """SELECT a.item_id FROM annotation_judgment j
        JOIN annotation_assignment a ON a.id = j.assignment_id
        JOIN annotation_annotator n ON n.id = a.annotator_id
        JOIN studies_item i ON i.id = a.item_id
        JOIN studies_study s ON s.id = i.study_id
        WHERE i.study_id = %s AND j.is_current AND NOT n.excluded
        GROUP BY a.item_id, s.redundancy HAVING COUNT(*) > s.redundancy"""),
    ("over_handed_out", "an item is handed out (not released or skipped) to more annotators than the redundancy",
     """SELECT a.item_id FROM annotation_assignment a
        JOIN studies_item i ON i.id = a.item_id
        JOIN studies_study s ON s.id = i.study_id
        WHERE i.study_id = %s AND a.status NOT IN ('released', 'skipped')
        GROUP BY a.item_id, s.redundancy HAVING COUNT(*) > s.redundancy"""),
]


def integrity_check(cursor: Any, *, slug: str, acked: dict[str, str]) -> dict[str, Any]:
    """Violations of the run on study ``slug``; ``acked`` maps each judgment id a client got in a 201/200 to its assignment.

    Returns counts: ``lost`` (acknowledged, no row), ``doubled`` (an assignment
    acknowledged with two ids, or stored twice), ``unacknowledged`` (rows no
    client heard of: stored, but every retry of it failed — not a violation, but
    shown), one count per entry of CHECKS, and ``violations``, their sum.
    """
    cursor.execute("SELECT id FROM studies_study WHERE slug = %s", [slug])
    row = cursor.fetchone()
    if row is None:
        raise LookupError(f"no study {slug!r}")
    study_id = row[0]
    cursor.execute("""SELECT j.public_id, a.public_id FROM annotation_judgment j
                      JOIN annotation_assignment a ON a.id = j.assignment_id
                      JOIN studies_item i ON i.id = a.item_id WHERE i.study_id = %s""", [study_id])
    stored = {judgment: assignment for judgment, assignment in cursor.fetchall()}
    result: dict[str, Any] = {"rows": len(stored), "acknowledged": len(acked)}
    result["lost"] = sum(1 for judgment in acked if judgment not in stored)
    by_assignment: dict[str, set[str]] = {}
    for judgment, assignment in acked.items():
        by_assignment.setdefault(assignment, set()).add(judgment)
    acked_twice = sum(1 for ids in by_assignment.values() if len(ids) > 1)
    result["unacknowledged"] = sum(1 for judgment in stored if judgment not in acked)
    for name, _meaning, sql in CHECKS:
        cursor.execute(sql, [study_id])
        result[name] = len(cursor.fetchall())
    result["doubled"] = acked_twice + result["doubled_rows"]
    result["violations"] = result["lost"] + acked_twice + sum(result[name] for name, _, _ in CHECKS)
    return result


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) with linear interpolation between closest ranks; nan when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
