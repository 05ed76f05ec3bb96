"""Building a benchmark: deduplication, LLM checks, annotation review and agreement, BenchBuilder-style
selection and item analysis (`glotbench build ...`). The contamination check is `glotbench.contamination`."""
