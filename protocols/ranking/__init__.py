"""Ranking: the annotator ranks every candidate of an item (DiP A.1-A.3; BlonDe App. B)."""
