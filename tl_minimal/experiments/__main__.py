"""``python -m tl_minimal.experiments ...``: see :mod:`tl_minimal.experiments.cli`."""

from .cli import main

raise SystemExit(main())
