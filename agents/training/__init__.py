"""Training: the typed config, self-play environments, imitation, callbacks and run files."""

from agents.training.core import *  # noqa: F401,F403
