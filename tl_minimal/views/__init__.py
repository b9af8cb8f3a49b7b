"""Pictures and widgets. Views read tensors and a model's recorded internals; they never train
a model and never re-implement the math. ``plots`` (gates, memories, tokens, curves),
``plots_recall`` (slots, convolutions, retrieval) and ``widgets`` (the interactive controls)."""
