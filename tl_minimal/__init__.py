"""tl-minimal: the triple-latent model family, one concept per file."""

__version__ = "0.1.0"
