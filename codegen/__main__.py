"""`python -m codegen` runs the CLI."""

from codegen.cli import main

main()
