"""Issue 14: unique (study, sequence) for annotators; server-side ``duration_ms`` and the client's as
``client_duration_ms``.

Data, before the constraint:

- Duplicate arrival numbers (two annotators created at the same moment before
  the allocation took the study's row lock): in each study the earliest
  annotator (lowest id) keeps its number; every later duplicate gets a new one
  after the study's highest, in id order. What they were already handed keeps
  its stored screen order (``Assignment.candidate_order``); only their future
  hand-outs follow the walk of the new number (annotation.handout.ordering).
- Durations: ``duration_ms`` held the client's figure whenever the client sent
  both its times. That figure moves to ``client_duration_ms`` (judgments with
  both client times), and ``duration_ms`` becomes the server's for every
  judgment: ``submitted_at`` − ``started_at``, in ms, clamped to
  [0, 2 147 483 647] as the service stores it. Judgments imported from a file
  (annotation.importing.judgments) have no client times: their stored duration is
  the file's figure and is kept as it is.
"""
from __future__ import annotations

from django.db import migrations, models
from django.db.models import Count

DURATION_MS_MAX = 2_147_483_647
BATCH = 2000


def dedupe_sequences(apps, schema_editor) -> None:
    Annotator = apps.get_model("annotation", "Annotator")
    clashes = (Annotator.objects.values("study_id", "sequence").annotate(n=Count("id")).filter(n__gt=1)
               .order_by("study_id", "sequence"))
    for study_id in sorted({c["study_id"] for c in clashes}):
        annotators = list(Annotator.objects.filter(study_id=study_id).order_by("id").values_list("id", "sequence"))
        highest = max(seq for _, seq in annotators)
        taken: set[int] = set()
        for pk, sequence in annotators:
            if sequence in taken:
                highest += 1
                Annotator.objects.filter(pk=pk).update(sequence=highest)
            else:
                taken.add(sequence)


def server_durations(apps, schema_editor) -> None:
    Judgment = apps.get_model("annotation", "Judgment")
    last = 0
    while True:
        batch = list(Judgment.objects.filter(pk__gt=last).order_by("pk").values_list(
            "pk", "started_at", "submitted_at", "client_started_at", "client_submitted_at", "duration_ms")[:BATCH])
        if not batch:
            break
        for pk, started, submitted, client_started, client_submitted, duration in batch:
            if client_started is None or client_submitted is None:
                continue  # server time already (answers without client times, imported judgments)
            server = min(max(0, int((submitted - started).total_seconds() * 1000)), DURATION_MS_MAX)
            Judgment.objects.filter(pk=pk).update(duration_ms=server, client_duration_ms=duration)
        last = batch[-1][0]


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0007_i12_check_schedule'),
        ('studies', '0010_item_languages'),
    ]

    operations = [
        migrations.AddField(
            model_name='judgment',
            name='client_duration_ms',
            field=models.PositiveIntegerField(blank=True, help_text="The client's own figure (client_submitted_at − client_started_at, ms) when it sent both times; never used by quality control.", null=True),
        ),
        migrations.AlterField(
            model_name='judgment',
            name='duration_ms',
            field=models.PositiveIntegerField(blank=True, help_text="Server time on the item: from started_at to the answer's arrival (ms).", null=True),
        ),
        migrations.RunPython(dedupe_sequences, migrations.RunPython.noop),
        migrations.RunPython(server_durations, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='annotator',
            constraint=models.UniqueConstraint(fields=('study', 'sequence'), name='annotator_unique_sequence'),
        ),
    ]
