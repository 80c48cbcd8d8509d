"""The masked categorical of the training policies: sb3-contrib's, value for value, for less.

``MaskedCategorical`` is the ``action_dist`` of ``MaskedMlpPolicy``, the policy of every training
run (``agents.training.model``: MaskablePPO's ``MlpPolicy`` with this distribution), and of the
stakes and towers policies built on it (``agents.policies.stakes_torch``, ``towers_torch``).

Why: sb3-contrib's ``MaskableCategoricalDistribution`` builds a torch ``Categorical`` three times
for one forward pass (for the raw logits, again when its constructor clears the masks, again when
the masks are applied), each time normalizing with a ``logsumexp`` and checking its arguments; in
the default config's run that was more than a tenth of the rollouts' time. This class does the same
arithmetic in the same order, and only what is read: the logits normalized (``l - logsumexp(l)``,
what sb3-contrib keeps as the unmasked logits), the illegal ones set to ``-1e8`` and normalized
again; the probabilities their softmax, a sample torch's ``multinomial`` on them (so the same
random state draws the same actions), the log-probability a gather, the entropy sb3-contrib's
masked sum.

Contract: every tensor it gives, gradients included, is bit for bit the one sb3-contrib gives
(``tests/test_masked_torch.py``), so a training run with it is the run without it, weight for
weight. It drops torch's argument checks but the one a run can fail: NaN logits (a diverged
network) raise ``ValueError``. ``distribution`` is the object itself (``logits``, ``probs``,
``sample``, ``log_prob``, ``entropy``), for code that reads ``get_distribution(obs).distribution``.
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

HUGE_NEG = -1e8  # sb3-contrib's logit for an illegal action


class MaskedCategorical(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical over ``action_dim`` actions, with one normalization a mask."""

    def __init__(self, action_dim: int) -> None:
        super().__init__(action_dim)
        self._unmasked: torch.Tensor | None = None
        self._logits: torch.Tensor | None = None
        self.masks: torch.Tensor | None = None
        self._probs: torch.Tensor | None = None

    # sb3's Distribution sets ``self.distribution = None``; here the distribution is the object itself.
    @property
    def distribution(self) -> "MaskedCategorical":
        return self

    @distribution.setter
    def distribution(self, value: Any) -> None:
        if value is not None:
            raise AttributeError("MaskedCategorical is its own distribution")

    def proba_distribution(self, action_logits: torch.Tensor) -> "MaskedCategorical":
        logits = action_logits.view(-1, self.action_dim)
        if torch.isnan(logits).any():
            raise ValueError(f"the policy's logits hold NaN ({int(torch.isnan(logits).any(dim=1).sum())} of "
                             f"{logits.shape[0]} rows): the network has diverged")
        self._unmasked = logits - logits.logsumexp(dim=-1, keepdim=True)
        self.masks, self._logits, self._probs = None, None, None  # the unmasked logits, made when read
        return self

    def apply_masking(self, masks: Any) -> None:
        """Illegal actions (``masks`` false) get probability 0; None: no mask (the logits renormalized)."""
        unmasked = self._unmasked
        if unmasked is None:
            raise RuntimeError("apply_masking before proba_distribution")
        self._logits, self._probs = None, None
        if masks is None:
            self.masks = None
            return
        self.masks = torch.as_tensor(masks, dtype=torch.bool, device=unmasked.device).reshape(unmasked.shape)
        logits = torch.where(self.masks, unmasked, torch.tensor(HUGE_NEG, dtype=unmasked.dtype, device=unmasked.device))
        self._logits = logits - logits.logsumexp(dim=-1, keepdim=True)

    @property
    def logits(self) -> torch.Tensor:
        """The normalized log-probabilities (sb3-contrib's ``distribution.logits``)."""
        if self._logits is None:
            if self._unmasked is None:
                raise RuntimeError("logits before proba_distribution")
            self._logits = self._unmasked - self._unmasked.logsumexp(dim=-1, keepdim=True)
        return self._logits

    @property
    def probs(self) -> torch.Tensor:
        if self._probs is None:
            self._probs = torch.nn.functional.softmax(self.logits, dim=-1)
        return self._probs

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        if self.masks is None:
            p_log_p = torch.clamp(self.logits, min=torch.finfo(self.logits.dtype).min) * self.probs
        else:
            p_log_p = torch.where(self.masks, self.logits * self.probs, torch.tensor(0.0, device=self.logits.device))
        return -p_log_p.sum(-1)

    def sample(self) -> torch.Tensor:
        return torch.multinomial(self.probs, 1, True).reshape(-1)

    def mode(self) -> torch.Tensor:
        return torch.argmax(self.probs, dim=1)


class MaskedMlpPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's ``MlpPolicy`` with ``MaskedCategorical``: the same network, the same numbers."""

    def _build(self, lr_schedule: Any) -> None:
        if not hasattr(self.action_space, "n"):
            raise ValueError(f"MaskedMlpPolicy plays a Discrete action space, got {self.action_space}")
        self.action_dist = MaskedCategorical(int(self.action_space.n))
        super()._build(lr_schedule)
