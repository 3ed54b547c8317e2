"""ESA: error spans marked, then a 0-100 score per candidate (Kocmi et al. 2024); without spans, DA."""
