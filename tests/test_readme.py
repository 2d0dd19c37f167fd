"""The README's agent-loop snippet is executed, so it cannot rot."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_agent_loop_snippet_runs():
    text = README.read_text(encoding="utf-8")
    section = text.split("## Wire ctxfast into your agent loop", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block, "the README section has no python block"
    code = block.group(1)
    assert 15 <= len(code.strip().splitlines()) <= 25
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    assert namespace["request"][1]["content"] == namespace["prompt"].text
