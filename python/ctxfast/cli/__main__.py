"""``python -m ctxfast.cli``: the same command line as the ``ctxfast`` script."""

from ctxfast.cli import main

raise SystemExit(main())
