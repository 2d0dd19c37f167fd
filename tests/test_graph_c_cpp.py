"""C and C++ in the code graph: definitions, includes as import edges, calls resolved in the
translation unit, through included headers, and to the one project definition of a
function a header declares."""

from __future__ import annotations

import textwrap
from pathlib import Path

from recon_fixture import callees

from ctxfast import Repository


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))


def defs(graph, path: str) -> dict[str, str]:
    return {n.qualname: n.kind for n in graph.nodes_in_file(path) if n.kind != "ref"}


C_TREE = {
    "include/util.h": """
        #ifndef UTIL_H
        #define UTIL_H
        #include <stddef.h>
        /* Adds two ints. */
        int add(int a, int b);
        static inline int twice(int x) { return add(x, x); }
        #define SQUARE(x) ((x) * (x))
        typedef struct { int x, y; } point;
        struct node { struct node *next; };
        extern int counter;
        #endif
    """,
    "src/util.c": """
        #include "../include/util.h"
        int counter = 0;
        /* Sums a and b.
         * Never overflows in tests. */
        int add(int a, int b) { return a + b; }
        static int helper(void) { return 1; }
        int dup(void) { return helper(); }
    """,
    "src/main.c": """
        #include <stdio.h>
        #include "util.h"
        static int helper(void) { return 2; }
        int run(int (*cb)(void)) { return cb(); }
        int main(void) {
            int y = add(1, 2);
            printf("%d", y);
            helper();
            dup();
            return twice(y) + SQUARE(y) + run(helper);
        }
    """,
    "tools/dup.c": "int dup(void) { return 3; }\n",
}


def test_c_definitions_includes_and_calls(tmp_path: Path) -> None:
    write(tmp_path, C_TREE)
    repo = Repository(tmp_path, tmp_path / "idx")
    stats = repo.index()
    assert stats.errors == []
    g = repo.graph
    assert defs(g, "include/util.h") == {
        "include.util_h": "def",
        "include.util_h.twice": "function",
        "include.util_h.SQUARE": "function",
        "include.util_h.point": "class",
        "include.util_h.node": "class",
        "include.util_h.counter": "var",
    }  # the prototype of add is a declaration, not a definition
    assert defs(g, "src/util.c")["src.util_c.add"] == "function"
    sig = g.signature("include.util_h.twice:6")
    assert sig is not None and sig.signature.startswith("static inline int twice")
    add = next(n for n in g.lookup("src.util_c.add") if n.kind == "function")
    assert g.signature(add.id).doc == "Sums a and b. Never overflows in tests."
    # The header declares add; its one definition is in src/util.c. helper is main.c's own
    # static one; dup has two definitions (ambiguous: no edge); printf and cb are external.
    assert callees(g, "src.main_c.main") == {
        "src.util_c.add",
        "src.main_c.helper",
        "include.util_h.twice",
        "include.util_h.SQUARE",
        "src.main_c.run",
    }
    assert callees(g, "include.util_h.twice") == {"src.util_c.add"}
    assert callees(g, "src.util_c.dup") == {"src.util_c.helper"}
    assert callees(g, "src.main_c.run") == set()
    # `#include "util.h"` from src/ finds include/util.h (the one file with that path
    # suffix); `"../include/util.h"` resolves relative to the includer; <stdio.h> is
    # external. Both are import edges, so the header knows who includes it.
    assert g.importing_files("include/util.h") == ["src/main.c", "src/util.c"]


CPP_TREE = {
    "geo/shapes.hpp": """
        #pragma once
        namespace geo {
        class Shape {
          public:
            virtual double area() const;
            double twice() const { return area() * 2; }
        };
        class Square : public Shape {
          public:
            double area() const override;
            double side;
        };
        }
    """,
    "geo/shapes.cpp": """
        #include "shapes.hpp"
        namespace geo {
        static double unit() { return 1.0; }
        double Shape::area() const { return unit(); }
        double Square::area() const { return side * side * unit(); }
        }
    """,
    "app/main.cc": """
        #include "geo/shapes.hpp"
        template <typename T> T first(T a) { return a; }
        int main() {
            geo::Square s;
            double a = s.area();
            double b = s.twice();
            return first<int>(1) + (int)(a + b);
        }
    """,
}


def test_cpp_classes_methods_and_calls(tmp_path: Path) -> None:
    write(tmp_path, CPP_TREE)
    repo = Repository(tmp_path, tmp_path / "idx")
    assert repo.index().errors == []
    g = repo.graph
    assert defs(g, "geo/shapes.hpp") == {
        "geo.shapes_hpp": "def",
        "geo.shapes_hpp.Shape": "class",
        "geo.shapes_hpp.Shape.twice": "function",
        "geo.shapes_hpp.Square": "class",
    }
    assert defs(g, "geo/shapes.cpp") == {
        "geo.shapes_cpp": "def",
        "geo.shapes_cpp.unit": "function",
        "geo.shapes_cpp.Shape.area": "function",
        "geo.shapes_cpp.Square.area": "function",
    }
    # A bare call in the class body reaches the method the source file defines.
    assert callees(g, "geo.shapes_hpp.Shape.twice") == {"geo.shapes_cpp.Shape.area"}
    assert callees(g, "geo.shapes_cpp.Square.area") == {"geo.shapes_cpp.unit"}
    # `geo::Square s; s.area()` and an inherited method through the base class.
    assert callees(g, "app.main_cc.main") == {
        "geo.shapes_cpp.Square.area",
        "geo.shapes_hpp.Shape.twice",
        "app.main_cc.first",
    }
    assert g.importing_files("geo/shapes.hpp") == ["app/main.cc", "geo/shapes.cpp"]


def test_deeply_nested_c_does_not_overflow(tmp_path: Path) -> None:
    depth = 20_000
    body = "x = " + "(" * depth + "f()" + ")" * depth + ";"
    write(
        tmp_path,
        {"deep.c": f"int f(void) {{ return 1; }}\nint g(void) {{ int x; {body} return x; }}\n"},
    )
    repo = Repository(tmp_path, tmp_path / "idx")
    repo.index()
    assert "deep_c.f" in callees(repo.graph, "deep_c.g")
