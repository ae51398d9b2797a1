"""`python -m acp_codegen` runs the CLI."""

from acp_codegen.cli import main

main()
