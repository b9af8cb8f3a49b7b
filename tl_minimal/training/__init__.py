"""Running the models: the device choice (``device``), the smoke switch and data directory
(``config``), the one training loop (``train``), the metrics (``evaluate``) and several-process
training (``distributed``)."""
