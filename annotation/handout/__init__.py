"""The hand-out engine: who gets which item next, storing answers, exact redundancy, skips, exclusion, the hot path's SQL (docs/assignment.md)."""
