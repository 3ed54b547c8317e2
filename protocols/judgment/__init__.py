"""Judgment: the annotator labels the highlighted part of one candidate (DiP A.6)."""
