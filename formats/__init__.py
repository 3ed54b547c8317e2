"""Readers and writers of other tools' file formats, in pure Python (no Django, no app)."""
