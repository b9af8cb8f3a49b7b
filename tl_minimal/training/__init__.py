"""Running the models: the device choice (``device``), the smoke switch and data directory
(``config``), the one training loop (``train``), the paper's protocols and the recipe
(``protocols``, ``recipes``) and the metrics (``evaluate``)."""
