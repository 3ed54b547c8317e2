"""Two tables: rows to read (indexed by key) and answers to append."""
from __future__ import annotations

from django.db import models


class Row(models.Model):
    key = models.IntegerField(unique=True, help_text="What GET /next looks up (a unique index).")
    payload = models.JSONField(help_text="A response of about the real app's size: three candidates.")


class Answer(models.Model):
    row_key = models.IntegerField(db_index=True, help_text="The row answered.")
    token = models.CharField(max_length=64, help_text="The client's Authorization header.")
    answer = models.JSONField(help_text="The JSON body, as sent.")
    created_at = models.DateTimeField(auto_now_add=True)
