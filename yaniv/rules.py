"""The rule settings: one immutable, validated ``Rules`` object, and the named presets.

Every point where the two source texts (``shared/seeds/000`` French how-to, ``001`` German
encyclopedia article) or common house rules differ is a field here. Each field carries its
documentation, its allowed values and its source as metadata; ``rules_table_markdown()``
renders them, and docs/rules.md is that table (a test keeps the two equal).

>>> Rules(yaniv_threshold=5).yaniv_threshold
5
>>> get_rules("german").draw_from_set
'ends'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Mapping

from yaniv.cards import MAX_JOKERS

ASSAF_PENALTIES: Final = ("hand_plus", "per_assafer", "flat")
SCORE_RESETS: Final = ("halve", "subtract", "none")
GAME_ENDS: Final = ("elimination", "first_over", "one_round")
RUN_DRAWS: Final = ("ends", "ends_and_jokers")
SET_DRAWS: Final = ("any", "ends", "ends_or_top_of_pair")
ROUND_STARTERS: Final = ("winner", "caller", "next_seat")
MIN_HAND, MAX_HAND = 4, 7
NATURAL_SET: Final = 4  # the most natural cards of one rank: a set passes four cards only with jokers
MAX_SETTING: Final = 1_000_000  # the largest value of an integer setting: every input has a bound
MAX_RESET_VALUES: Final = 32  # the most values score_reset_at may list
_UP_TO: Final = f"to {MAX_SETTING:,}"


def _setting(default: Any, doc: str, variants: str, source: str, allowed: str) -> Any:
    return field(default=default, metadata={"doc": doc, "variants": variants, "source": source, "allowed": allowed})


@dataclass(frozen=True)
class Rules:
    """The complete rule set of a game. Immutable; every value is checked on construction.

    Each setting is checked on its own (its type, its allowed values, at most ``MAX_SETTING`` for a
    number), then the combinations under which a round or a game could never end are refused, each
    naming the settings (``_check_the_game_can_end``):

    * ``yaniv_threshold`` below the lowest card: 0 with ``jokers=0`` (an ace is worth 1): nobody could
      ever call, so a round ends only at ``max_turns``, scoreless, and the game never;
    * ``max_turns`` of 1 or 2 with ``yaniv_threshold`` below the lowest hand of ``hand_size`` cards
      (e.g. ``max_turns=2, yaniv_threshold=5, jokers=0``: the lowest five cards total 6): nobody plays a
      second turn, no dealt hand may call, and every round ends at the cap (``Game`` refuses the same
      for a cap up to the number of seats in a full game);
    * ``min_set_with_jokers`` above ``max_set_size`` (no set could hold a joker: say ``jokers_in_sets=False``).

    No reset table is refused: ``score_reset_at`` holds at most 32 values, too few to catch every
    score on its way past the limit (see ``_check_the_game_can_end``).
    """

    yaniv_threshold: int = _setting(
        7, "A player may call Yaniv when the hand totals at most this.", "5 (000); any value",
        "001 (7); 000 (5)", f"an integer from 0 {_UP_TO}")
    assaf_on_equal: bool = _setting(
        True, "A total equal to the caller's Assafs the caller (else the caller wins ties).", "False",
        "001 ('the same amount of points or a smaller sum')", "True or False")
    assaf_penalty: str = _setting(
        "hand_plus",
        "What an Assafed caller scores. hand_plus: hand + assaf_penalty_points. per_assafer: hand + "
        "assaf_penalty_points with one Assafer, hand + assaf_points_per_assafer x Assafers with several. "
        "flat: assaf_penalty_points alone, and nobody else scores.",
        "per_assafer (001); flat (house)", "000 and 001 (+30); 001 (+20 per Assafer); house (flat)",
        "one of: " + ", ".join(ASSAF_PENALTIES))
    assaf_penalty_points: int = _setting(
        30, "The Assaf penalty (with one Assafer, or flat).", "any", "000, 001", f"an integer from 0 {_UP_TO}")
    assaf_points_per_assafer: int = _setting(
        20, "Penalty per Assafing player when several Assaf (assaf_penalty = per_assafer).", "any", "001",
        f"an integer from 0 {_UP_TO}")
    score_reset: str = _setting(
        "halve", "What a cumulative score landing exactly on a score_reset_at value does.",
        "subtract (house); none", "000 (halve at 100, 200); 001 variant (50, 100, 150); house (-50)",
        "one of: " + ", ".join(SCORE_RESETS))
    score_reset_at: tuple[int, ...] = _setting(
        (100, 200), "The scores that trigger the reset when a round's points land on them exactly.",
        "(50, 100, 150) (001); (50, 100, 150, 200) (house)", "000; 001", f"a tuple of at most {MAX_RESET_VALUES} distinct integers from 1 {_UP_TO}")
    score_reset_subtract: int = _setting(
        50, "Points taken off by score_reset = subtract.", "any", "house", f"an integer from 1 {_UP_TO}")
    game_end: str = _setting(
        "elimination",
        "elimination: a player whose score passes score_limit leaves; the last one standing wins. "
        "first_over: the first score past score_limit ends the game; the lowest score wins. "
        "one_round: the game is one round, ranked by it: its winners first, then the fewer points taken; "
        "scores, resets and the limit decide nothing.",
        "first_over (001); one_round (house)", "000 and 001 (elimination); 001 (first_over)",
        "one of: " + ", ".join(GAME_ENDS))
    score_limit: int = _setting(
        200, "The score a player must pass (strictly) to be eliminated or to end the game.", "100 is common",
        "000, 001 (200)", f"an integer from 1 {_UP_TO}")
    next_round_starter: str = _setting(
        "winner", "Who starts the next round. winner: the round's winner (of tied winners, the first after the "
        "caller). caller: the caller, even when Assafed (if it is out, the next seat in the game after it). "
        "next_seat: the seat after the previous round's starter. A round cut by max_turns is always followed "
        "by the next seat.", "caller (house); next_seat (house)", "default; house", "one of: " + ", ".join(ROUND_STARTERS))
    jokers: int = _setting(
        2, "Jokers in the deck (0 points, wild in runs).", "0 or 1", "001 (54 cards)", f"0..{MAX_JOKERS}")
    jokers_in_sets: bool = _setting(
        False, "Jokers are wild in sets too (within min_set_with_jokers and max_set_size).",
        "True (000: a 'séquence' of three or four of a kind takes jokers; house)", "000; house", "True or False")
    min_set_with_jokers: int = _setting(
        2, "With jokers_in_sets, the fewest cards of a set that holds a joker: 2 lets a joker pair a natural "
        "(5H JK), 3 wants three or more (5H 5S JK, 5H JK JK). Two jokers alone are always a pair of their own.",
        "3 (000: jokers are wild in a 'séquence', three cards or more; a pair is two of one value)",
        "000 (3); house (2)", "an integer from 2 to max_set_size")
    max_set_size: int = _setting(
        NATURAL_SET, "The most cards of a discarded set. Above four a set needs jokers (and jokers_in_sets); a "
        "slamdown may still add one natural to a set.", "5 or 6 (house: four of a kind and jokers)",
        "000 and 001 (four); house", f"{NATURAL_SET} to {NATURAL_SET + 2}")
    draw_from_run: str = _setting(
        "ends", "Which cards of a run the next player may draw.",
        "ends_and_jokers: a joker inside the run too (001)", "000 (ends); 001 (jokers)", "one of: " + ", ".join(RUN_DRAWS))
    draw_from_set: str = _setting(
        "any", "Which cards of a set the next player may draw. ends: its first and last card as it lies. "
        "ends_or_top_of_pair: of three or four cards the ends, of a pair only its top card (the last as it lies).",
        "ends (001: 'only one of the outer cards'); ends_or_top_of_pair (000)",
        "default; 001; 000 ('la carte du dessus', 'la première carte dans la séquence ou la dernière')",
        "one of: " + ", ".join(SET_DRAWS))
    discarder_places_jokers: bool = _setting(
        False, "The discarder of a run with jokers says where each joker stands, which decides the run's ends: "
        "the move's cards give the run low to high, and each placement is a move of its own. Off: jokers fill "
        "gaps, then extend the run upwards (the canonical order).", "True (house)", "house", "True or False")
    hand_size: int = _setting(
        5, "Cards dealt to each player.", "4 to 7", "000, 001 (5)", f"{MIN_HAND}..{MAX_HAND}")
    slamdown: bool = _setting(
        False,
        "A card just drawn from the deck that matches the rank of the set just discarded, or extends the run "
        "just discarded, may be thrown onto it at once (a decision of its own).",
        "True (house)", "house", "True or False")
    max_turns: int | None = _setting(
        None, "Turn cap per round, for simulation; a capped round ends with no winner and no scores.",
        "any cap", "simulation", f"None or an integer from 1 {_UP_TO}")

    def __post_init__(self) -> None:
        _check_int(self, "yaniv_threshold", minimum=0)
        _check_bool(self, "assaf_on_equal")
        _check_choice(self, "assaf_penalty", ASSAF_PENALTIES)
        _check_int(self, "assaf_penalty_points", minimum=0)
        _check_int(self, "assaf_points_per_assafer", minimum=0)
        _check_choice(self, "score_reset", SCORE_RESETS)
        at = self.score_reset_at
        if isinstance(at, list):  # YAML and JSON give lists; keep the object hashable
            object.__setattr__(self, "score_reset_at", at := tuple(at))
        if (not isinstance(at, tuple) or len(at) > MAX_RESET_VALUES
                or any(type(v) is not int or not 0 < v <= MAX_SETTING for v in at) or len(set(at)) != len(at)):
            _fail("score_reset_at", at)
        _check_int(self, "score_reset_subtract", minimum=1)
        _check_choice(self, "game_end", GAME_ENDS)
        _check_int(self, "score_limit", minimum=1)
        _check_choice(self, "next_round_starter", ROUND_STARTERS)
        _check_int(self, "jokers", minimum=0, maximum=MAX_JOKERS)
        _check_bool(self, "jokers_in_sets")
        _check_int(self, "max_set_size", minimum=NATURAL_SET, maximum=NATURAL_SET + MAX_JOKERS)
        _check_int(self, "min_set_with_jokers", minimum=2, maximum=self.max_set_size)
        _check_choice(self, "draw_from_run", RUN_DRAWS)
        _check_choice(self, "draw_from_set", SET_DRAWS)
        _check_bool(self, "discarder_places_jokers")
        _check_int(self, "hand_size", minimum=MIN_HAND, maximum=MAX_HAND)
        _check_bool(self, "slamdown")
        if self.max_turns is not None:
            _check_int(self, "max_turns", minimum=1)
        _check_the_game_can_end(self)

    def may_call_yaniv(self, total: int) -> bool:
        """Whether a player whose hand totals ``total`` may call Yaniv (at the start of its turn).

        The one statement of the Yaniv right: the engine's legal moves, the action mask, the
        observation and the bots all ask it.
        """
        return total <= self.yaniv_threshold

    def reset_score(self, score: int) -> int | None:
        """The score after ``score_reset`` when a round ends on ``score`` exactly at a reset value, else None."""
        if self.score_reset == "none" or score not in self.score_reset_at:
            return None
        return score // 2 if self.score_reset == "halve" else max(0, score - self.score_reset_subtract)

    def score_stakes(self, score: int) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        """What a round ending with hand total t would do to ``score``, for t from 0 to the most a
        hand plus one drawn card can hold: the points a reset takes off ``score + t`` (0 without
        one), and whether ``score + t`` passes the limit. Remembered per rule set and score."""
        return _score_stakes(self, score)

    @property
    def one_round(self) -> bool:
        """Whether a game under these rules is a single round (``game_end="one_round"``)."""
        return self.game_end == "one_round"

    def replace(self, **changes: Any) -> "Rules":
        """A copy with some settings changed; an unknown name is an error naming it."""
        _check_names(changes)
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> "Rules":
        """Build from a mapping (a YAML or JSON object); an optional "preset" key names the base."""
        settings = dict(settings)
        base = get_rules(settings.pop("preset", "default"))
        return base.replace(**settings)

    def describe(self) -> str:
        """The settings that differ from the default, e.g. "yaniv_threshold=5, jokers=0"."""
        default = PRESETS["default"]
        changed = [f"{k}={v!r}" for k, v in self.to_dict().items() if getattr(default, k) != v]
        return ", ".join(changed) or "default rules"


@lru_cache(maxsize=4096)
def _score_stakes(rules: Rules, score: int) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    totals = (rules.hand_size + 1) * 10 + 1  # ten points a card at most
    if rules.one_round:  # the round decides the game: what its scores become, nothing
        return (0,) * totals, (False,) * totals
    taken, over = [], []
    for t in range(totals):
        new = score + t
        reset = rules.reset_score(new)
        after = new if reset is None else reset  # as the engine scores a round: reset, then the limit
        taken.append(new - after)
        over.append(after > rules.score_limit)
    return tuple(taken), tuple(over)


def _fail(name: str, value: Any) -> None:
    allowed = RULE_FIELDS[name].metadata["allowed"]
    raise ValueError(f"Rules.{name}: got {value!r}; allowed: {allowed}")


def _check_int(rules: Rules, name: str, minimum: int, maximum: int = MAX_SETTING) -> None:
    value = getattr(rules, name)
    if type(value) is not int or not minimum <= value <= maximum:
        _fail(name, value)


def lowest_hand(rules: Rules, cards: int) -> int:
    """The lowest total ``cards`` cards of the deck can make (jokers 0, then aces 1, twos 2, ...)."""
    values = [0] * rules.jokers + [v for v in range(1, 11) for _ in range(4 if v < 10 else 16)]
    return sum(values[:cards])


def _check_the_game_can_end(rules: Rules) -> None:
    """Refuse, naming the settings, a rule set under which no round can end by a call or no game can end.

    1. ``yaniv_threshold`` below the lowest card (0 with jokers, an ace's 1 without): no hand may ever
       call, so a round ends only at ``max_turns``, with no scores, and the game never.
    2. ``max_turns`` of 1 or 2 with ``yaniv_threshold`` below the lowest dealt hand: nobody plays a second
       turn in a round (two seats at least), so only a dealt hand could call and none can; ``Game``
       refuses the same for larger caps up to the number of seats.

    Resets cannot stop a game from ending, so none is refused for it: a seat that loses a round adds
    its hand's total, any value from 1 to ten times ``hand_size`` (40 at least), and a score could stay
    at or under the limit for ever only if that many reset values in a row caught every landing above
    it; ``score_reset_at`` lists at most ``MAX_RESET_VALUES`` (32) values.
    """
    lowest_card = lowest_hand(rules, 1)
    if rules.yaniv_threshold < lowest_card:
        raise ValueError(
            f"Rules.yaniv_threshold={rules.yaniv_threshold} with Rules.jokers={rules.jokers}: no hand totals less "
            f"than {lowest_card} (the lowest card), so nobody could ever call Yaniv and no round or game could end"
        )
    dealt = lowest_hand(rules, rules.hand_size)
    if rules.max_turns is not None and rules.max_turns <= 2 and rules.yaniv_threshold < dealt:
        raise ValueError(
            f"Rules.max_turns={rules.max_turns} with Rules.yaniv_threshold={rules.yaniv_threshold}: nobody plays a "
            f"second turn before the cap, and no dealt hand of {rules.hand_size} cards totals less than {dealt}, so "
            "every round would end at the cap with no scores and no game could end"
        )


def _check_bool(rules: Rules, name: str) -> None:
    if type(getattr(rules, name)) is not bool:
        _fail(name, getattr(rules, name))


def _check_choice(rules: Rules, name: str, choices: tuple[str, ...]) -> None:
    if getattr(rules, name) not in choices:
        _fail(name, getattr(rules, name))


def _check_names(settings: Mapping[str, Any]) -> None:
    unknown = sorted(set(settings) - set(RULE_FIELDS))
    if unknown:
        raise ValueError(f"unknown rule setting(s) {', '.join(unknown)}; known: {', '.join(RULE_FIELDS)}")


RULE_FIELDS: Final = {f.name: f for f in dataclasses.fields(Rules)}

PRESETS: Final[dict[str, Rules]] = {
    # The rules this project plays by default: the table in the rules-engine issue.
    "default": Rules(),
    # shared/seeds/000 (French how-to): Yaniv at 5 or less; +30 for a wrong call; exact 100 or 200
    # halves; elimination above 200. Its "séquence" is a run of three or more or three to four of a
    # kind: only its first or last card may be drawn, and jokers are wild in any séquence, sets of
    # three or four included; a pair is two cards of one value (no joker), and of it only "la carte du
    # dessus" (the top card) may be drawn. It is silent on ties, which keep the default.
    "french": Rules(yaniv_threshold=5, jokers_in_sets=True, min_set_with_jokers=3, draw_from_set="ends_or_top_of_pair"),
    # shared/seeds/001 (German encyclopedia article): Yaniv at 7 or less; an equal total Assafs;
    # +30, or +20 per Assafer when several Assaf; the halving variant at 50/100/150; the first game
    # end it lists (passing the limit ends the game, lowest wins); a joker inside a run may be taken;
    # "only one of the outer cards" of any multi-card discard.
    "german": Rules(
        assaf_penalty="per_assafer",
        score_reset_at=(50, 100, 150),
        game_end="first_over",
        draw_from_run="ends_and_jokers",
        draw_from_set="ends",
    ),
}


def get_rules(rules: "str | Rules | Mapping[str, Any] | None" = None) -> Rules:
    """A preset by name, a Rules object as is, a mapping of settings, or None for the default."""
    if rules is None:
        return PRESETS["default"]
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        if rules not in PRESETS:
            raise ValueError(f"unknown rules preset {rules!r}; presets: {', '.join(PRESETS)}")
        return PRESETS[rules]
    if isinstance(rules, Mapping):
        return Rules.from_dict(rules)
    raise TypeError(f"rules must be a preset name, a Rules object or a mapping, not {type(rules).__name__}")


MAX_RULES_TEXT: Final = 2000  # characters of a spelled rule set (parse_rules): far above any real one


def parse_rules(text: str) -> Rules:
    """A rule set spelled on one line: a preset name, or a preset and changes,
    ``"default:jokers=0,yaniv_threshold=6,score_reset_at=50/100,max_turns=none"``. Each value is read
    as its setting's type (a whole number, true or false, a word, numbers joined by ``/`` for a
    tuple, ``none`` for no turn cap); the result is validated as any ``Rules``. ValueError naming the
    part that is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a rule set is a preset name or 'preset:key=value,...', got {text!r}")
    if len(text) > MAX_RULES_TEXT:
        raise ValueError(f"a rule set's text is at most {MAX_RULES_TEXT} characters, got {len(text)}")
    name, colon, rest = (part.strip() for part in text.partition(":"))
    base = get_rules(name)
    if not colon:
        return base
    defaults = base.to_dict()
    changes: dict[str, Any] = {}
    for item in rest.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or key not in defaults:
            raise ValueError(f"rule set {text!r}: {item.strip()!r} is not key=value with a setting of Rules "
                             f"({', '.join(defaults)})")
        if key in changes:
            raise ValueError(f"rule set {text!r}: {key} is given twice")
        default = defaults[key]
        try:
            if key == "max_turns":
                changes[key] = None if value.lower() == "none" else int(value)
            elif isinstance(default, bool):
                if value.lower() not in ("true", "false"):
                    raise ValueError
                changes[key] = value.lower() == "true"
            elif isinstance(default, tuple):
                changes[key] = tuple(int(v) for v in value.split("/")) if value else ()
            elif isinstance(default, int):
                changes[key] = int(value)
            else:
                changes[key] = value
        except ValueError:
            kind = ("true or false" if isinstance(default, bool) else "whole numbers joined by /"
                    if isinstance(default, tuple) else "a whole number")
            raise ValueError(f"rule set {text!r}: {key} must be {kind}, got {value!r}") from None
    try:
        return base.replace(**changes)
    except (TypeError, ValueError) as error:
        raise ValueError(f"rule set {text!r}: {error}") from None


def rules_table_markdown() -> str:
    """The settings table of docs/rules.md, rendered from the field metadata."""
    rows = [
        "| setting | default | allowed | variants | source | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for f in dataclasses.fields(Rules):
        m = f.metadata
        rows.append(f"| `{f.name}` | `{f.default!r}` | {m['allowed']} | {m['variants']} | {m['source']} | {m['doc']} |")
    return "\n".join(rows)


def presets_table_markdown() -> str:
    """One row per preset with the settings where it departs from the default."""
    rows = ["| preset | differs from default in |", "|---|---|"]
    rows += [f"| `{name}` | {rules.describe()} |" for name, rules in PRESETS.items()]
    return "\n".join(rows)
