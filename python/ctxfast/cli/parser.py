"""The argument parser every ``ctxfast`` (sub)command is built with, their examples, and the
task argument the task commands share."""

from __future__ import annotations

import argparse
from typing import Any

from ctxfast.cli.common import read_input

#: One example per subcommand (``prog`` without the leading ``ctxfast``), shown by --help.
EXAMPLES = {
    "tokens": "ctxfast tokens README.md --encoding o200k_base",
    "index": "ctxfast index .",
    "index-many": "ctxfast index-many trees.txt --workers 2 --engine local",
    "bench": "ctxfast bench tokens --repeat 5",
    "manifest": "ctxfast manifest . --json",
    "mcp": "ctxfast mcp /path/to/repo",
    "compose": 'ctxfast compose . "fix the off-by-one in next_page" --ceiling 8000',
    "retrieve": 'ctxfast retrieve . "KeyError in parse_args" --error traceback.txt',
    "map": 'ctxfast map . --query "database connections" --tokens 512',
    "graph": "ctxfast graph . pkg.db.connect",
    "status": "ctxfast status .",
    "eval": "ctxfast eval retrieval bench.jsonl --trees trees/ --limit 20",
    "eval retrieval": "ctxfast eval retrieval bench.jsonl --trees trees/ --limit 20",
    "eval recon": "ctxfast eval recon bench.jsonl --trees trees/",
    "eval construct": "ctxfast eval construct bench.jsonl --trees trees/ --limit 20",
    "eval all": "ctxfast eval all bench.jsonl --pypi-sources sources.json --out results.json",
    "eval fidelity": "ctxfast eval fidelity path/to/repo --sample 200",
    "eval compare": "ctxfast eval compare current.json candidate.json",
    "eval mine": "ctxfast eval mine --mirror-root mirrors/ --dev-set --out langs_dev.jsonl",
    "eval train-ranker": "ctxfast eval train-ranker --corpus corpus/*.jsonl "
    "--mirror-root mirrors/ --work corpus/work --out ranker_model.json",
}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that shows each option's default (when it has a meaningful one)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        shown = default not in (None, False, argparse.SUPPRESS) and default != []
        if shown and "%(default)" not in text and (action.option_strings or action.nargs == "?"):
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """Every ctxfast (sub)parser: defaults in --help and the command's example below it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        example = EXAMPLES.get(self.prog.removeprefix("ctxfast").strip())
        if example and self.epilog is None:
            self.epilog = f"example:\n  {example}"


TASK_HELP = (
    "the task text (issue, instruction); - reads it from stdin, @PATH from a file "
    "(@@ for a task that starts with @)"
)


def add_task_argument(p: argparse.ArgumentParser) -> None:
    """The task positional of ``compose`` and ``retrieve`` (read with :func:`read_task`)."""
    p.add_argument("task", help=TASK_HELP)


def read_task(value: str) -> str:
    """The task a task argument names: ``-`` stdin, ``@PATH`` that file, ``@@…`` the literal
    ``@…``, anything else itself. An issue is too long and too full of quotes for one shell
    argument; the reading (size cap, regular files only) is ``read_input``'s."""
    if value == "-":
        return read_input("-")
    if value.startswith("@@"):
        return value[1:]
    if value.startswith("@"):
        return read_input(value[1:])
    return value
