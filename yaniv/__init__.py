"""yaniv: the rules of Yaniv as a pure Python + numpy engine.

Importing it imports no gymnasium, pettingzoo or torch: a frontend can referee a game between
people with it alone.

>>> from yaniv import Game, YANIV
>>> game = Game(num_players=3, rules="default", seed=7)
>>> move = game.legal_moves()[0]
>>> game.apply(move)
"""

from yaniv.cards import (
    JOKERS,
    NUM_CARDS,
    POINTS,
    RANK,
    SUIT,
    card_code,
    card_str,
    cards_str,
    hand_points,
    parse_card,
    parse_cards,
)
from yaniv.game import (
    DECK,
    KEEP,
    MAX_PLAYERS,
    MIN_PLAYERS,
    SLAMDOWN,
    YANIV,
    Event,
    Game,
    Move,
    PlayerView,
    RoundResult,
)
from yaniv.melds import Group, classify, legal_discards
from yaniv.render import describe_event, describe_result, render_game
from yaniv.rules import PRESETS, Rules, get_rules

__all__ = [
    "DECK", "JOKERS", "KEEP", "MAX_PLAYERS", "MIN_PLAYERS", "NUM_CARDS", "POINTS", "PRESETS", "RANK",
    "SLAMDOWN", "SUIT", "YANIV", "Event", "Game", "Group", "Move", "PlayerView", "RoundResult", "Rules",
    "card_code", "card_str", "cards_str", "classify", "describe_event", "describe_result", "get_rules",
    "hand_points", "legal_discards", "parse_card", "parse_cards", "render_game",
]
