from django.urls import path

from annotation.pages import tutorial

from annotation.pages import views

app_name = "annotation"

urlpatterns = [
    # The annotator's pages without the token: the annotator is the one in the cookie (annotation/pages/links.py).
    # Before the token addresses, so that "item", "done" and "tutorial" are never read as a token.
    path("a/", views.start, name="cookie-start"),
    path("a/item/", views.item_current, name="cookie-item-current"),
    path("a/item/<str:assignment>/", views.item_detail, name="cookie-item-detail"),
    path("a/item/<str:assignment>/skip/", views.item_skip, name="cookie-item-skip"),
    path("a/done/", views.done, name="cookie-done"),
    path("a/tutorial/", tutorial.tutorial_next, name="cookie-tutorial"),
    path("a/tutorial/<int:step>/", tutorial.tutorial_step, name="cookie-tutorial-step"),
    # The invitation link (its GET sets the cookie and redirects to "a/") and the older token addresses.
    path("a/<str:token>/", views.start, name="start"),
    path("a/<str:token>/item/", views.item_current, name="item-current"),
    path("a/<str:token>/item/<str:assignment>/", views.item_detail, name="item-detail"),
    path("a/<str:token>/item/<str:assignment>/skip/", views.item_skip, name="item-skip"),
    path("a/<str:token>/done/", views.done, name="done"),
    path("a/<str:token>/tutorial/", tutorial.tutorial_next, name="tutorial"),
    path("a/<str:token>/tutorial/<int:step>/", tutorial.tutorial_step, name="tutorial-step"),
    path("p/<slug:slug>/", views.prolific, name="prolific"),
]
