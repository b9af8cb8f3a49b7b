"""The speed benchmark: ``speed`` (the ``speed`` subcommand: per variant and length, a training
step, forward throughput, one generated token, peak memory) and ``timing`` (the timed jobs,
their interleaving, the memory counter and the op profile)."""
