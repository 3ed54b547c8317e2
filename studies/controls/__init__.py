"""Control items: spam copies, generated errors, and the blinding lint."""
