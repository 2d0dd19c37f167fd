"""The agent-harness toolkit: small tools a coding-agent harness uses beside the window.

Skills, memory, compaction, instruction files, model profiles, sectioned prompts, task packs,
excerpts, intent routing and the rolling turn buffer. None of them reads the index or the
pipeline; they sit below it and are re-exported from the package root (``ctxfast.harness.skills``,
``ctxfast.harness.excerpt``, ...). See ARCHITECTURE.md.
"""
