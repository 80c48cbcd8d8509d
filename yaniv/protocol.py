"""The JSON protocol: one decision's state in, one move out, for frontends in any language.

A frontend that referees its own game sends a bot the *state* of one player (what that player
may know) and gets back a *move*. The JSON Schemas are ``yaniv/schemas/state.schema.json`` and
``yaniv/schemas/move.schema.json``; ``docs/protocol.md`` walks through both with examples.

State (a JSON object)::

    {
      "protocol": "yaniv/1",                  # optional; if present it must be this
      "rules": "default",                     # a preset name, or {"preset": "german", "slamdown": true, ...}
      "seat": 0,                              # whose state this is (seats count from 0)
      "to_move": 0,                           # the seat to play
      "phase": "play",                        # "play", or "slamdown" when a drawn card may be thrown
      "pending": null,                        # the drawn card awaiting the slamdown decision (own turn only)
      "hand": ["AS", "5H", "5S", "9C", "KD"], # the player's cards
      "pile": {
        "top": ["7D", "8D", "9D"],            # the group on top of the pile, in the order it lies
        "drawable": ["7D", "9D"],             # which of them may be drawn (checked against the rules)
        "dead": ["2C", "QS"]                  # every other card on the pile (no longer drawable)
      },
      "deck_size": 31,
      "turn": 6,                              # turns played this round
      "round": 1,                             # optional
      "players": [                            # one entry per seat, in seat order (play passes upwards)
        {"score": 0, "hand_size": 5, "in_game": true, "known": []},
        {"score": 35, "hand_size": 3, "in_game": true, "known": ["6H"]}
      ],
      "history": [...]                        # optional: this round's public events, see below
    }

``known`` lists the cards everybody saw a seat take from the pile and that it still holds. The
optional ``history`` lists the round's public events from the deal, oldest first:
``{"player": 1, "discard": ["7D", "8D", "9D"], "draw": "deck"}`` (or the card taken from the
pile), ``{"player": 1, "slamdown": "TD"}``, ``{"reshuffle": [cards]}``. Bots that read
opponents' habits (the heuristic, search) use it; without it they see the round as joined in
progress. When given, it must agree with the rest of the state.

Move (a JSON object)::

    {"action": "discard", "cards": ["5H", "5S"], "draw": "deck"}     # or "draw": "7D" (from the pile)
    {"action": "yaniv"}
    {"action": "slamdown"}        # throw the pending card onto the group just discarded
    {"action": "keep"}            # keep it

Cards are named as ``yaniv.card_code`` writes them ("AS", "TH", "QD", "JK1", "JK2"). Readers
also take the spellings docs/protocol.md lists, and no other: lower case, "10" for "T", suit symbols
("q♦") and "JK" for the first joker; "AH ", "5h\\n" or "JOKER" are unknown cards (the terminal
game's own reader, ``yaniv.cards.parse_card``, stays friendlier). ``state_for(game, player)`` writes
the state of any player of a game in progress, ``apply_move(game, move)`` applies a move to a game,
and ``game_from_state(state, rng)`` rebuilds a full game consistent with a state (the hidden cards
sampled), which is how every bot answers a state. A state or move that cannot be read, or that
describes an impossible position, raises ``ProtocolError`` (a ``ValueError``) naming the problem.

Limits, for text from anyone: ``parse_json(text)`` reads one JSON value of at most ``MAX_TEXT_BYTES``
bytes of UTF-8, nested at most ``MAX_DEPTH`` deep (checked by a linear scan before the parser
recurses), with no NaN or infinity and no integer of more than ``MAX_DIGITS`` digits (such a number
reads as a ``NumberTooLarge``, which every field refuses by name). In a state every integer is at
most ``MAX_NUMBER`` (a seat in the game at most the score limit), every list of cards at most as
long as the place can hold (a hand: the rules' hand size), a history at most ``MAX_RESHUFFLES``
reshuffles, checked before any work that grows faster than the input; every message quotes at
most a few dozen characters of the input.
"""

from __future__ import annotations

import json
import math
import re
from importlib import resources
from typing import Any, Final, Mapping

import numpy as np

from yaniv.cards import JOKERS, NUM_CARDS, NUM_STANDARD, RANK, SORT_KEY, card_code, deck_cards
from yaniv.game import (
    CALL, DECK, DISCARD, KEEP, KEEP_CARD, MAX_PLAYERS, MIN_PLAYERS, PLAY, RESHUFFLE, SLAM, SLAMDOWN,
    SLAMDOWN_PHASE, STATE, YANIV, Event, Game, Move, PlayerView,
)
from yaniv.melds import SET, Group, classify, drawable_cards
from yaniv.rules import MAX_HAND, PRESETS, RULE_FIELDS, Rules, get_rules

PROTOCOL: Final = "yaniv/1"
STATE_KEYS: Final = (
    "protocol", "rules", "seat", "to_move", "phase", "pending", "hand", "pile", "deck_size", "turn", "round",
    "players", "history",
)
REQUIRED_KEYS: Final = ("rules", "seat", "to_move", "phase", "hand", "pile", "deck_size", "turn", "players")
PLAYER_KEYS: Final = ("score", "hand_size", "in_game", "known")
PILE_KEYS: Final = ("top", "drawable", "dead")
ACTIONS: Final = ("discard", "yaniv", "slamdown", "keep")

MAX_TEXT_BYTES: Final = 1 << 20  # parse_json's default size limit (1 MiB); a state is a few KiB
MAX_DEPTH: Final = 32  # JSON nesting; a state needs 4 (5 in the server's {"id", "state"} wrapper)
MAX_DIGITS: Final = 64  # a longer integer is never parsed: it reads as a NumberTooLarge
MAX_NUMBER: Final = 1_000_000  # the largest integer a state's fields take: turn, round, scores, rule values
MAX_RULE_LIST: Final = 32  # the longest list a rule setting takes (score_reset_at)
MAX_QUOTE: Final = 60  # characters of the input an error message quotes
MAX_RESHUFFLES: Final = 100  # per round's history (random play reaches 10); replaying costs reshuffles x events


class ProtocolError(ValueError):
    """A state or move that cannot be read, or that describes an impossible position."""


class NumberTooLarge:
    """A JSON number that ``parse_json`` did not convert: more than ``MAX_DIGITS`` digits, or a float
    out of range. Every field refuses it by name; it is never an int, so no check lets it through."""

    def __init__(self, text: str) -> None:
        digits = sum(ch.isdigit() for ch in text)
        self.description = f"a number of {digits} digits" if text.lstrip("-").isdigit() else (
            f"a number too large for a float ({text[:20]}{'...' if len(text) > 20 else ''})")

    def __repr__(self) -> str:
        return self.description


def quote(value: Any) -> str:
    """A short JSON rendering of part of the input, for an error message (never the whole of a big value)."""
    if isinstance(value, NumberTooLarge):
        return value.description
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return f"a {type(value).__name__}"
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 3] + "..."


# A JSON string, unrolled so that the regex engine walks it in one pass: "..." with \-escapes.
_JSON_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """How deep ``text`` nests lists and objects, found by a linear scan (no recursion): brackets
    inside strings do not count; unclosed brackets do."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    if not brackets:
        return 0
    steps = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    return int(np.cumsum(np.where((steps == ord("[")) | (steps == ord("{")), 1, -1)).max())


def _parse_int(text: str) -> int | NumberTooLarge:
    return int(text) if len(text) <= MAX_DIGITS else NumberTooLarge(text)


def _parse_float(text: str) -> float | NumberTooLarge:
    value = float(text) if len(text) <= 4 * MAX_DIGITS else math.inf
    return value if math.isfinite(value) else NumberTooLarge(text)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str | bytes, *, max_bytes: int | None = MAX_TEXT_BYTES, what: str = "line") -> Any:
    """One JSON value read within the limits of the module docstring; ProtocolError naming what is wrong.

    ``max_bytes`` bounds the UTF-8 size (None: no bound, for a caller that bounded it already);
    ``what`` names the text in messages ("line", "bot.json").
    """
    size = len(text) if isinstance(text, (bytes, bytearray)) else len(text.encode("utf-8", "surrogatepass"))
    if max_bytes is not None and size > max_bytes:
        raise ProtocolError(f"{what}: {size} bytes, longer than the limit of {max_bytes}")
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolError(f"{what}: not UTF-8 text ({error})") from None
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise ProtocolError(f"{what}: JSON nested {depth} deep, deeper than the limit of {MAX_DEPTH}")
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise ProtocolError(f"not JSON: {error}") from None
    except (ValueError, RecursionError) as error:  # NaN or Infinity; recursion cannot happen below MAX_DEPTH
        raise ProtocolError(f"not JSON: {error}") from None


def schema(name: str) -> dict:
    """The JSON Schema ``"state"`` or ``"move"`` (shipped with the package)."""
    if name not in ("state", "move"):
        raise ValueError(f"no schema {name!r}; there are 'state' and 'move'")
    return json.loads(resources.files("yaniv").joinpath("schemas", f"{name}.schema.json").read_text())


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def rules_to_json(rules: Rules) -> str | dict[str, Any]:
    """A preset's name when the rules are a preset, else every setting."""
    for name, preset in PRESETS.items():
        if preset == rules:
            return name
    settings = rules.to_dict()
    settings["score_reset_at"] = list(settings["score_reset_at"])
    return settings


def _codes(cards) -> list[str]:
    return [card_code(c) for c in cards]


def _event_to_json(event: Event) -> dict[str, Any]:
    if event.kind == DISCARD:
        return {"player": event.player, "discard": _codes(event.cards),
                "draw": "deck" if event.drew == DECK else card_code(event.drew)}
    if event.kind == SLAM:
        return {"player": event.player, "slamdown": card_code(event.cards[0])}
    if event.kind == RESHUFFLE:
        return {"reshuffle": _codes(event.cards)}
    if event.kind == STATE:
        return {"player": event.player, "holds": _codes(event.cards), "hidden": event.drew}
    return {"player": event.player, "yaniv": True}


def view_to_state(view: PlayerView, *, history: bool = True) -> dict[str, Any]:
    """The protocol state of a player's view (with the round's history unless ``history=False``)."""
    dead = view.pile[: len(view.pile) - len(view.top.cards)]
    state: dict[str, Any] = {
        "protocol": PROTOCOL,
        "rules": rules_to_json(view.rules),
        "seat": view.player,
        "to_move": view.current,
        "phase": view.phase,
        "pending": None if view.pending is None else card_code(view.pending),
        "hand": _codes(view.hand),
        "pile": {"top": _codes(view.top.cards), "drawable": _codes(view.top.drawable), "dead": _codes(dead)},
        "deck_size": view.deck_size,
        "turn": view.turn,
        "round": view.round_number,
        "players": [
            {"score": view.scores[q], "hand_size": view.hand_sizes[q], "in_game": view.alive[q],
             "known": _codes(sorted(view.known[q]))}
            for q in range(view.num_players)
        ],
    }
    if history:
        state["history"] = [_event_to_json(e) for e in view.events]
    return state


def state_for(game: Game, player: int, *, history: bool = True) -> dict[str, Any]:
    """The protocol state of ``player`` in a game in progress."""
    if game.is_over:
        raise ProtocolError("the game is over: there is no state to decide from")
    return view_to_state(game.view(player), history=history)


def move_to_json(move: Move) -> dict[str, Any]:
    """The protocol form of an engine move."""
    if move.kind == DISCARD:
        return {"action": "discard", "cards": _codes(move.cards),
                "draw": "deck" if move.draw == DECK else card_code(move.draw)}
    if move.kind == CALL:
        return {"action": "yaniv"}
    if move.kind == SLAM:
        return {"action": "slamdown"}
    if move.kind == KEEP_CARD:
        return {"action": "keep"}
    raise ProtocolError(f"not a move: {move!r}")


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


def _spellings() -> dict[str, int]:
    """Every accepted spelling of every card, upper-cased: the codes, "10" for "T", suit symbols, "JK"."""
    table = {"JK": JOKERS[0]}
    for card in range(NUM_CARDS):
        code = card_code(card)
        table[code] = card
        if card < NUM_STANDARD:
            rank, suit = code[:-1], code[-1]
            for r in (rank, "10") if rank == "T" else (rank,):
                for s in (suit, "♣♦♥♠"["CDHS".index(suit)]):
                    table[r + s] = card
    return table


CARD_SPELLINGS: Final = _spellings()
_LONGEST_SPELLING: Final = max(map(len, CARD_SPELLINGS))


def _card(value: Any, where: str) -> int:
    if not isinstance(value, str):
        raise ProtocolError(f"{where}: a card is a string such as \"5H\" or \"JK1\", got {quote(value)}")
    card = CARD_SPELLINGS.get(value.upper()) if len(value) <= _LONGEST_SPELLING else None
    if card is None:
        raise ProtocolError(
            f"{where}: unknown card {value[:MAX_QUOTE]!r}: expected a rank (A 2-10 T J Q K) then a suit "
            "(C D H S or ♣ ♦ ♥ ♠), or JK1/JK2 for a joker, with nothing around it"
        )
    return card


def _cards(value: Any, where: str, most: int = NUM_CARDS, place: str = "the deck") -> tuple[int, ...]:
    """A list of distinct cards of at most ``most`` (checked before any card is read)."""
    if not isinstance(value, list):
        raise ProtocolError(f"{where}: expected a list of cards, got {quote(value)}")
    if len(value) > most:
        raise ProtocolError(f"{where}: {len(value)} cards, more than {place} holds ({most})")
    cards = tuple(_card(v, f"{where}[{i}]") for i, v in enumerate(value))
    if len(set(cards)) != len(cards):
        twice = sorted({c for c in cards if cards.count(c) > 1})
        raise ProtocolError(f"{where} names {', '.join(_codes(twice))} twice")
    return cards


def _int(value: Any, where: str, minimum: int, maximum: int = MAX_NUMBER) -> int:
    if type(value) is not int or not minimum <= value <= maximum:
        raise ProtocolError(f"{where}: expected an integer from {minimum} to {maximum}, got {quote(value)}")
    return value


def _names(names: list[str]) -> str:
    """Some names from the input, for a message: each cut short, at most five."""
    shown = [quote(str(n))[1:-1] if len(str(n)) > 40 else str(n) for n in names[:5]]
    return ", ".join(shown) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _object(value: Any, where: str, keys: tuple[str, ...], required: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ProtocolError(f"{where}: expected a JSON object, got {quote(value)}")
    unknown = sorted(set(value) - set(keys), key=str)
    if unknown:
        raise ProtocolError(f"{where}: unknown key(s) {_names(unknown)}; known: {', '.join(keys)}")
    missing = [k for k in required if k not in value]
    if missing:
        raise ProtocolError(f"{where}: missing key(s) {', '.join(missing)}")
    return value


def _rule_value(name: str, value: Any) -> Any:
    """One setting of a rules object, its size checked (``Rules`` checks the rest by name)."""
    where = f"rules.{name}"
    if name == "preset":
        if not isinstance(value, str):
            raise ProtocolError(f"{where}: expected a preset name ({', '.join(PRESETS)}), got {quote(value)}")
        return value
    if isinstance(value, list):
        if len(value) > MAX_RULE_LIST:
            raise ProtocolError(f"{where}: a list of {len(value)} values, longer than the limit of {MAX_RULE_LIST}")
        return tuple(_rule_value(name, v) for v in value)
    if isinstance(value, (dict, NumberTooLarge)) or (type(value) in (int, float) and abs(value) > MAX_NUMBER):
        raise ProtocolError(f"{where}: got {quote(value)}; {RULE_FIELDS[name].metadata['allowed']}, "
                            f"at most {MAX_NUMBER}")
    if isinstance(value, str) and len(value) > MAX_QUOTE:
        raise ProtocolError(f"{where}: got {quote(value)}; {RULE_FIELDS[name].metadata['allowed']}")
    return value


def rules_from_json(value: Any) -> Rules:
    """Rules from a preset name or an object of settings (with an optional "preset" base, a name).

    Every setting is checked by name: its kind and range by ``Rules``, its size (numbers at most
    ``MAX_NUMBER``, lists at most ``MAX_RULE_LIST`` long, no objects) here first.
    """
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(RULE_FIELDS) - {"preset"}, key=str)
        if unknown:
            raise ProtocolError(f"rules: unknown rule setting(s) {_names(unknown)}; known: preset, "
                                f"{', '.join(RULE_FIELDS)}")
        value = {name: _rule_value(name, v) for name, v in value.items()}
    elif not isinstance(value, str):
        raise ProtocolError(f"rules: expected a preset name or an object of settings, got {quote(value)}")
    try:
        return get_rules(value)
    except (ValueError, TypeError) as error:
        raise ProtocolError(f"rules: {error}") from None


def _top_group(cards: tuple[int, ...], rules: Rules) -> Group:
    """The pile's top group as the engine holds it: its kind, canonical order and drawable cards."""
    try:
        kind, ordered = classify(cards, rules)
    except ValueError as error:
        # A slamdown can make a set one card longer than a discard may be.
        naturals = sorted(c for c in cards if c < NUM_STANDARD)
        jokers = sorted(c for c in cards if c >= NUM_STANDARD)
        ranks = {RANK[c] for c in naturals}
        if not (rules.slamdown and len(cards) == rules.max_set_size + 1 and len(ranks) == 1 and rules.jokers_in_sets):
            raise ProtocolError(f"pile.top is not a group that can lie on the pile: {error}") from None
        kind, ordered = SET, tuple(naturals) + tuple(jokers)
    return Group(ordered, kind, -1, drawable_cards(kind, ordered, rules))


def _history(value: Any, n: int) -> list[Event]:
    if not isinstance(value, list):
        raise ProtocolError(f"history: expected a list of events, got {quote(value)}")
    events = []
    reshuffles = 0
    for i, item in enumerate(value):
        where = f"history[{i}]"
        if not isinstance(item, Mapping):
            raise ProtocolError(f"{where}: expected a JSON object, got {quote(item)}")
        if "reshuffle" in item:
            _object(item, where, ("reshuffle",), ("reshuffle",))
            reshuffles += 1
            if reshuffles > MAX_RESHUFFLES:
                raise ProtocolError(f"{where}: more than {MAX_RESHUFFLES} reshuffles in one round")
            cards = _cards(item["reshuffle"], f"{where}.reshuffle")
            if not cards:
                raise ProtocolError(f"{where}.reshuffle: a reshuffle moves at least one card")
            events.append(Event(RESHUFFLE, -1, tuple(sorted(cards))))
            continue
        player = _int(item.get("player"), f"{where}.player", 0, n - 1)
        if "discard" in item:
            _object(item, where, ("player", "discard", "draw"), ("player", "discard", "draw"))
            cards = _cards(item["discard"], f"{where}.discard")
            draw = DECK if item["draw"] == "deck" else _card(item["draw"], f"{where}.draw")
            events.append(Event(DISCARD, player, cards, draw))
        elif "slamdown" in item:
            _object(item, where, ("player", "slamdown"), ("player", "slamdown"))
            events.append(Event(SLAM, player, (_card(item["slamdown"], f"{where}.slamdown"),)))
        elif "holds" in item:
            _object(item, where, ("player", "holds", "hidden"), ("player", "holds", "hidden"))
            cards = _cards(item["holds"], f"{where}.holds", MAX_HAND, "a hand")
            events.append(Event(STATE, player, cards, _int(item["hidden"], f"{where}.hidden", 0, MAX_HAND)))
        else:
            raise ProtocolError(
                f"{where}: an event is a discard, a slamdown or a reshuffle, got {quote(item)}"
            )
    return events


def view_from_state(state: Any) -> PlayerView:
    """Read and check a protocol state; ProtocolError naming the first problem found.

    Checks the shape of every field, then that the position can exist: every card of the deck is in
    exactly one place (the player's hand, the pile, another player's known cards, or unseen), the
    unseen cards fill exactly the other hands and the deck, hand sizes fit the rules, and the
    drawable cards are the ones the rules allow.
    """
    state = _object(state, "state", STATE_KEYS, REQUIRED_KEYS)
    if state.get("protocol", PROTOCOL) != PROTOCOL:
        raise ProtocolError(f"protocol: this reader speaks {PROTOCOL!r}, not {quote(state['protocol'])}")
    rules = rules_from_json(state["rules"])
    players = state["players"]
    if not isinstance(players, list) or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise ProtocolError(
            f"players: expected a list of {MIN_PLAYERS} to {MAX_PLAYERS} seats, got {quote(players)}"
        )
    n = len(players)
    seat = _int(state["seat"], "seat", 0, n - 1)
    current = _int(state["to_move"], "to_move", 0, n - 1)
    scores, sizes, alive, known = [], [], [], []
    for q, entry in enumerate(players):
        where = f"players[{q}]"
        _object(entry, where, PLAYER_KEYS, PLAYER_KEYS)
        in_game = entry["in_game"]
        if type(in_game) is not bool:
            raise ProtocolError(f"{where}.in_game: expected true or false, got {quote(in_game)}")
        if in_game and type(entry["score"]) is int and rules.score_limit < entry["score"] <= MAX_NUMBER:
            raise ProtocolError(f"{where}.score: {entry['score']} is over the score limit {rules.score_limit}, "
                                "but the seat is still in the game")
        scores.append(_int(entry["score"], f"{where}.score", 0))
        alive.append(in_game)
        size = _int(entry["hand_size"], f"{where}.hand_size", 0, rules.hand_size)
        if in_game and size == 0:
            raise ProtocolError(f"{where}.hand_size: a seat in the game holds at least one card")
        if not in_game and size:
            raise ProtocolError(f"{where}.hand_size: a seat out of the game holds no cards, not {size}")
        sizes.append(size)
        cards = _cards(entry["known"], f"{where}.known", rules.hand_size, "a hand")
        if len(cards) > size:
            raise ProtocolError(f"{where}.known lists {len(cards)} cards but the seat holds {size}")
        known.append(frozenset(cards))
    if sum(alive) < 2:
        raise ProtocolError("players: at least two seats must be in the game")
    if not alive[seat]:
        raise ProtocolError(f"seat {seat} is out of the game: it has no state to decide from")
    if not alive[current]:
        raise ProtocolError(f"to_move: seat {current} is out of the game")

    phase = state["phase"]
    if phase not in (PLAY, SLAMDOWN_PHASE):
        raise ProtocolError(f"phase: expected \"play\" or \"slamdown\", got {quote(phase)}")
    if phase == SLAMDOWN_PHASE and not rules.slamdown:
        raise ProtocolError("phase: \"slamdown\" but these rules have no slamdown")
    hand = _cards(state["hand"], "hand", rules.hand_size, "a hand")
    if len(hand) != sizes[seat]:
        raise ProtocolError(f"hand holds {len(hand)} cards but players[{seat}].hand_size is {sizes[seat]}")
    if not known[seat] <= set(hand):
        missing = sorted(known[seat] - set(hand))
        raise ProtocolError(f"players[{seat}].known lists {', '.join(_codes(missing))}, which is not in hand")
    pending_value = state.get("pending")
    pending = None if pending_value is None else _card(pending_value, "pending")
    if phase == SLAMDOWN_PHASE and current == seat:
        if pending is None:
            raise ProtocolError("pending: the slamdown phase on the player's own turn needs the drawn card")
        if pending not in hand:
            raise ProtocolError(f"pending: {card_code(pending)} is not in hand")
    elif pending is not None:
        raise ProtocolError("pending: only the player deciding a slamdown has a pending card")

    pile = _object(state["pile"], "pile", PILE_KEYS, ("top", "dead"))
    top_cards = _cards(pile["top"], "pile.top")
    if not top_cards:
        raise ProtocolError("pile.top: the pile always has a group on top")
    top = _top_group(top_cards, rules)
    if "drawable" in pile:
        drawable = _cards(pile["drawable"], "pile.drawable")
        if set(drawable) != set(top.drawable):
            raise ProtocolError(
                f"pile.drawable lists {' '.join(_codes(drawable)) or 'nothing'}, but under these rules the cards "
                f"that may be drawn from {' '.join(_codes(top.cards))} are {' '.join(_codes(top.drawable))}"
            )
    dead = _cards(pile["dead"], "pile.dead")
    deck_size = _int(state["deck_size"], "deck_size", 0)
    turn = _int(state["turn"], "turn", 0)
    round_number = _int(state.get("round", 1), "round", 1)

    # Every card in one place, and the places add up to the deck.
    full = set(deck_cards(rules.jokers))
    places: dict[int, str] = {}
    for where, cards in [("hand", hand), ("pile.top", top_cards), ("pile.dead", dead)] + [
        (f"players[{q}].known", sorted(known[q])) for q in range(n) if q != seat
    ]:
        for c in cards:
            if c not in full:
                raise ProtocolError(
                    f"{where}: {card_code(c)} is not in the deck under these rules ({rules.jokers} jokers)"
                )
            if c in places:
                raise ProtocolError(f"{card_code(c)} is in two places: {places[c]} and {where}")
            places[c] = where
    hidden_cards = sum(sizes[q] - len(known[q]) for q in range(n) if q != seat)
    unseen = len(full) - len(places)
    if unseen != hidden_cards + deck_size:
        raise ProtocolError(
            f"the cards do not add up: {len(full)} in the deck, {len(places)} placed, so {unseen} unseen, but the "
            f"other hands hide {hidden_cards} and deck_size is {deck_size}"
        )

    if "history" in state:
        events = tuple(_history(state["history"], n))
    else:  # the round joined in progress: each seat's known and hidden cards, one epoch
        events = tuple(
            Event(STATE, q, tuple(sorted(known[q])), sizes[q] - len(known[q])) for q in range(n) if alive[q]
        )
    view = PlayerView(
        player=seat, rules=rules, phase=phase, current=current, hand=tuple(sorted(hand, key=SORT_KEY.__getitem__)),
        pending=pending, top=top, pile=tuple(dead) + top.cards, events=events, known=tuple(known),
        hand_sizes=tuple(sizes), scores=tuple(scores), alive=tuple(alive), deck_size=deck_size, turn=turn,
        round_number=round_number, legal_moves=(),
    )
    return view


def game_from_state(state: Any, rng: np.random.Generator | int | None = None) -> Game:
    """A full game consistent with ``state``, the cards its player cannot see sampled with ``rng``.

    Observations, masks and the legal moves of the state's player do not depend on the sample.
    """
    view = view_from_state(state)
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    try:
        return Game.from_view(view, rng)
    except ValueError as error:
        raise ProtocolError(f"history: {error}") from None


def move_from_json(value: Any, rules: Rules | None = None) -> Move:
    """Read a protocol move (a discard's cards may come in any order, and the engine's order is used;
    except a run with jokers under ``discarder_places_jokers``: low to high, each joker where it stands)."""
    move = _object(value, "move", ("action", "cards", "draw"), ("action",))
    action = move["action"]
    if action not in ACTIONS:
        raise ProtocolError(f"move.action: expected one of {', '.join(ACTIONS)}, got {quote(action)}")
    if action != "discard":
        extra = sorted(set(move) - {"action"})
        if extra:
            raise ProtocolError(f"move: {action!r} takes no {', '.join(extra)}")
        return {"yaniv": YANIV, "slamdown": SLAMDOWN, "keep": KEEP}[action]
    if "cards" not in move or "draw" not in move:
        raise ProtocolError("move: a discard needs \"cards\" and \"draw\"")
    cards = _cards(move["cards"], "move.cards")
    draw = DECK if move["draw"] == "deck" else _card(move["draw"], "move.draw")
    try:
        cards = classify(cards, get_rules(rules))[1]
    except ValueError as error:
        raise ProtocolError(f"move.cards: {error}") from None
    return Move(DISCARD, cards, draw)


def apply_move(game: Game, move: Any) -> Move:
    """Apply a protocol move (a dict or an engine Move) for the player to move; returns the engine move.

    An illegal move raises ProtocolError naming the reason and leaves the game untouched.
    """
    if not isinstance(move, Move):
        move = move_from_json(move, game.rules)
    try:
        game.apply(move)
    except ValueError as error:
        raise ProtocolError(f"illegal move {json.dumps(move_to_json(move))}: {error}") from None
    return move


__all__ = [
    "PROTOCOL", "ProtocolError", "apply_move", "game_from_state", "move_from_json", "move_to_json",
    "rules_from_json", "rules_to_json", "schema", "state_for", "view_from_state", "view_to_state",
]
