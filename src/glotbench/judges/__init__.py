"""LLM judges: prompts, strict verdict parsing and the arithmetic of judged scores."""
