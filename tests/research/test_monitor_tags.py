"""Durations and 'ago' on the monitoring pages."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from research.templatetags.monitor_tags import ago, duration


def test_duration():
    assert duration(None) == "—"
    assert duration(timedelta(seconds=44.6)) == "45 s"
    assert duration(12 * 60) == "12 min"
    assert duration(timedelta(hours=3, minutes=20)) == "3 h 20 min"
    assert duration(timedelta(hours=5)) == "5 h"
    assert duration(timedelta(days=2, hours=4)) == "2 d 4 h"
    assert duration(-5) == "0 s"


def test_ago():
    assert ago(None) == "never"
    assert ago(timezone.now() - timedelta(seconds=10)) == "just now"
    assert ago(timezone.now() - timedelta(minutes=90)) == "1 h 30 min ago"
