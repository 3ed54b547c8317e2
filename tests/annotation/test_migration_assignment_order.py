"""annotation/0004_assignment_order fills document numbers and counts for studies that existed before it."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("studies", "0004_sentences"), ("annotation", "0003_annotator_external_sessions")]
AFTER = [("studies", "0006_assignment_order"), ("annotation", "0004_assignment_order")]


@pytest.mark.django_db(transaction=True)
def test_existing_studies_get_document_numbers_and_counts_that_leave_out_excluded_work():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Study, Item = apps.get_model("studies", "Study"), apps.get_model("studies", "Item")
    Annotator, Assignment = apps.get_model("annotation", "Annotator"), apps.get_model("annotation", "Assignment")
    study = Study.objects.create(slug="old", title="Old", redundancy=2, seed=5)
    items = [Item.objects.create(study=study, external_id=f"i{k}", document_id=f"d{k // 2}", position=k % 2)
             for k in range(6)]
    spam = Item.objects.create(study=study, external_id="i0~spam", document_id="spam:i0", is_spam=True)
    kept = Annotator.objects.create(study=study, token="t1", code="a1", sequence=1)
    gone = Annotator.objects.create(study=study, token="t2", code="a2", sequence=2, excluded=True)
    statuses = {kept: ["done", "done", "pending", "released"], gone: ["done", "done"]}
    for annotator, these in statuses.items():
        for k, status in enumerate(these):
            Assignment.objects.create(annotator=annotator, item=items[k], sequence=k + 1, status=status)
    Item.objects.filter(pk=items[0].pk).update(n_assigned=2)  # the old count included excluded work

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps
    Study, Item = apps.get_model("studies", "Study"), apps.get_model("studies", "Item")
    study = Study.objects.get(slug="old")
    got = {i.external_id: i for i in Item.objects.filter(study=study)}
    assert study.n_documents == 4  # three real documents, then the spam copy's
    assert sorted({got[f"i{k}"].doc_index for k in range(6)}) == [0, 1, 2] and got["i0~spam"].doc_index == 3
    assert got["i0"].doc_index == got["i1"].doc_index  # one document, one number
    assert [got[f"i{k}"].n_assigned for k in range(6)] == [1, 1, 1, 0, 0, 0]  # released and excluded work left out
    assert all(got[f"i{k}"].is_open for k in range(6)) and study.n_open_items == 7
    assert spam.pk == got["i0~spam"].pk
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest schema for the other tests
