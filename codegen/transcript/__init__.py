"""Transcript checking: a recorded ACP JSON-RPC transcript in, violations of the prompt
lifecycle's MUST / MUST NOT rules out (`acp-codegen check-transcript`, docs/transcript.md).

`read` parses the JSON-lines file, `rules` names the rules, `check` runs them over the
messages, `report` renders the findings and `command` is the CLI entry point.
"""
