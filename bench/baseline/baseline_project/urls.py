from django.urls import path

from rows import views

urlpatterns = [
    path("next", views.next_row, name="baseline-next"),
    path("submit/<int:key>", views.submit, name="baseline-submit"),
]
