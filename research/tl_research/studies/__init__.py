"""The research studies beside the paper's tables: where recall breaks and why.

``breaks``           the tasks overwrite, alias and distance, and the diagnoses of their read
``induction``        the task induction: held-out text read twice (does the model copy?)
``diagnose_recall``  the gated hybrid's memory read at the answer, measured (rank, weight, gate)
``recall_study``     train once, evaluate at several steps, probe the memory; the diagnoses at
                     initialization (the ``study`` subcommands of ``python -m tl_research``)
``reference_code``   the paper's own recall script, run seed by seed from a checkout (its win rate)
``calibrated``       the calibrated recall protocol's lr sweep gathered into one file per task
"""
