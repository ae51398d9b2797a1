"""acp-codegen: Python bindings generated from the Agent Client Protocol JSON Schema."""

__version__ = "0.2.0"
