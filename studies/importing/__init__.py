"""The study file: validated, normalised and stored (docs/study-file.md)."""
