"""The data sets: byte-level WikiText-2 (``text``) and the synthetic associative-recall tasks (``recall``).
Each module's docstring says where its data come from and shows a worked example."""
