"""LLM judges: their answers imported beside a study's annotators (docs/ai-assistance.md)."""
