"""Shared fixture builders for the construction tests (a small, realistic decision)."""

from __future__ import annotations

from ctxfast.construct import CodeCandidate, ImpactEdge, PlanNode

TARGET = "app.session.SessionManager.load"


def load_body(n: int = 120) -> str:
    lines = ["def load(self, key, timeout=None):", '    """Load a session."""']
    lines += [f"    v{i} = self.cache.get(key)  # filler {i}" for i in range(n)]
    lines += [
        "    if timeout is None:",
        "        timeout = self.default_timeout",
        "    return self.store.load(key, timeout=timeout)",
    ]
    return "\n".join(lines)


def cand(qualname, file, start, text, score=0.5, origin="04", sig=None, prov=None):
    end = start + max(0, text.count("\n"))
    return CodeCandidate(
        qualname,
        "function",
        file,
        start,
        end,
        score,
        sig,
        text,
        prov or f"{origin}: fixture hit {qualname}",
        origin,
    )


def scenario():
    body = load_body()
    cands = [
        cand(TARGET, "app/session.py", 40, body, 0.9),
        cand(
            "app.session.SessionManager.__init__",
            "app/session.py",
            36,
            "def __init__(self, store):\n    self.store = store\n    self.default_timeout = 5",
            0.5,
        ),
        cand(
            "app.views.login",
            "app/views.py",
            10,
            "def login(request):\n    user = auth(request)\n    s = mgr.load(request.key)\n"
            "    return s",
            0.4,
        ),
        cand(
            "app.cache.SessionCache.get",
            "app/cache.py",
            5,
            "def get(self, key, timeout):\n    return self.d[key]",
            0.3,
        ),
        cand("app.misc.render_banner", "app/misc.py", 1, "def render_banner():\n    pass", 0.1),
    ]
    plan = PlanNode(
        "N1",
        "Make SessionManager.load honour the timeout argument",
        TARGET,
        required_validation=("tests.test_session.test_load_timeout",),
        acceptance_criteria=("test_load_timeout passes",),
    )
    impact = [
        ImpactEdge(TARGET, "app.views.login", "CalledBy"),
        ImpactEdge("app.views.login", "app.urls.route", "CalledBy"),
        ImpactEdge("app.urls.route", "tests.test_urls.test_route", "CalledBy"),
    ]
    live = dict(
        errors=["TimeoutError: load timed out"],
        test_outputs=[
            "FAILED tests/test_session.py::test_load_timeout (old run)",
            "FAILED tests/test_session.py::test_load_timeout\nTimeoutError: load timed out",
        ],
        tool_outputs=[
            "$ python -m app.session\n" + "calling SessionManager.load ...\n" * 40,
            "$ grep -n timeout app/session.py\n42: timeout=None",
        ],
    )
    return cands, plan, impact, live
