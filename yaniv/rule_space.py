"""Rule sets drawn at random: the house rules one agent trains across, a game at a time.

    space = get_rule_space("house")
    rules = space.draw(np.random.default_rng(0))         # a Rules, every listed setting drawn
    sets = space.sample(1024, np.random.default_rng(0))  # what a trainer's games draw from
    space.size                                           # how many distinct draws the space holds

A ``RuleSpace`` is a base ``Rules`` and, for some of its settings, the values each may take. A
draw picks one value per listed setting, uniformly and independently, in the order listed, from
the generator it is given, so the same generator state gives the same rules. Settings that go
together are listed as one entry whose values are tuples (``jokers_in_sets`` with
``min_set_with_jokers``). Reset values above the drawn ``score_limit`` are dropped from
``score_reset_at`` (a score past the limit is out before it could be reset), and a draw that
``Rules`` refuses (a combination under which no game could end) is drawn again; a space whose
draws are refused ``MAX_REDRAWS`` times running is refused by name.

``HOUSE`` (``"house"``) is the space of the learning issue: Yaniv at 5 to 7, 0 to 2 jokers, with
or without jokers in sets (from pairs or from three), Assaf on equal totals or not, every Assaf
penalty (+20 or +30, +20 or +30 per Assafer, flat 20 or 30), every score reset (halve, subtract 50,
none) at each table of values, a limit of 100 or 200, elimination or first over the limit, every
round starter and every draw rule, five cards dealt. It holds the three presets and the house
sets that frontends play (52 cards without jokers, Yaniv at 7, +30; Yaniv at 5, flat 30, 50
subtracted at 50 or 100, out above 100); the number of seats is drawn by the trainer. A game of
one round is a rule (``game_end="one_round"``: won by winning the round, and observed), unlike a
trainer's round episodes, which are rounds cut from a longer game and paid by their points; this
space does not draw it: the one run that drew it for a third of its games, with more whole games
beside, won a point more of the one-round games and lost ground at four seats
(docs/experiments.md, 2026-12-03). A trainer makes a share of its sample such games instead (the
``agents.training`` key ``one_round_share``), with a network of their own (``towers``).

Why a space and not a list: a list of a dozen rule sets teaches a dozen games; a policy that sees
every combination, with the observation's settings segment telling it which apply, has to read
the settings rather than memorise the sets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from yaniv.rules import RULE_FIELDS, Rules, get_rules

MAX_REDRAWS: Final = 100  # refused draws in a row before a space is judged empty
MAX_SAMPLE: Final = 100_000  # rule sets in one sample: every input has a bound


@dataclass(frozen=True)
class RuleSpace:
    """A base rule set and, per listed setting (or group of settings), the values a draw picks from."""

    name: str
    base: Rules
    choices: tuple[tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]], ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for names, values in self.choices:
            for key in names:
                if key not in RULE_FIELDS:
                    raise ValueError(f"rule space {self.name!r}: {key!r} is not a setting of Rules")
                if key in seen:
                    raise ValueError(f"rule space {self.name!r}: {key} is listed twice")
                seen.add(key)
            if not values or any(len(v) != len(names) for v in values):
                raise ValueError(f"rule space {self.name!r}: {'/'.join(names)} needs values of {len(names)} each")

    @property
    def size(self) -> int:
        """The number of distinct draws (before reset values over the limit are dropped)."""
        return math.prod(len(values) for _, values in self.choices)

    def draw(self, rng: np.random.Generator) -> Rules:
        """One rule set from the space, from ``rng`` alone (one ``rng.random`` call a try)."""
        counts = np.array([len(values) for _, values in self.choices])
        for _ in range(MAX_REDRAWS):
            changes: dict[str, Any] = {}
            for (names, values), pick in zip(self.choices, (rng.random(len(counts)) * counts).astype(np.int64)):
                changes.update(zip(names, values[pick]))
            limit = changes.get("score_limit", self.base.score_limit)
            at = changes.get("score_reset_at", self.base.score_reset_at)
            changes["score_reset_at"] = tuple(v for v in at if v <= limit)
            try:
                return self.base.replace(**changes)
            except ValueError:
                continue
        raise ValueError(f"rule space {self.name!r}: {MAX_REDRAWS} draws in a row were refused by Rules")

    def sample(self, count: int, rng: np.random.Generator) -> list[Rules]:
        """``count`` draws (repeats possible): what a trainer's games pick from, one per game. Building
        and checking a ``Rules`` takes about a hundred microseconds, too slow to do for each of the
        thousand rounds a second a vector env plays; a sample of a thousand is drawn once instead."""
        if type(count) is not int or not 1 <= count <= MAX_SAMPLE:
            raise ValueError(f"rule space {self.name!r}: a sample of 1 to {MAX_SAMPLE:,} rule sets, got {count!r}")
        return [self.draw(rng) for _ in range(count)]


def _each(name: str, *values: Any) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]:
    return (name,), tuple((v,) for v in values)


HOUSE: Final = RuleSpace(
    name="house",
    base=get_rules("default"),
    choices=(
        _each("yaniv_threshold", 5, 6, 7),
        _each("jokers", 0, 1, 2),
        (("jokers_in_sets", "min_set_with_jokers"), ((False, 2), (True, 2), (True, 3))),
        _each("assaf_on_equal", True, False),
        _each("assaf_penalty", "hand_plus", "per_assafer", "flat"),
        _each("assaf_penalty_points", 20, 30),
        _each("assaf_points_per_assafer", 20, 30),
        _each("score_reset", "halve", "subtract", "none"),
        _each("score_reset_at", (100, 200), (50, 100), (50, 100, 150), (100,)),
        _each("score_limit", 100, 200),
        _each("game_end", "elimination", "first_over"),
        _each("next_round_starter", "winner", "caller", "next_seat"),
        _each("draw_from_run", "ends", "ends_and_jokers"),
        _each("draw_from_set", "any", "ends", "ends_or_top_of_pair"),
    ),
)

RULE_SPACES: Final[dict[str, RuleSpace]] = {HOUSE.name: HOUSE}


def get_rule_space(name: str) -> RuleSpace:
    """The named rule space; ValueError listing the names for any other input."""
    space = RULE_SPACES.get(name) if isinstance(name, str) else None
    if space is None:
        raise ValueError(f"unknown rule space {name!r}: one of {', '.join(RULE_SPACES)}")
    return space
