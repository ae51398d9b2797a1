"""Interop tests against the reference TypeScript SDK (a package, so that its conftest does not shadow tests/conftest.py)."""
