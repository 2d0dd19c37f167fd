"""Handlers dispatched by class name: a task naming a class recalls and lifts its handlers."""

from __future__ import annotations

from pathlib import Path

import pytest
from recon_fixture import indexed_repo

from ctxfast.recon.graph import Node
from ctxfast.retrieval.dispatch import HANDLER_NAME, family_prefixes

_KINDS = ("Poly", "Matrix", "Integral", "Symbol", "Sum", "Product")


def _printer(cls: str, prefix: str, style: str) -> str:
    body = [f"class {cls}:\n", "    def doprint(self, expr):\n", "        return expr\n"]
    for kind in _KINDS:
        # The other handlers share more words with the task than the one to change: BM25
        # alone ranks them above it.
        words = "" if kind == "Poly" else "  # order of the terms, monomials in order"
        body += [
            "\n",
            f"    def {prefix}{kind}(self, expr):\n",
            f"        terms = [self.doprint(a) for a in expr.args]{words}\n",
            f"        return '{style}'.join(terms)\n",
        ]
    return "".join(body)


FILES = {
    "pkg/__init__.py": "",
    "pkg/latex.py": _printer("LatexPrinter", "_print_", " + "),
    "pkg/pretty.py": _printer("PrettyPrinter", "_print_", " "),
    # Four are not a family: their names are not dispatched on.
    "pkg/forms.py": (
        "class Form:\n"
        + "".join(f"    def clean_{k}(self, v):\n        return v\n\n" for k in _KINDS[:4])
    ),
    "pkg/poly.py": (
        "class Poly:\n"
        '    """A polynomial: terms in order of their degree, printed by every printer."""\n'
        "\n"
        "    def __init__(self, coeffs, gen):\n"
        "        self.coeffs = coeffs\n"
        "        self.gen = gen\n"
    ),
}

TASK = (
    "LaTeX printer does not use the same order of monomials as the pretty printer\n\n"
    "```python\n>>> p = Poly([a, 1, b, 2, c, 3], x)\n>>> latex(p)\n```\n"
    "The latex output lists the terms in another order than pretty and str do."
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory):
    return indexed_repo(Path(tmp_path_factory.mktemp("dispatch")), FILES)


def test_the_family_size_decides_which_names_are_dispatched(repo):
    def ranked(**cfg):
        return [c.qualname for c in repo.retrieve(TASK, config=cfg).candidates]

    # Seven handlers per class are more than any class has: no family, so no dispatch.
    assert ranked(dispatch_family_min=7) == ranked(dispatch=False)
    assert ranked() != ranked(dispatch=False)


def test_handler_names_split_into_prefix_and_class():
    assert HANDLER_NAME.fullmatch("_print_Poly").groups() == ("_print_", "Poly")
    assert HANDLER_NAME.fullmatch("visit_Call").groups() == ("visit_", "Call")
    assert HANDLER_NAME.fullmatch("from_FractionField").groups() == ("from_", "FractionField")
    for name in ("_eval_is_integer", "print_poly", "Poly", "__init__", "_print_"):
        assert HANDLER_NAME.fullmatch(name) is None


def _defs(scope: str, names: list[str], file: str = "m.py") -> list[Node]:
    return [
        Node(f"{scope}.{n}", "function", n, f"{scope}.{n}", file, i, 4, i)
        for i, n in enumerate(names, 1)
    ]


def test_a_family_needs_enough_handlers_in_one_scope():
    printers = _defs("m.LatexPrinter", [f"_print_{k}" for k in _KINDS])
    cleaners = _defs("m.Form", [f"clean_{k}" for k in _KINDS[:4]])
    # The same four cleaners spread over two classes are two families of two.
    spread = _defs("m.A", ["visit_Call", "visit_Name"]) + _defs("m.B", ["visit_If", "visit_For"])
    defs = printers + cleaners + spread
    assert family_prefixes(defs, 5) == {"_print_"}
    assert family_prefixes(defs, 4) == {"_print_", "clean_"}
    assert family_prefixes(defs, 3) == {"_print_", "clean_"}
    assert family_prefixes(defs, 7) == frozenset()
    classes = [d._replace(kind="class") for d in printers]
    assert family_prefixes(classes, 5) == frozenset()


def test_the_named_class_lifts_its_handlers(repo):
    def ranked(**cfg):
        res = repo.retrieve(TASK, config=cfg)
        return [c.symbol for c in res.candidates if c.symbol], res

    on, res = ranked()
    off, _ = ranked(dispatch=False)
    poly = [c for c in res.candidates if c.symbol == "LatexPrinter._print_Poly"]
    assert poly and "dispatch" in poly[0].sources
    assert on.index("LatexPrinter._print_Poly") < on.index("LatexPrinter._print_Matrix")
    assert on.index("LatexPrinter._print_Poly") < off.index("LatexPrinter._print_Poly")
    # Handlers of classes the task does not name are not recalled by this source.
    assert not any("dispatch" in c.sources for c in res.candidates if "Matrix" in c.symbol)


def test_the_bonus_is_what_a_dispatch_candidate_gains(repo):
    def scores(**cfg):
        res = repo.retrieve(TASK, config=cfg)
        return {c.symbol: c.score for c in res.candidates}

    on, off = scores(), scores(dispatch_bonus=0.0)
    gain = on["LatexPrinter._print_Poly"] - off["LatexPrinter._print_Poly"]
    assert gain == pytest.approx(0.5)
    assert on["LatexPrinter._print_Sum"] == pytest.approx(off["LatexPrinter._print_Sum"])
