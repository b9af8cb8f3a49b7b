"""tl-minimal: the triple-latent model family, one concept per file."""

from .device import get_device
from .registry import VARIANTS, build_model, default_config

__version__ = "0.1.0"

__all__ = ["VARIANTS", "__version__", "build_model", "default_config", "get_device"]
