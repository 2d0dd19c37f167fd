"""The one rendering rule of shown code: each line's real number, a tab, the line; a marker
for every skipped run that names the lines it stands for."""

from ctxfast.numbered import gap_line, numbered_line, render_numbered


def test_lines_carry_their_real_numbers_and_a_marker_names_each_skipped_run():
    text = render_numbered([(9, "a = 1"), (10, "b = 2"), (14, "def f():"), (15, "    pass")])
    assert text.split("\n") == [
        "9\ta = 1",
        "10\tb = 2",
        "⋮ [3 lines elided: 11-13]",
        "14\tdef f():",
        "15\t    pass",
    ]
    assert render_numbered([]) == ""


def test_a_line_s_own_tabs_and_a_single_elided_line_read_unambiguously():
    # Go indents with tabs: the first tab is the separator, the rest is the line as written.
    assert numbered_line(7, "\treturn nil") == "7\t\treturn nil"
    assert numbered_line(7, "\treturn nil").split("\t", 1) == ["7", "\treturn nil"]
    assert gap_line(4, 4) == "⋮ [1 line elided: 4-4]"
