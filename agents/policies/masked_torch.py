"""A masked categorical distribution for MaskablePPO that costs one normalisation and one cumulative
sum per batch, and ``MaskedMlpPolicy``, sb3-contrib's MLP policy on it: the policy of every training
run (``agents.training.model``; ``StakesSkipPolicy`` and the towers' policy derive from it).

``FastMaskedDistribution`` is a drop-in ``MaskableCategoricalDistribution``: the same logits layer,
the same masking (a masked logit becomes -1e8, as sb3-contrib does), the same log-probabilities,
entropy and modes to float rounding (sb3-contrib normalises twice, this once). What differs is the
cost and the sampler:

* sb3-contrib builds a ``torch.distributions.Categorical`` three times per batch (on creation, on
  clearing the mask, on applying it), each time normalising the logits and validating its
  arguments; ``MaskedCategorical`` normalises once, after masking, and validates nothing (the
  policy built the logits, and ``apply_masking`` checks the mask's shape).
* ``Categorical.sample`` draws with ``torch.multinomial``, about 1 ms for 128 rows of the action
  table on this project's 2-core host; ``MaskedCategorical.sample`` inverts the cumulative
  distribution (``torch.searchsorted`` on a uniform draw from torch's generator), about 0.07 ms.
  A masked action has probability exactly 0 (its logit is 1e8 below the rest) and so never comes
  out; the draw is kept strictly below the row's total, so the search always lands on an action.

The same seed gives the same samples (torch's global generator, which SB3 seeds); they are other
samples than multinomial's, drawn from the same distribution (``tests/test_masked_torch.py``).
Why: in the default config's profile the three normalisations, the argument checks and
multinomial together took about a tenth of a PPO step (docs/experiments.md, 2026-12-05).
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

MASKED_LOGIT = -1e8  # what sb3-contrib's MaskableCategorical puts in a masked action's logit


class MaskedCategorical:
    """A batch of categorical distributions over the action table, with an optional mask.

    ``logits`` are the normalised log-probabilities (masked entries about -1e8); the interface is the
    part of ``torch.distributions.Categorical`` that SB3 and this project use."""

    def __init__(self, raw_logits: torch.Tensor, masks: torch.Tensor | None = None) -> None:
        self.raw_logits = raw_logits
        self.apply_masking(masks)

    def apply_masking(self, masks: Any) -> None:
        if masks is None:
            self.masks = None
            masked = self.raw_logits
        else:
            masks = torch.as_tensor(masks, dtype=torch.bool, device=self.raw_logits.device)
            if masks.numel() != self.raw_logits.numel():
                raise ValueError(f"action mask has {masks.numel()} entries for logits of shape "
                                 f"{tuple(self.raw_logits.shape)}")
            self.masks = masks.reshape(self.raw_logits.shape)
            masked = torch.where(self.masks, self.raw_logits, torch.tensor(MASKED_LOGIT, dtype=self.raw_logits.dtype))
        self.logits = masked - masked.logsumexp(dim=-1, keepdim=True)
        self._probs: torch.Tensor | None = None

    @property
    def probs(self) -> torch.Tensor:
        if self._probs is None:
            self._probs = torch.softmax(self.logits, dim=-1)
        return self._probs

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, actions.long().reshape(-1, 1)).reshape(actions.shape)

    def entropy(self) -> torch.Tensor:
        p_log_p = self.logits * self.probs
        if self.masks is not None:  # a masked action adds nothing (its -1e8 logit times a tiny p need not be 0)
            p_log_p = torch.where(self.masks, p_log_p, torch.tensor(0.0, dtype=p_log_p.dtype))
        return -p_log_p.sum(-1)

    def sample(self) -> torch.Tensor:
        cumulative = self.probs.cumsum(-1)
        total = cumulative[:, -1:]
        draw = torch.rand(total.shape, dtype=total.dtype) * total
        draw = torch.minimum(draw, torch.nextafter(total, torch.zeros_like(total)))  # strictly below the total
        return torch.searchsorted(cumulative, draw, right=True).reshape(-1)


class FastMaskedDistribution(MaskableCategoricalDistribution):
    """``MaskableCategoricalDistribution`` on ``MaskedCategorical``."""

    distribution: MaskedCategorical  # type: ignore[assignment]

    def proba_distribution(self, action_logits: torch.Tensor) -> FastMaskedDistribution:
        self.distribution = MaskedCategorical(action_logits.view(-1, self.action_dim))
        return self


class MaskedMlpPolicy(MaskableActorCriticPolicy):
    """sb3-contrib's ``MlpPolicy`` (``MaskableActorCriticPolicy``) on ``FastMaskedDistribution``."""

    def _build(self, lr_schedule: Any) -> None:
        self.action_dist = FastMaskedDistribution(self.action_space.n)  # before the parent builds its layer
        super()._build(lr_schedule)
