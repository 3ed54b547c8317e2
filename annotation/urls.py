from django.urls import path

from annotation import tutorial, views

app_name = "annotation"

urlpatterns = [
    path("a/<str:token>/", views.start, name="start"),
    path("a/<str:token>/item/", views.item_current, name="item-current"),
    path("a/<str:token>/item/<str:assignment>/", views.item_detail, name="item-detail"),
    path("a/<str:token>/item/<str:assignment>/skip/", views.item_skip, name="item-skip"),
    path("a/<str:token>/done/", views.done, name="done"),
    path("a/<str:token>/tutorial/", tutorial.tutorial_next, name="tutorial"),
    path("a/<str:token>/tutorial/<int:step>/", tutorial.tutorial_step, name="tutorial-step"),
    path("p/<slug:slug>/", views.prolific, name="prolific"),
]
