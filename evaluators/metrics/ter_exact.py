"""sacrebleu's TER (Snover et al. 2006), the same numbers, fast on long segments such as whole documents.

sacrebleu's ``lib_ter.translation_edit_rate`` (version pinned in requirements.txt) repeats a greedy shift
search: each round takes the beam edit distance (a band of 2×25 cells around the pseudo-diagonal) of the
current hypothesis, enumerates shift candidates (matching word sequences of up to 10 words, at most 50
positions apart, in sacrebleu's order), computes the edit distance of every shifted hypothesis and
applies the best shift; it stops when no shift helps or when 1,000 candidates have been counted over all
rounds — and the round in which the count reaches 1,000 is *discarded* (its best shift is not applied).
On a 2,000-word document every candidate costs a Python edit distance over the whole hypothesis after the
shift point, and sacrebleu allocates full ``n_ref + 1`` rows for each: about a minute per document.

This module computes the same result (the same edits, so the same score to the last bit) with three
exact shortcuts, none of which changes what sacrebleu compares:

1. **The candidate count comes first.**  Enumerating and filtering candidates needs only the current
   hypothesis' alignment, not the candidates' distances, so a round's candidates are listed before any
   is scored; when the list reaches the 1,000-candidate limit the round is discarded exactly as sacrebleu
   discards it, without computing a single candidate distance.  On whole documents this is usually the
   first round: the result is then the beam edit distance of the hypothesis itself.
2. **Only the changed rows are recomputed.**  A shift changes words in ``[min(start, target),
   max(start, target) + length)``; the band rows before it are the current hypothesis' rows (sacrebleu's
   prefix trie gives it the same), and after it the words are the same again.  Every band row after the
   change is a min-plus function of the previous row; when a candidate's row equals the current
   hypothesis' row plus a constant ``c`` (all band cells finite), every later row does too, so the
   candidate's distance is the current distance plus ``c`` — without computing the rest of the matrix.
3. **Only the band is stored** (the band's bounds depend on the row and on the two lengths only, and a
   shift keeps the hypothesis length), values only: the edit operations are derived for the cells the
   trace walks.  Words are compared as integers.
4. **Levenshtein rows bit-parallel** (Myers 1999 in Hyyrö's global form): when the band covers the whole
   matrix (references of up to ~25 words, most sentences) its rows are the Levenshtein rows, so distances
   and the trace come from bit vectors, a few integer operations a row; otherwise the Levenshtein distance
   is a lower bound of the band's (its paths are a subset), and a candidate whose bound shows that it
   cannot beat the best shift so far (nor gain anything) is not computed further.  On the TED release's
   7,406 sentences sentence-level TER went from 4.3 s to 2.2 s of CPU (docs/evaluators.md).

Ties are broken as sacrebleu breaks them: in a cell, substitution/match, then deletion, then insertion,
each replacing the previous only when strictly smaller; among shifts, the largest gain, then the longest,
then the earliest start, then the earliest target.  ``tests/evaluators/metrics/test_ter_exact.py`` checks
equality with sacrebleu on random and edge-case pairs and on the TED fixture's documents.
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any, NamedTuple

# sacrebleu.metrics.lib_ter's constants (Tercom's limits and sacrebleu's own).
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
INF = int(1e16)

_NOP, _SUB, _INS, _DEL, _UNDEF = " ", "s", "i", "d", "x"


class _Band:
    """The beam edit distance of hypotheses of one length against one reference, as sacrebleu's ``BeamEditDistance``.

    Row ``i`` (after ``i`` hypothesis words) holds columns ``lo[i] <= j < hi[i]``; every other cell is
    infinite.  ``base`` is the current hypothesis: its rows, ops and distance.
    """

    def __init__(self, ref: list[int], n_hyp: int) -> None:
        self.ref = ref
        self.n_ref = n_ref = len(ref)
        self.n_hyp = n_hyp
        ratio = n_ref / n_hyp if n_hyp else 1
        beam = math.ceil(ratio / 2 + BEAM_WIDTH) if BEAM_WIDTH < ratio / 2 else BEAM_WIDTH
        self.lo = [0]
        self.hi = [n_ref + 1]
        for i in range(1, n_hyp + 1):
            diag = math.floor(i * ratio)
            self.lo.append(max(0, diag - beam))
            self.hi.append(n_ref + 1 if i == n_hyp else min(n_ref + 1, diag + beam))
        #: The band covers the whole matrix (a reference of at most ~25 words): the rows are plain Levenshtein
        #: rows, and a candidate's distance is computed bit-parallel (:meth:`levenshtein_of`); else that
        #: Levenshtein distance is a lower bound of the band's (whose paths are a subset).
        self.full = all(self.lo[i] == 0 and self.hi[i] == n_ref + 1 for i in range(1, n_hyp + 1))
        self.peq: dict[int, int] = {}
        for j, w in enumerate(ref):
            self.peq[w] = self.peq.get(w, 0) | 1 << j
        self.mask = (1 << n_ref) - 1
        #: Per base row ``i``: (positive vertical deltas, negative vertical deltas, the row's last cell) as bits.
        self.states: list[tuple[int, int, int]] = []
        self.rows: list[list[int]] = []
        self.finite: list[bool] = []
        self.words: list[int] = []
        self.distance = 0

    def _padded(self, i: int, prev: list[int]) -> list[int]:
        """Row ``i - 1``'s values at columns ``lo[i] - 1 .. hi[i] - 1`` (infinite outside its band)."""
        lo, hi, plo = self.lo[i], self.hi[i], self.lo[i - 1]
        width = hi - lo + 1
        a = lo - 1 - plo
        if a >= 0:
            out = prev[a:a + width]
        else:
            out = [INF] * (-a) + prev[:width + a]
        if len(out) < width:
            out = out + [INF] * (width - len(out))
        return out

    def _row(self, i: int, prev: list[int], word: int) -> list[int]:
        """Row ``i``'s values only: ``min(INF, diagonal + cost, up + 1, left + 1)`` per cell."""
        lo, hi = self.lo[i], self.hi[i]
        pad = self._padded(i, prev)
        vals: list[int] = []
        left = INF
        k0 = 0
        if lo == 0:
            left = pad[1] + 1
            vals.append(left)
            k0 = 1
        ref = self.ref
        for k in range(k0, hi - lo):
            best = pad[k] if ref[lo + k - 1] == word else pad[k] + 1
            up = pad[k + 1] + 1
            if up < best:
                best = up
            if left < best - 1:
                best = left + 1
            if best > INF:
                best = INF
            vals.append(best)
            left = best
        return vals

    def set_base(self, words: list[int], start: int = 0) -> None:
        """Make ``words`` the current hypothesis; its rows up to ``start`` are the previous base's."""
        if not self.states:
            start = 0
            self.states = [(self.mask, 0, self.n_ref)]
        else:
            del self.states[start + 1:]
        self.states += self._states(words, start)
        self.words = words
        if self.full:  # the Levenshtein rows are the band's: the trace reads its cells from the bit vectors
            self.distance = self.states[self.n_hyp][2]
            return
        if not self.rows:
            start = 0
            self.rows = [list(range(self.n_ref + 1))]
            self.finite = [True]
        else:
            del self.rows[start + 1:], self.finite[start + 1:]
        prev = self.rows[start]
        for i in range(start + 1, self.n_hyp + 1):  # values only: the trace derives the operations it walks
            vals = self._row(i, prev, words[i - 1])
            self.rows.append(vals)
            self.finite.append(max(vals) < INF)
            prev = vals
        self.distance = self.rows[self.n_hyp][self.n_ref - self.lo[self.n_hyp]]

    def _cell(self, i: int, j: int) -> int:
        """Cell ``(i, j)`` of the base's Levenshtein rows: ``i`` plus the row's deltas before column ``j``."""
        pv, mv, _ = self.states[i]
        below = (1 << j) - 1
        return i + (pv & below).bit_count() - (mv & below).bit_count()

    def _op(self, i: int, j: int) -> str:
        """The edit operation of cell ``(i, j)`` of a full band (:meth:`_band_op`'s rule), from the bit vectors."""
        if i == 0:
            return _INS
        if j == 0:
            return _DEL
        diagonal = self._cell(i - 1, j - 1)
        best, op = (diagonal, _NOP) if self.ref[j - 1] == self.words[i - 1] else (diagonal + 1, _SUB)
        up = self._cell(i - 1, j) + 1
        if up < best:
            best, op = up, _DEL
        if self._cell(i, j - 1) + 1 < best:
            op = _INS
        return op

    def _value(self, i: int, j: int) -> int:
        """Cell ``(i, j)`` of the base's band rows (infinite outside the band)."""
        return self.rows[i][j - self.lo[i]] if self.lo[i] <= j < self.hi[i] else INF

    def _band_op(self, i: int, j: int) -> str:
        """The edit operation of cell ``(i, j)`` of the band, from the stored values, as sacrebleu chooses it.

        sacrebleu's ``BeamEditDistance``: substitution (or match) from the diagonal, replaced by a deletion from
        the cell above only when strictly smaller, then by an insertion from the cell on the left only when
        strictly smaller; an infinite diagonal is undefined; column 0 is always a deletion, row 0 an insertion.
        Only the cells the trace walks are asked for, so the rows keep values only.
        """
        if not self.lo[i] <= j < self.hi[i]:
            return _UNDEF
        if i == 0:
            return _INS
        if j == 0:  # sacrebleu: dist[i][0] = dist[i-1][0] + 1, a deletion, unconditionally
            return _DEL
        diagonal = self._value(i - 1, j - 1)
        best, op = (diagonal, _NOP) if self.ref[j - 1] == self.words[i - 1] else (diagonal + 1, _SUB)
        if best >= INF:
            best, op = INF, _UNDEF
        up = self._value(i - 1, j) + 1
        if up < best:
            best, op = up, _DEL
        if self._value(i, j - 1) + 1 < best:  # the left cell: infinite before the band's first column
            op = _INS
        return op

    def trace(self) -> str:
        """The base's edit operations, as sacrebleu's trace (hypothesis rewritten into the reference)."""
        out: list[str] = []
        i, j = self.n_hyp, self.n_ref
        while i > 0 or j > 0:
            op = self._op(i, j) if self.full else self._band_op(i, j)
            out.append(op)
            if op in (_SUB, _NOP):
                i -= 1
                j -= 1
            elif op == _INS:
                j -= 1
            elif op == _DEL:
                i -= 1
            else:
                raise ValueError(f"TER: unknown edit operation {op!r} at ({i}, {j})")
        return "".join(reversed(out))

    def _states(self, words: list[int], first: int, last: int | None = None) -> list[tuple[int, int, int]]:
        """The Levenshtein rows after ``first`` of ``words`` as bit vectors, from the base's row ``first``.

        Myers' bit-parallel edit distance (Myers 1999, JACM 46(3)) in Hyyrö's form for a global distance
        (Hyyrö 2001, "Explaining and extending the bit-parallel approximate string matching algorithm of
        Myers", the horizontal delta of the first row being +1): bit ``j`` of ``pv`` / ``mv`` says that cell
        ``j + 1`` of the row is one more / one less than cell ``j``; ``score`` is the row's last cell.  The values
        are the Levenshtein row's: :meth:`_row`'s when the band is full (it then has no infinite cell), else a
        lower bound of them.  With ``last``: stops at the first row from ``last`` on that equals the base's (the rest is the
        base's too) and returns the rows up to it.
        """
        pv, mv, score = self.states[first]
        peq, mask, high, n_hyp = self.peq, self.mask, 1 << (self.n_ref - 1), self.n_hyp
        base = self.states
        out = []
        for i in range(first + 1, n_hyp + 1):
            eq = peq.get(words[i - 1], 0)
            xv = eq | mv
            xh = (((eq & pv) + pv) ^ pv) | eq
            ph = mv | (~(xh | pv) & mask)
            mh = pv & xh
            if ph & high:
                score += 1
            elif mh & high:
                score -= 1
            ph = ((ph << 1) | 1) & mask
            mh = (mh << 1) & mask
            pv = mh | (~(xv | ph) & mask)
            mv = ph & xv
            out.append((pv, mv, score))
            if last is not None and last <= i < n_hyp and base[i][0] == pv and base[i][1] == mv:
                break
        return out

    def levenshtein_of(self, words: list[int], first: int, last: int) -> int:
        """The Levenshtein distance of ``words`` (equal to the base's words before ``first`` and from ``last`` on)."""
        states = self._states(words, first, last)
        final = self.states[self.n_hyp][2]
        if not states:
            return final
        i = first + len(states)
        # a row equal to the base's (same deltas, same first cell i) ends as the base's does
        return final + states[-1][2] - self.states[i][2] if i < self.n_hyp else states[-1][2]

    def distance_of(self, words: list[int], first: int, last: int, limit: int | None = None) -> int | None:
        """The distance of ``words``, equal to the base's words before ``first`` and from ``last`` on.

        With ``limit``: None when the distance is known to exceed ``limit`` (its Levenshtein lower bound does),
        else the distance.
        """
        if self.full:
            return self.levenshtein_of(words, first, last)
        if limit is not None and self.levenshtein_of(words, first, last) > limit:
            return None
        rows, finite, n_hyp = self.rows, self.finite, self.n_hyp
        prev = rows[first]
        for i in range(first + 1, n_hyp + 1):
            vals = self._row(i, prev, words[i - 1])
            if last <= i < n_hyp and finite[i]:
                base = rows[i]
                c = vals[0] - base[0]
                if vals[0] < INF and self.distance < INF and vals == [b + c for b in base]:
                    return self.distance + c
            prev = vals
        return prev[self.n_ref - self.lo[n_hyp]]


def _alignment(trace: str) -> tuple[set[int], dict[int, int], list[int], list[int]]:
    """sacrebleu's ``trace_to_alignment`` of the flipped trace, with prefix sums of the error flags."""
    pos_hyp = pos_ref = -1
    align: dict[int, int] = {}
    hyp_err = [0]
    ref_err = [0]
    # flipped: sacrebleu swaps insertions and deletions before aligning
    for op in trace:
        if op == _NOP or op == _SUB:
            pos_hyp += 1
            pos_ref += 1
            align[pos_ref] = pos_hyp
            err = 0 if op == _NOP else 1
            hyp_err.append(hyp_err[-1] + err)
            ref_err.append(ref_err[-1] + err)
        elif op == _DEL:  # flipped into an insertion
            pos_hyp += 1
            hyp_err.append(hyp_err[-1] + 1)
        elif op == _INS:  # flipped into a deletion
            pos_ref += 1
            align[pos_ref] = pos_hyp
            ref_err.append(ref_err[-1] + 1)
        else:
            raise ValueError(f"TER: unknown edit operation {op!r}")
    return set(align), align, hyp_err, ref_err


def _err_sum(prefix: list[int], start: int, length: int) -> int:
    """``sum(err[start:start + length])`` from prefix sums, with Python's slice clipping."""
    n = len(prefix) - 1
    a = min(start, n)
    b = min(start + length, n)
    return prefix[b] - prefix[a] if b > a else 0


def _perform_shift(words: list[int], start: int, length: int, target: int) -> list[int]:
    """sacrebleu's ``_perform_shift``: the block ``words[start:start + length]`` moved before ``target``."""
    if target < start:
        return words[:target] + words[start:start + length] + words[target:start] + words[start + length:]
    if target > start + length:
        return words[:start] + words[start + length:target] + words[start:start + length] + words[target:]
    return words[:start] + words[start + length:length + target] + words[start:start + length] + words[length + target:]


def _candidates(words: list[int], ref: list[int], positions: dict[int, list[int]], trace: str,
                checked: int) -> tuple[list[tuple[int, int, int]], int]:
    """sacrebleu's shift candidates ``(start, length, target)`` of a round in its order, and the count.

    Stops, as sacrebleu does, once the running count reaches the limit (the round is then discarded).
    """
    in_align, align, hyp_err, ref_err = _alignment(trace)
    n_h, n_r = len(words), len(ref)
    out: list[tuple[int, int, int]] = []
    for start_h in range(n_h):
        starts = positions.get(words[start_h])
        if not starts:
            continue
        lo = bisect_left(starts, start_h - MAX_SHIFT_DIST)
        hi = bisect_right(starts, start_h + MAX_SHIFT_DIST)
        for start_r in starts[lo:hi]:
            length = 0
            while words[start_h + length] == ref[start_r + length] and length < MAX_SHIFT_SIZE:
                length += 1
                if (_err_sum(hyp_err, start_h, length) != 0 and _err_sum(ref_err, start_r, length) != 0
                        and not start_h <= align[start_r] < start_h + length):
                    prev_idx = -1
                    for offset in range(-1, length):
                        if start_r + offset == -1:
                            idx = 0
                        elif start_r + offset in in_align:
                            idx = align[start_r + offset] + 1
                        else:
                            break
                        if idx == prev_idx:
                            continue
                        prev_idx = idx
                        out.append((start_h, length, idx))
                        checked += 1
                    if checked >= MAX_SHIFT_CANDIDATES:
                        return out, checked
                if n_h == start_h + length or n_r == start_r + length:
                    break
    return out, checked


class Search(NamedTuple):
    """A TER computation: sacrebleu's ``(edits, reference length)`` and how the shift search went."""

    edits: int
    ref_length: int
    shifts: int  # shifts applied
    candidates: int  # shift candidates counted (the search stops at MAX_SHIFT_CANDIDATES)


def translation_edit_rate(words_hyp: Sequence[str], words_ref: Sequence[str]) -> tuple[int, int]:
    """``(edits, reference length)`` exactly as ``sacrebleu.metrics.lib_ter.translation_edit_rate``."""
    found = search(words_hyp, words_ref)
    return found.edits, found.ref_length


def search(words_hyp: Sequence[str], words_ref: Sequence[str]) -> Search:
    """sacrebleu's TER shift search on one hypothesis and one reference (tokenised)."""
    n_ref, n_hyp = len(words_ref), len(words_hyp)
    if n_ref == 0:
        return Search(n_hyp, 0, 0, 0)
    ids: dict[str, int] = {}
    ref = [ids.setdefault(w, len(ids)) for w in words_ref]
    words = [ids.setdefault(w, len(ids)) for w in words_hyp]
    positions: dict[int, list[int]] = {}
    for j, w in enumerate(ref):
        positions.setdefault(w, []).append(j)
    band = _Band(ref, n_hyp)
    band.set_base(words)
    shifts = 0
    checked = 0
    while True:
        pre = band.distance
        candidates, checked = _candidates(words, ref, positions, band.trace(), checked)
        if checked >= MAX_SHIFT_CANDIDATES:
            break  # sacrebleu discards the round that reaches the limit
        # sacrebleu applies the candidate with the largest (gain, length, -start, -target) when its gain is
        # positive; a candidate whose distance's lower bound shows that it cannot beat the best so far (nor
        # gain 1) is not computed further (distance_of's limit): the same shift is chosen.
        best: tuple[int, int, int, int] | None = None
        best_words: list[int] = words
        best_first = 0
        for start, length, target in candidates:
            if best is None:
                needed = 1
            else:
                needed = best[0] if (length, -start, -target) > best[1:] else best[0] + 1
            shifted = _perform_shift(words, start, length, target)
            first = min(start, target)
            last = min(n_hyp, max(start, target) + length)
            distance = band.distance_of(shifted, first, last, pre - needed)
            if distance is not None and pre - distance >= needed:
                best, best_words, best_first = (pre - distance, length, -start, -target), shifted, first
        if best is None:
            break
        shifts += 1
        words = best_words
        band.set_base(words, best_first)
    return Search(shifts + band.distance, n_ref, shifts, checked)


def segment_statistics(hypothesis: str, ref_kwargs: dict[str, Any]) -> list[float]:
    """``TER._compute_segment_statistics``: the fewest edits over the references and their mean length."""
    words_hyp = hypothesis.split()
    ref_words = ref_kwargs["ref_words"]
    ref_lengths = 0
    best_num_edits = int(1e16)
    for words_ref in ref_words:
        num_edits, ref_len = translation_edit_rate(words_hyp, words_ref)
        ref_lengths += ref_len
        if num_edits < best_num_edits:
            best_num_edits = num_edits
    return [best_num_edits, ref_lengths / len(ref_words)]
