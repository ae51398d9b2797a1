"""acp-codegen: Python bindings generated from the Agent Client Protocol JSON Schema."""

__version__ = "0.1.0"
