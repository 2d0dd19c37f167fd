"""Transcript elision, checkpoint compaction with digest and hysteresis, and the accept gate."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxfast import compact
from ctxfast.errors import ConfigError
from ctxfast.harness.compact import (
    COMPACT_AT_PERCENT,
    ELIDED,
    HYSTERESIS_PERCENT,
    CompactionState,
    accept_compaction,
    build_digest,
    compact_checkpoint,
    elide_transcript,
    safe_keep_start,
    transcript_tokens,
    validate_transcript,
)


def call(cid, name, **args):
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def tool(cid, content):
    return {"role": "tool", "tool_call_id": cid, "content": content}


@st.composite
def transcripts(draw):
    msgs = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": "You are a coding agent."})
    n = 0
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "calls"]))
        size = draw(st.integers(0, 60))
        if kind == "user":
            msgs.append({"role": "user", "content": "please " * size})
        elif kind == "assistant":
            msgs.append({"role": "assistant", "content": "ok " * size})
        else:
            k = draw(st.integers(1, 3))
            ids = [f"c{n + i}" for i in range(k)]
            n += k
            msgs.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call(i, "read_file", path=f"f{i}.py") for i in ids],
                }
            )
            for i in draw(st.permutations(ids)):
                msgs.append(tool(i, "data " * draw(st.integers(0, 200))))
    return msgs


def test_validator_catches_illegal_transcripts():
    ok = [{"role": "assistant", "tool_calls": [call("a", "x")]}, tool("a", "r")]
    assert validate_transcript(ok) == []
    assert validate_transcript([tool("a", "r")])  # orphan
    assert validate_transcript([ok[0], {"role": "user", "content": "hi"}])  # unanswered
    assert validate_transcript([ok[0], tool("b", "r")])  # wrong id
    assert validate_transcript([{"role": "user", "content": "x"}, {"role": "system"}])


@settings(max_examples=200, deadline=None)
@given(transcripts(), st.integers(50, 5000), st.integers(0, 6))
def test_elision_output_is_always_legal_and_keeps_structure(msgs, limit, keep):
    assert validate_transcript(msgs) == []
    out = elide_transcript(msgs, limit, keep_last=keep)
    assert validate_transcript(out) == []
    assert [m["role"] for m in out] == [m["role"] for m in msgs]
    assert [m.get("tool_call_id") for m in out] == [m.get("tool_call_id") for m in msgs]
    assert [m.get("tool_calls") for m in out] == [m.get("tool_calls") for m in msgs]
    for a, b in zip(msgs, out, strict=True):
        if a["role"] != "tool":
            assert a == b  # system, user and assistant turns are untouched


@settings(max_examples=150, deadline=None)
@given(transcripts(), st.integers(200, 5000))
def test_checkpoint_output_is_always_legal(msgs, limit):
    res = compact_checkpoint(msgs, limit)
    assert validate_transcript(res.messages) == []
    if res.messages:
        assert res.messages[0]["role"] != "tool"


def _session(n_tools, size=300):
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]
    for i in range(n_tools):
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"c{i}", "read_file", path=f"f{i}.py")],
            }
        )
        msgs.append(tool(f"c{i}", f"content {i} " * size))
    return msgs


def test_elision_threshold_and_keep_window():
    msgs = _session(8)
    total = transcript_tokens(msgs)
    assert elide_transcript(msgs, total * 2) == msgs  # under 80%: unchanged
    assert elide_transcript(msgs, total * 2, compact_at_percent=40) != msgs
    out = elide_transcript(msgs, total)
    tools = [m for m in out if m["role"] == "tool"]
    assert [t["content"] == ELIDED for t in tools] == [True] * 3 + [False] * 5
    assert msgs[3]["content"] != ELIDED  # input not mutated


def test_elided_prefix_is_byte_identical_between_iterations():
    msgs = _session(8)
    limit = transcript_tokens(msgs) // 2
    first = elide_transcript(msgs, limit)
    # Next iteration: an assistant turn is appended (the keep window does not slide).
    grown = [*msgs, {"role": "assistant", "content": "thinking"}]
    second = elide_transcript(grown, limit)
    enc = lambda ms: json.dumps(ms, sort_keys=True).encode()  # noqa: E731
    assert enc(second[: len(first)]) == enc(first)
    # A new tool result slides the window by one: everything before the newly elided one stays.
    slid = elide_transcript(_session(9), limit)
    assert enc(slid[:6]) == enc(first[:6])


def test_safe_keep_start_walks_back_over_tool_results():
    msgs = _session(2)
    assert safe_keep_start(msgs, 3) == 2  # index 3 is a tool result of the call at 2
    assert safe_keep_start(msgs, 4) == 4


def test_checkpoint_digest_order_and_content():
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix the failing test"},
        {
            "role": "assistant",
            "content": "Plan: read the module first.",
            "tool_calls": [call("a", "read_file", path="src/pager.py")],
        },
        tool("a", "x = 1\n" * 400),
        {
            "role": "assistant",
            "content": "Decision: change the loop bound.",
            "tool_calls": [
                call("b", "edit_file", path="src/pager.py"),
                call("c", "bash", command="pytest -q"),
            ],
        },
        tool("b", "ok"),
        tool("c", "1 failed\nexit code: 1"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("d", "read_file", path="nope.py")],
        },
        tool("d", "Error: no such file nope.py"),
        *_session(6, size=200)[2:],
    ]
    # Long narrative turns that elision cannot touch force the digest path.
    msgs += [{"role": "assistant", "content": f"analysis {i} " * 300} for i in range(4)]
    # Elision alone leaves the transcript at 77% of the window: above the 75% target.
    limit = int(transcript_tokens(elide_transcript(msgs, 1)) / 0.77)
    assert transcript_tokens(msgs) > 0.8 * limit
    res = compact_checkpoint(msgs, limit)
    assert res.action == "digest" and res.dropped > 0
    assert validate_transcript(res.messages) == []
    assert (
        res.messages[0]["content"] == "sys" and res.messages[1]["content"] == "fix the failing test"
    )
    note = res.messages[2]["content"]
    heads = [
        note.index(h)
        for h in (
            "## Files read",
            "## Files edited",
            "## Commands",
            "## Failed calls",
            "## Decisions",
        )
    ]
    assert heads == sorted(heads)
    assert "- src/pager.py" in note.split("## Files edited")[0]
    assert "- src/pager.py" in note.split("## Files edited")[1].split("## Commands")[0]
    assert "`pytest -q` → exit 1" in note
    assert "no such file nope.py" in note
    assert "Decision: change the loop bound." in note and "Plan: read the module first." in note
    assert res.after_tokens <= limit * (COMPACT_AT_PERCENT - HYSTERESIS_PERCENT) / 100


def test_checkpoint_prefers_elision_and_noop_under_threshold():
    msgs = _session(10, size=100)
    total = transcript_tokens(msgs)
    assert compact_checkpoint(msgs, total * 2).action == "none"
    res = compact_checkpoint(msgs, int(total / 0.85))
    assert res.action == "elided" and res.digest is None
    # A wider hysteresis lowers the target (80% − 70%) below what elision alone reaches.
    deeper = compact_checkpoint(msgs, int(total / 0.85), hysteresis_percent=70)
    assert deeper.action == "digest" and deeper.after_tokens <= int(total / 0.85) * 0.1


def test_hysteresis_pauses_instead_of_thrashing():
    # One huge user turn that no compaction can remove.
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "word " * 2000}]
    msgs += _session(3, size=10)[2:]
    limit = int(transcript_tokens(msgs) / 0.9)
    state = CompactionState()
    first = compact_checkpoint(msgs, limit, state=state)
    assert first.paused and state.paused
    second = compact_checkpoint(msgs, limit, state=state)
    assert second.action == "paused" and second.messages == msgs
    # Back under the target, the pause lifts.
    compact_checkpoint(msgs[:2], limit * 10, state=state)
    assert not state.paused


def test_digest_of_nothing_is_empty():
    d = build_digest([])
    assert (d.files_read, d.files_edited, d.commands, d.failed_calls, d.decisions) == (
        [],
        [],
        [],
        [],
        [],
    )
    assert "- (none)" in d.render(0)


def test_bad_parameters():
    with pytest.raises(ConfigError):
        elide_transcript([], 0)
    with pytest.raises(ConfigError):
        elide_transcript([], 100, keep_last=-1)
    with pytest.raises(ConfigError):
        compact_checkpoint([], 100, hysteresis_percent=90)


DOC = "\n".join(
    f"- Module src/pkg/mod{i}.py handles feature {i}; see tests/test_mod{i}.py. " + "detail " * 20
    for i in range(20)
)


def test_accept_good_compaction():
    cand = "\n".join(f"- src/pkg/mod{i}.py: feature {i} (tests/test_mod{i}.py)" for i in range(20))
    res = accept_compaction(DOC, cand)
    assert res.accepted and res.text == cand and res.path_retention == 1.0


@pytest.mark.parametrize(
    "cand, reason",
    [
        ("Sure! Here is the compressed context:", "preamble"),
        ("Here's the summary:\n" + DOC[: len(DOC) // 2], "preamble"),
        ("- three\n- short\n- bullets", "length ratio"),
        (DOC + DOC, "length ratio"),
        ("\n".join(f"- feature {i} handled somewhere " * 3 for i in range(20)), "path tokens"),
        ("   ", "empty"),
    ],
)
def test_reject_bad_compactions(cand, reason):
    res = accept_compaction(DOC, cand)
    assert not res.accepted and res.text == DOC
    assert any(reason in r for r in res.reasons), res.reasons


def test_module_exposes_documented_names():
    for name in ("elide_transcript", "compact_checkpoint", "accept_compaction"):
        assert callable(getattr(compact, name))
