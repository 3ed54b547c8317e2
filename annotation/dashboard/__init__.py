"""Reads for the researcher's side: progress of studies and annotators, one annotator's work."""
