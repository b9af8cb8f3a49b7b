"""The instructor's side of the classroom exercises: nothing here is imported by a student's notebook.

    course           the command that releases, collects, grades and exports with nbgrader
    nbgrader_config  nbgrader's settings for a course directory (blanking, timeouts, feedback)
    blanks           the self-study blanks and the answer key, made from the solutions
    grading          the grade step: nbgrader runs each notebook, the course decides each task
    verdict          the process that judges the hidden tests' records (never runs student code)
    predictions      the tasks of an exercise, and predictions read from the submitted text
    scan             flags answer cells that reach for the checker, the environment or frames

Run it as ``python -m tl_minimal.instructor release|collect|grade|export COURSE ...``
(docs/instructors.md). The checkers students import live in ``tl_minimal.exercises``.
"""
