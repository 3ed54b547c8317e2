"""Invitation links and the Prolific entry URL."""
from django.conf import settings
from django.urls import reverse

from annotation.models import Annotator

#: The URL parameters Prolific fills in (its ``{{%NAME%}}`` placeholders); ``prolific`` reads these names.
PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


def invitation_url(annotator: Annotator, base_url: str | None = None) -> str:
    base = (base_url or settings.SITE_URL).rstrip("/")
    return base + reverse("annotation:start", args=[annotator.token])


def prolific_url(*, slug: str, base_url: str | None = None) -> str:
    """The study URL to paste into Prolific, with Prolific's placeholders left for Prolific to fill."""
    base = (base_url or settings.SITE_URL).rstrip("/")
    query = "&".join(f"{name}={{{{%{name}%}}}}" for name in PROLIFIC_PARAMS)
    return f"{base}{reverse('annotation:prolific', args=[slug])}?{query}"
