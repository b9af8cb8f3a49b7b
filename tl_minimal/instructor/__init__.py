"""The instructor's side of the classroom exercises (``python -m tl_minimal.instructor``, course.py)."""
