"""Judgments collected elsewhere, stored as a closed study (``import_judgments``)."""
