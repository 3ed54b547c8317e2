"""Study generators: new studies built from the items of another study or of a file."""
