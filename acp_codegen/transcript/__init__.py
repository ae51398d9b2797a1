"""Transcript checking: a recorded ACP JSON-RPC transcript in, every rule of the schema and the
spec pages it breaks out (`acp-codegen check-transcript`, docs/conformance.md).

`read` streams the JSON-lines file, `catalog` names every rule with its source and side,
`schema` loads a revision and validates strictly, `extensions` walks messages along the IR,
`wire` and `handshake` keep the connection's rules, `check` the prompt lifecycle's, `conformance`
runs them all, `report` renders, `command` is the CLI entry point.
"""
