"""A pydantic-ai agent served over ACP by `pydantic-acp`, with pydantic-ai's `TestModel` (no model
service, no network: it answers from its own rules), on this process's stdio.

usage: python pydantic_acp_agent.py   (in the venv of tests/interop/peers/pydantic-acp.txt)
"""

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

if __name__ == "__main__":
    run_acp(Agent(TestModel(), name="pydantic-acp-test-agent"))
