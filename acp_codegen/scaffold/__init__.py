"""Scaffolding: `acp-codegen scaffold agent|client|proxy DIR` writes a project on the bindings.

`acp_codegen.scaffold.project` owns what a scaffolded project is (names, files, checks, writing);
`acp_codegen.scaffold.command` owns the command line. The project files are the Jinja templates
under `templates/scaffold/`.
"""
