"""Quality control on the annotator's side (reads): spam and control checks, completion codes."""
