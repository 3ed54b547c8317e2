"""The hot path's statements (annotation/handout/statements.py) give the same model instances as the ORM:
every column's value, the instance state, the related objects they set; ``pre_init``/``post_init`` receivers
still see the instances they make."""
from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Model
from django.db.models.signals import post_init

from annotation.handout import statements
from annotation.handout.services import annotators_create
from annotation.models import Annotator, Assignment, AssignmentStatus
from studies.models import Candidate, Item, Study
from tests.conftest import annotator_client
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def columns(instance: Model) -> dict[str, Any]:
    """Every column's value as stored on the instance (``__dict__``, where the ORM puts it)."""
    return {f.attname: instance.__dict__[f.attname] for f in type(instance)._meta.concrete_fields}


def same_as_the_orm(instance: Model) -> None:
    model = type(instance)
    fresh = model._default_manager.get(pk=instance.pk)
    assert columns(instance) == columns(fresh)
    assert [type(v) for v in columns(instance).values()] == [type(v) for v in columns(fresh).values()]
    assert (instance._state.adding, instance._state.db) == (fresh._state.adding, fresh._state.db) == (False, "default")


def test_assignment_by_token_loads_what_the_orm_loads():
    study = make_study(n_items=2, n_candidates=3, settings={"question": "Which is best?", "options": ["tie", "invalid"]})
    annotator = annotators_create(study=study)[0]
    data = annotator_client(annotator).get("/api/v1/annotate/next").json()
    loaded = statements.assignment_by_token(token=annotator.token, public_id=data["assignment"], candidates=True)
    assert loaded is not None
    # Made without Model.__init__ except the Study (its from_db notes the redundancy as loaded).
    assert all(statements._plain(m) for m in (Assignment, Item, Annotator, Candidate)) and not statements._plain(Study)
    assert loaded.item.study._saved_redundancy == study.redundancy
    for instance in (loaded, loaded.item, loaded.item.study, loaded.annotator, *loaded.candidates_loaded):
        same_as_the_orm(instance)
    assert [type(x) for x in (loaded, loaded.item, loaded.item.study, loaded.annotator)] == [
        Assignment, Item, Study, Annotator]
    assert len(loaded.candidates_loaded) == 3 and all(isinstance(c, Candidate) for c in loaded.candidates_loaded)
    # The related objects are cached as the ORM's select_related caches them: no query to reach them.
    assert loaded.item.study is loaded.annotator.study
    assert loaded.item_id == loaded.item.pk and loaded.annotator_id == loaded.annotator.pk


def test_annotator_for_next_loads_what_the_orm_loads():
    study = make_study(n_items=2)
    annotator = annotators_create(study=study)[0]
    annotator_client(annotator).get("/api/v1/annotate/next")
    found = statements.annotator_for_next(annotator.token, done=AssignmentStatus.DONE, pending=AssignmentStatus.PENDING)
    assert found is not None
    loaded, last, _counts = found
    assert last is not None
    for instance in (loaded, loaded.study, last, last.item):
        same_as_the_orm(instance)


def test_a_post_init_receiver_still_sees_every_instance():
    study = make_study(n_items=1, n_candidates=2)
    annotator = annotators_create(study=study)[0]
    data = annotator_client(annotator).get("/api/v1/annotate/next").json()
    seen: list[type] = []

    def receiver(sender: type, instance: Model, **kwargs: Any) -> None:
        seen.append(sender)

    post_init.connect(receiver)
    try:
        loaded = statements.assignment_by_token(token=annotator.token, public_id=data["assignment"], candidates=True)
    finally:
        post_init.disconnect(receiver)
    assert loaded is not None
    assert sorted(m.__name__ for m in seen) == ["Annotator", "Assignment", "Candidate", "Candidate", "Item", "Study"]
    same_as_the_orm(loaded)


@pytest.mark.parametrize("text", [None, "[]", "{}", "null", "[ ]", "{ }", '""', '"[]"', "0", "1.5", "true", "false",
                                  '[[0, 3]]', '{"a": [1, {"b": null}]}', '"é"', "not json", "[1,", "NaN"])
def test_json_columns_decode_as_django_does(text):
    field = Study._meta.get_field("options")
    from django.db import connection
    mine, django = statements._json_column(text, None, connection), field.from_db_value(text, None, connection)
    assert repr(mine) == repr(django) and type(mine) is type(django)  # repr: NaN is not equal to itself
    if isinstance(mine, (list, dict)):
        assert mine is not statements._json_column(text, None, connection)  # a new object each time, never shared


def test_the_hot_path_decodes_json_columns_without_django_converter_but_to_the_same_values():
    attnames, converters = statements._loader(Study, "x")
    json_columns = [k for k, _e, functions in converters if statements._json_column in functions]
    assert len(json_columns) == sum(1 for f in Study._meta.concrete_fields if f.get_internal_type() == "JSONField") == 10
    study = make_study(n_items=1, settings={"options": ["tie"], "question": "Q?"})
    annotator = annotators_create(study=study)[0]
    loaded = statements.annotator_with_study(annotator.token)
    assert loaded is not None
    loaded.study.options.append("mutated")  # each instance has its own objects
    again = statements.annotator_with_study(annotator.token)
    assert again is not None and "mutated" not in again.study.options
    same_as_the_orm(again.study)
