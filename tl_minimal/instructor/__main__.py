"""python -m tl_minimal.instructor release|collect|grade|export COURSE ...: see course.py."""

import sys

from .course import main

sys.exit(main())
