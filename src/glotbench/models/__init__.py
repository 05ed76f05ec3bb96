"""Model backends: one module each, chosen by spec string in registry.py."""
