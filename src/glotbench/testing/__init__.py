"""Test helpers that are real components: an OpenAI-compatible server for loopback tests
(`testing.server`) and hostile endpoints for the scoring service's outbound guards (`testing.hostile`)."""
