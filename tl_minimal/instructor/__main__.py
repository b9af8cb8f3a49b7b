"""python -m tl_minimal.instructor release|collect|grade|export COURSE ...: see course.py."""

from .course import main

raise SystemExit(main())
