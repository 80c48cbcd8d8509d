"""The rule spaces of yaniv.rule_space: every draw a valid rule set of the space, the named real
rule sets inside it, the same generator the same draws, and a space that cannot be drawn refused."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from yaniv.rule_space import HOUSE, RuleSpace, get_rule_space
from yaniv.rules import get_rules
from yaniv_env.encoding import check_expressible


def in_space(space: RuleSpace, rules) -> bool:
    """Whether ``rules`` is one of the space's draws (reset values over the limit dropped)."""
    base = {f.name: getattr(space.base, f.name) for f in dataclasses.fields(rules)}
    listed = {name for names, _ in space.choices for name in names}
    if any(getattr(rules, k) != v for k, v in base.items() if k not in listed):
        return False
    for names, values in space.choices:
        got = tuple(getattr(rules, n) for n in names)
        if names == ("score_reset_at",):
            if not any(tuple(x for x in v[0] if x <= rules.score_limit) == got[0] for v in values):
                return False
        elif got not in values:
            return False
    return True


def test_house_draws_are_valid_playable_and_cover_every_value():
    rules = HOUSE.sample(3000, np.random.default_rng(0))
    for r in rules:
        check_expressible(r)
        assert r.hand_size == 5 and all(v <= r.score_limit for v in r.score_reset_at)
        assert in_space(HOUSE, r)
    for names, values in HOUSE.choices:
        drawn = {tuple(getattr(r, n) for n in names) for r in rules}
        wanted = set(values) if names != ("score_reset_at",) else drawn
        assert drawn == wanted, f"{names} takes every value"
    assert HOUSE.size == 3 * 3 * 3 * 2 * 3 * 2 * 2 * 3 * 4 * 2 * 2 * 3 * 2 * 3


@pytest.mark.parametrize("name, rules", [
    ("default", get_rules("default")),
    ("french", get_rules("french")),
    ("german", get_rules("german")),
    ("52 cards, Yaniv at 7, +30", get_rules("default").replace(jokers=0)),
    ("Yaniv at 5, flat 30, -50 at 50/100, out above 100",
     get_rules("default").replace(yaniv_threshold=5, assaf_penalty="flat", assaf_penalty_points=30,
                                  score_reset="subtract", score_reset_at=(50, 100), score_limit=100)),
])
def test_the_issue_s_rule_sets_are_in_the_house_space(name, rules):
    assert in_space(HOUSE, rules), name


def test_same_generator_same_draws_and_bad_spaces_are_refused():
    assert HOUSE.sample(50, np.random.default_rng(3)) == HOUSE.sample(50, np.random.default_rng(3))
    assert HOUSE.sample(50, np.random.default_rng(3)) != HOUSE.sample(50, np.random.default_rng(4))
    assert get_rule_space("house") is HOUSE
    with pytest.raises(ValueError, match="unknown rule space 'mine'"):
        get_rule_space("mine")
    with pytest.raises(ValueError, match="1 to 100,000"):
        HOUSE.sample(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="'trumps' is not a setting"):
        RuleSpace("bad", get_rules("default"), ((("trumps",), ((1,),)),))
    with pytest.raises(ValueError, match="jokers is listed twice"):
        RuleSpace("bad", get_rules("default"), ((("jokers",), ((0,),)), (("jokers",), ((1,),))))
    never = RuleSpace("never", get_rules("default").replace(jokers=0), ((("yaniv_threshold",), ((0,),)),))
    with pytest.raises(ValueError, match="100 draws in a row were refused"):
        never.draw(np.random.default_rng(0))
