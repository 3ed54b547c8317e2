"""Choice: the annotator picks one candidate, or one of the study's options (DiP A.4-A.5)."""
