"""Admin actions on studies (study generators, spam regeneration); StudyAdmin lists STUDY_ACTIONS."""
STUDY_ACTIONS: list = []
