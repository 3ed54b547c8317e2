"""Judgments written out (``export_judgments``): CSV/JSONL and Google's MQM TSV."""
