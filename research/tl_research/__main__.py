"""``python -m tl_research ...``: see :mod:`tl_research.cli`."""

from .cli import main

raise SystemExit(main())
