"""Who may do what on which study, and the audit log of what they did (docs/access.md)."""
