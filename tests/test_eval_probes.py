"""Model-backed probes (bury, oracle diagnostic) end to end against a real HTTP server on
127.0.0.1 that plays a deterministic model: it names the first ``.py`` path it sees in the
context part of the prompt. That model is exactly "position-sensitive", so the expected
probe arithmetic can be computed by hand from the fixture below."""

import json
import re
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ctxfast.cli import main
from ctxfast.eval.instances import Region
from ctxfast.eval.probes import (
    Outcome,
    bury,
    cell,
    is_gold,
    oracle_items,
    parse_answer,
    render_items,
    summarise_bury,
    summarise_oracle,
)
from ctxfast.eval.systems import Candidate

FIX = Path(__file__).parent / "fixtures" / "eval"
PATH = re.compile(r"[\w./-]+\.py")

# gamma-1: the issue's words concentrate in the gold file, BM25 ranks it first.
# gamma-2: the issue's words concentrate in a.py; the gold file c.py mentions them once.
WIDGET = (
    "class Widget:\n"
    "    def __init__(self, width):\n"
    "        self.width = width\n"
    "\n"
    "    def resize(self, width):\n"
    "        # resize the widget; a negative width crashes resize\n"
    "        self.width = width\n"
    "        return self.width\n"
)
FILES = {
    "gamma/__init__.py": "",
    "gamma/widget.py": WIDGET,
    "gamma/a.py": "def palette_shade(colour):\n"
    "    # palette colour lookup, shade of a palette colour\n"
    "    return {'palette': colour, 'shade': colour}\n"
    "WIDGET_NOTE = 'widget'\n",
    "gamma/b.py": "def helper():\n    return 'widget width'\n",
    "gamma/c.py": "def lookup(key):\n    return key  # palette\n\n\ndef other():\n    return 1\n",
    "gamma/d.py": "def misc():\n    return 'widget palette'\n",
}
BENCH = [
    {
        "instance_id": "gamma__gamma-1",
        "repo": "gamma/gamma",
        "version": "1",
        "problem_statement": "Widget.resize crashes on a negative width: resize widget width",
        "gold_files": ["gamma/widget.py"],
        "gold_hunks": [{"file": "gamma/widget.py", "start": 7, "end": 7}],
        "gold_symbols": [{"file": "gamma/widget.py", "qualname": "Widget.resize"}],
    },
    {
        "instance_id": "gamma__gamma-2",
        "repo": "gamma/gamma",
        "version": "1",
        "problem_statement": "palette colour lookup returns the wrong shade of a palette colour",
        "gold_files": ["gamma/c.py"],
        "gold_hunks": [{"file": "gamma/c.py", "start": 2, "end": 2}],
        "gold_symbols": [{"file": "gamma/c.py", "qualname": "lookup"}],
    },
]


class FakeModel(BaseHTTPRequestHandler):
    """``/chat/completions``: model ``first-file`` answers the first path in the context;
    ``slow-resize``/``garbage-resize`` do the same except on gamma-1's issue, where they
    answer after 3 s or with text that is not JSON."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)  # type: ignore[attr-defined]
        issue, _, context = body["messages"][1]["content"].partition("\n\ncontext:\n")
        model = body["model"]
        found = PATH.search(context)
        content = json.dumps({"files": [found.group(0)] if found else []})
        if model != "first-file" and "resize" in issue:
            if model.startswith("slow"):
                time.sleep(3)
            else:
                content = "the file is widget.py"
        payload = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def model_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    server.daemon_threads = True
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.requests  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


@pytest.fixture
def gamma(tmp_path):
    trees = tmp_path / "trees"
    for rec in BENCH:
        for rel, text in FILES.items():
            p = trees / rec["instance_id"] / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
    bench = tmp_path / "gamma.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in BENCH))
    return bench, trees


def _run(tmp_path, bench, trees, url, model, *extra):
    out = tmp_path / f"results-{model}.json"
    rc = main(
        [
            "eval",
            "all",
            str(bench),
            "--trees",
            str(trees),
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
            "--no-progress",
            "--model-url",
            url,
            "--model",
            model,
            "--model-timeout",
            "0.5",
            *extra,
            *(() if "--system" in extra else ("--system", "bm25")),
        ]
    )
    assert rc == 0
    return json.loads(out.read_text())


def test_probe_arithmetic_against_a_position_sensitive_model(tmp_path, gamma, model_url, capsys):
    bench, trees = gamma
    url, requests = model_url
    res = _run(tmp_path, bench, trees, url, "first-file")
    printed = capsys.readouterr().out
    assert "success retrieved 0.500 oracle 1.000; retrieval_failure 1" in printed
    assert "edge 0.500 buried 0.000 — LOAD-BEARING" in printed
    tops = {r["instance_id"]: r["bm25"]["top_files"] for r in res["per_instance"]}
    # The premises the hand arithmetic rests on.
    assert tops["gamma__gamma-1"][0] == "gamma/widget.py"
    assert tops["gamma__gamma-2"][0] == "gamma/a.py"
    assert "gamma/c.py" in tops["gamma__gamma-2"]

    probes = res["suite"]["probes"]
    orc = probes["oracle_diagnostic"]
    assert orc["status"] == "ran" and orc["model"] == "first-file" and orc["model_url"] == url
    # gamma-1: both contexts start with widget.py → not the bottleneck.
    # gamma-2: retrieved starts with a.py (fail), the oracle holds only c.py (succeed).
    assert orc["cells"] == {
        "retrieval_failure": 1,
        "reasoning_failure": 0,
        "not_bottleneck": 1,
        "curation_beats_gold": 0,
    }
    assert orc["success_rate"] == {"retrieved": 0.5, "oracle": 1.0}
    assert orc["answered"] == 2 and orc["errors"] == 0
    by_id = {r["instance_id"]: r for r in orc["per_instance"]}
    assert by_id["gamma__gamma-2"]["retrieved"]["files"] == ["gamma/a.py"]
    assert by_id["gamma__gamma-2"]["oracle"]["files"] == ["gamma/c.py"]

    bur = probes["lost_in_the_middle_bury"]
    assert bur["status"] == "ran" and bur["window_system"] == "bm25"
    # gamma-1: edge order opens with widget.py (success); buried, another file opens (fail).
    # gamma-2: a.py opens both variants (fail, fail).
    assert bur["success_rate"] == {"edge": 0.5, "buried": 0.0}
    assert bur["delta"] == 0.5 and bur["degrades"] is True
    assert bur["verdict"].startswith("LOAD-BEARING")
    assert {r["instance_id"]: r["critical"] for r in bur["per_instance"]} == {
        "gamma__gamma-1": 1,
        "gamma__gamma-2": 1,
    }

    # 2 instances x (retrieved, oracle, edge, buried), one call each, never retried.
    assert len(requests) == 8
    assert {r["model"] for r in requests} == {"first-file"}
    assert all(r["temperature"] == 0.0 for r in requests)
    assert {r["response_format"]["json_schema"]["name"] for r in requests} == {"probe_answer"}


@pytest.mark.parametrize("model", ["slow-resize", "garbage-resize"])
def test_bad_replies_are_recorded_not_fatal(tmp_path, gamma, model_url, model):
    bench, trees = gamma
    url, requests = model_url
    res = _run(tmp_path, bench, trees, url, model)
    orc = res["suite"]["probes"]["oracle_diagnostic"]
    bur = res["suite"]["probes"]["lost_in_the_middle_bury"]
    # gamma-1 (every call bad) is recorded with its reason and excluded from the rates.
    bad = {r["instance_id"]: r for r in orc["per_instance"]}["gamma__gamma-1"]
    assert bad["cell"] is None and bad["retrieved"]["ok"] is None
    expect = "RankerError" if model.startswith("slow") else "JSONDecodeError"
    assert expect in bad["retrieved"]["error"] and expect in bad["oracle"]["error"]
    assert orc["errors"] == 1 and orc["answered"] == 1
    assert orc["cells"]["retrieval_failure"] == 1 and orc["success_rate"]["retrieved"] == 0.0
    # Only gamma-2 is paired for bury: a.py opens both variants, nothing degrades.
    assert bur["errors"] == 1 and bur["answered"] == 1
    assert bur["success_rate"] == {"edge": 0.0, "buried": 0.0}
    assert bur["degrades"] is False and bur["verdict"].startswith("NOT LOAD-BEARING")
    assert len(requests) == 8  # no retry after a failure


def test_unreachable_endpoint_fails_soft(tmp_path, gamma):
    bench, trees = gamma
    # A port that was just free: connection refused on every call.
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    port = server.server_address[1]
    server.server_close()
    res = _run(tmp_path, bench, trees, f"http://127.0.0.1:{port}/v1", "first-file")
    for key in ("oracle_diagnostic", "lost_in_the_middle_bury"):
        probe = res["suite"]["probes"][key]
        assert probe["status"] == "failed" and probe["answered"] == 0 and probe["errors"] == 2
        assert probe["success_rate"] == dict.fromkeys(probe["success_rate"])


def test_fixture_bench_all_with_report_and_probes(tmp_path, model_url):
    """``eval all --report`` end to end on the shipped fixture benchmark, ctxfast's own
    systems, with the probes against the loopback model."""
    pytest.importorskip("matplotlib")
    url, requests = model_url
    trees = tmp_path / "trees"
    bench = FIX / "bench.jsonl"
    for line in bench.read_text().splitlines():
        rec = json.loads(line)
        shutil.copytree(FIX / "repos" / rec["repo"].split("/")[1], trees / rec["instance_id"])
    res = _run(
        tmp_path,
        bench,
        trees,
        url,
        "first-file",
        "--system",
        "ctxfast",
        "--report",
        str(tmp_path / "rep"),
    )
    assert res["instances"] == 3 and res["skipped"] == []
    probes = res["suite"]["probes"]
    orc = probes["oracle_diagnostic"]
    assert orc["status"] == "ran" and orc["retrieval_system"] == "ctxfast"
    assert orc["answered"] == 3 and sum(orc["cells"].values()) == 3
    bur = probes["lost_in_the_middle_bury"]
    assert bur["window_system"] == "ctxfast_construct"
    assert bur["instances"] + len(bur["skipped"]) == 3
    assert len(requests) == 2 * orc["instances"] + 2 * bur["instances"]
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "file Acc@5" in html
    assert "<h3>oracle_diagnostic</h3>" in html and "&quot;not_bottleneck&quot;" in html
    assert (tmp_path / "rep" / "recall_at_k.png").stat().st_size > 0


def test_skipped_without_endpoint(tmp_path, gamma):
    bench, trees = gamma
    out = tmp_path / "r.json"
    args = ["eval", "retrieval", str(bench), "--trees", str(trees), "--out", str(out)]
    assert main([*args, "--cache", str(tmp_path / "c"), "--no-progress", "--system", "bm25"]) == 0
    probes = json.loads(out.read_text())["suite"]["probes"]
    for key in ("oracle_diagnostic", "lost_in_the_middle_bury"):
        assert probes[key] == {
            "status": "skipped",
            "reason": "needs --model-url and --model (an OpenAI-compatible endpoint)",
        }


# --------------------------------------------------------------------------- pure parts


def test_parse_answer_and_gold_matching():
    assert parse_answer('{"files": ["a.py", " b.py "]}') == ["a.py", "b.py"]
    assert parse_answer('```json\n{"files": []}\n```') == []
    for bad in ('{"files": "a.py"}', '{"files": [1]}', '{"files": [], "x": 1}', "[]", "a.py"):
        with pytest.raises(ValueError):
            parse_answer(bad)
    assert is_gold("./pkg/mod.py", ["pkg/mod.py"])
    assert is_gold("repo/pkg/mod.py", ["pkg/mod.py"])
    assert not is_gold("xpkg/mod.py", ["pkg/mod.py"])
    assert not is_gold("pkg/mod.pyc", ["pkg/mod.py"])


def test_cells_cover_the_four_verdicts():
    ok, ko, err = Outcome(True), Outcome(False), Outcome(None, (), "boom")
    assert cell(ko, ok) == "retrieval_failure"
    assert cell(ko, ko) == "reasoning_failure"
    assert cell(ok, ok) == "not_bottleneck"
    assert cell(ok, ko) == "curation_beats_gold"
    assert cell(err, ok) is None and cell(ok, err) is None
    rows = [
        {"retrieved": r.as_dict(), "oracle": o.as_dict(), "cell": cell(r, o)}
        for r, o in [(ok, ko), (ko, ok), (ko, ok), (err, ok)]
    ]
    s = summarise_oracle(rows)
    assert s["answered"] == 3 and s["errors"] == 1
    assert s["cells"]["retrieval_failure"] == 2 and s["cells"]["curation_beats_gold"] == 1
    assert s["success_rate"] == {"retrieved": pytest.approx(1 / 3), "oracle": pytest.approx(2 / 3)}
    # Burying that *improves* the result is also "not load-bearing".
    b = summarise_bury(
        [
            {"edge": ko.as_dict(), "buried": ok.as_dict()},
            {"edge": ok.as_dict(), "buried": ok.as_dict()},
        ]
    )
    assert b["delta"] == -0.5 and b["degrades"] is False
    assert summarise_bury([])["verdict"] is None


def test_bury_and_oracle_slices(tmp_path):
    c = [Candidate("f.py", None, i * 10 + 1, i * 10 + 10) for i in range(5)]
    gold = [Region("f.py", 1, 2), Region("f.py", 45, 45)]
    # Critical items 0 and 4 leave 3 others; they go, in order, after the first of them.
    assert bury(c, gold) == [c[1], c[0], c[4], c[2], c[3]]
    assert bury(c[:3], [Region("f.py", 1, 1)]) == [c[1], c[0], c[2]]
    assert bury(c[:2], [Region("f.py", 1, 1)]) is None  # one other item: no middle
    assert bury(c, [Region("g.py", 1, 1)]) is None  # nothing critical
    (tmp_path / "f.py").write_text("".join(f"l{i}\n" for i in range(1, 31)))
    slices = oracle_items(tmp_path, [Region("f.py", 3, 3), Region("f.py", 12, 12)], margin=4)
    assert [(s.start, s.end) for s in slices] == [(1, 16)]  # 1..7 and 8..16 merge
    slices = oracle_items(tmp_path, [Region("f.py", 28, 29)], margin=5)
    assert [(s.start, s.end) for s in slices] == [(23, 30)]  # clipped at the file's end
    text = render_items(tmp_path, [Candidate("f.py", None, 2, 5, kept_lines=(2, 3, 5))])
    assert text == "### f.py:2-5\nl2\nl3\n⋮\nl5\n"
