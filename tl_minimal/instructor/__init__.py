"""The instructor's side of the classroom exercises: nothing here is imported by a student's notebook.

``python -m tl_minimal.instructor release|collect|grade|export COURSE ...`` (course.py,
docs/instructors.md) wraps nbgrader; grading.py, verdict.py, predictions.py and scan.py decide the
grade; blanks.py makes the self-study blanks. The checkers students import are tl_minimal.exercises.
"""
