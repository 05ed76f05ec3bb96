"""Test helpers that are real components: an OpenAI-compatible server for loopback tests."""
