"""Probing a live peer: run an agent or a client against a scripted ACP peer over real pipes and
check what it sends and answers against the same rules `check-transcript` applies
(`acp-codegen probe agent|client`, docs/conformance.md).
"""
