"""Short gaps between the lines a window shows are closed from the file while there is room."""

from construct_fixtures import cand

from ctxfast.construct import ConstructConfig, PlanNode, construct

TARGET = "app.session.load"


def _source_lines() -> list[str]:
    lines = [f"# filler line {n}" for n in range(1, 61)]
    lines[9:20] = ["def load(session):"] + [f"    step_{i} = session.step({i})" for i in range(10)]
    lines[20:25] = [f"LIMIT_{n} = {n}  # between the two functions" for n in range(21, 26)]
    lines[25:35] = ["def save(session):"] + [f"    mark_{i} = session.mark({i})" for i in range(9)]
    return lines


def _window(source, **config):
    lines = _source_lines()
    cands = [
        cand(TARGET, "app/session.py", 10, "\n".join(lines[9:20]), 0.9),
        cand("app.session.save", "app/session.py", 26, "\n".join(lines[25:35]), 0.8),
    ]
    plan = PlanNode("N", "Fix session load", TARGET, acceptance_criteria=("load works",))
    files = {"app/session.py": lines}
    return construct(
        "Fix session load and save steps",
        candidates=cands,
        plan=plan,
        impact=[],
        config=ConstructConfig(**config),
        source=(lambda path: files.get(path, [])) if source else None,
    )


def _closed(ctx):
    return [e for e in ctx.admission_log if e.decision == "gap_closed"]


def test_a_short_gap_between_shown_functions_is_filled_from_the_file():
    ctx = _window(source=True)
    text = ctx.render()
    assert "LIMIT_23 = 23" in text
    [entry] = _closed(ctx)
    assert entry.subject == "app/session.py" and "lines 21-25" in entry.driver
    shown = {n for e in ctx.window if e.file == "app/session.py" for n in e.shown_lines()}
    assert set(range(10, 36)) <= shown


def test_without_the_source_or_over_the_gap_limit_the_gap_stays():
    for ctx in (_window(source=False), _window(source=True, gap_lines=4)):
        assert "LIMIT_23" not in ctx.render()
        shown = {n for e in ctx.window if e.file == "app/session.py" for n in e.shown_lines()}
        assert set(range(10, 36)) - shown == set(range(21, 26))
        assert not _closed(ctx)


def test_a_gap_is_closed_only_within_the_target():
    """The gap costs its lines less what they replace: with less room than that above the
    gate's own window it stays open, and the window stays within its target."""
    frugal = _window(source=True, target_tokens=0)
    assert not _closed(frugal)
    for room, closes in ((10, False), (400, True)):
        ctx = _window(source=True, target_tokens=frugal.token_count + room)
        assert bool(_closed(ctx)) is closes
        assert ctx.token_count <= frugal.token_count + room
