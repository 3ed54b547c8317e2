"""Pairwise: two candidates side by side, each scored 0-100 with the WMT anchors, optional error
spans and an optional preference with ties (Appraise's pairwise and pairwise-document tasks;
Pearmut's contrastive ESA). Sentence and document units."""
