"""A study's lifecycle (draft, pilot, open, closed) and what may no longer change once it runs."""
