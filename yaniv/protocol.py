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

Cards are named as ``yaniv.card_code`` writes them ("AS", "TH", "QD", "JK1", "JK2"); reading is
lenient ("10H", "q♦" and "JK" are accepted). ``state_for(game, player)`` writes the state of any
player of a game in progress, ``apply_move(game, move)`` applies a move to a game, and
``game_from_state(state, rng)`` rebuilds a full game consistent with a state (the hidden cards
sampled), which is how every bot answers a state. A state or move that cannot be read, or that
describes an impossible position, raises ``ProtocolError`` (a ``ValueError``) naming the problem.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final, Mapping

import numpy as np

from yaniv.cards import NUM_STANDARD, RANK, SORT_KEY, card_code, deck_cards, parse_card
from yaniv.game import (
    CALL, DECK, DISCARD, KEEP, KEEP_CARD, MAX_PLAYERS, MIN_PLAYERS, PLAY, RESHUFFLE, SLAM, SLAMDOWN,
    SLAMDOWN_PHASE, STATE, YANIV, Event, Game, Move, PlayerView,
)
from yaniv.melds import MAX_SET, SET, Group, classify, drawable_cards
from yaniv.rules import PRESETS, Rules, get_rules

PROTOCOL: Final = "yaniv/1"
STATE_KEYS: Final = (
    "protocol", "rules", "seat", "to_move", "phase", "pending", "hand", "pile", "deck_size", "turn", "round",
    "players", "history",
)
REQUIRED_KEYS: Final = ("rules", "seat", "to_move", "phase", "hand", "pile", "deck_size", "turn", "players")
PLAYER_KEYS: Final = ("score", "hand_size", "in_game", "known")
PILE_KEYS: Final = ("top", "drawable", "dead")
ACTIONS: Final = ("discard", "yaniv", "slamdown", "keep")


class ProtocolError(ValueError):
    """A state or move that cannot be read, or that describes an impossible position."""


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


def _card(value: Any, where: str) -> int:
    if not isinstance(value, str):
        raise ProtocolError(f"{where}: a card is a string such as \"5H\" or \"JK1\", got {json.dumps(value)}")
    try:
        return parse_card(value)
    except ValueError as error:
        raise ProtocolError(f"{where}: {error}") from None


def _cards(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise ProtocolError(f"{where}: expected a list of cards, got {json.dumps(value)}")
    cards = tuple(_card(v, f"{where}[{i}]") for i, v in enumerate(value))
    if len(set(cards)) != len(cards):
        twice = sorted({c for c in cards if cards.count(c) > 1})
        raise ProtocolError(f"{where} names {', '.join(_codes(twice))} twice")
    return cards


def _int(value: Any, where: str, minimum: int, maximum: int | None = None) -> int:
    if type(value) is not int or value < minimum or (maximum is not None and value > maximum):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
        raise ProtocolError(f"{where}: expected an integer {bound}, got {json.dumps(value)}")
    return value


def _object(value: Any, where: str, keys: tuple[str, ...], required: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ProtocolError(f"{where}: expected a JSON object, got {json.dumps(value)[:80]}")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise ProtocolError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(keys)}")
    missing = [k for k in required if k not in value]
    if missing:
        raise ProtocolError(f"{where}: missing key(s) {', '.join(missing)}")
    return value


def rules_from_json(value: Any) -> Rules:
    """Rules from a preset name or an object of settings (with an optional "preset" base)."""
    if isinstance(value, dict) and "score_reset_at" in value and isinstance(value["score_reset_at"], list):
        value = {**value, "score_reset_at": tuple(value["score_reset_at"])}
    if not isinstance(value, (str, dict)):
        raise ProtocolError(f"rules: expected a preset name or an object of settings, got {json.dumps(value)}")
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
        if not (rules.slamdown and len(cards) == MAX_SET + 1 and len(ranks) == 1 and rules.jokers_in_sets):
            raise ProtocolError(f"pile.top is not a group that can lie on the pile: {error}") from None
        kind, ordered = SET, tuple(naturals) + tuple(jokers)
    return Group(ordered, kind, -1, drawable_cards(kind, ordered, rules))


def _history(value: Any, n: int) -> list[Event]:
    if not isinstance(value, list):
        raise ProtocolError(f"history: expected a list of events, got {json.dumps(value)[:80]}")
    events = []
    for i, item in enumerate(value):
        where = f"history[{i}]"
        if not isinstance(item, Mapping):
            raise ProtocolError(f"{where}: expected a JSON object, got {json.dumps(item)[:80]}")
        if "reshuffle" in item:
            _object(item, where, ("reshuffle",), ("reshuffle",))
            events.append(Event(RESHUFFLE, -1, tuple(sorted(_cards(item["reshuffle"], f"{where}.reshuffle")))))
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
            cards = _cards(item["holds"], f"{where}.holds")
            events.append(Event(STATE, player, cards, _int(item["hidden"], f"{where}.hidden", 0)))
        else:
            raise ProtocolError(
                f"{where}: an event is a discard, a slamdown or a reshuffle, got {json.dumps(item)[:80]}"
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
        raise ProtocolError(f"protocol: this reader speaks {PROTOCOL!r}, not {json.dumps(state['protocol'])}")
    rules = rules_from_json(state["rules"])
    players = state["players"]
    if not isinstance(players, list) or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise ProtocolError(
            f"players: expected a list of {MIN_PLAYERS} to {MAX_PLAYERS} seats, got {json.dumps(players)[:80]}"
        )
    n = len(players)
    seat = _int(state["seat"], "seat", 0, n - 1)
    current = _int(state["to_move"], "to_move", 0, n - 1)
    scores, sizes, alive, known = [], [], [], []
    for q, entry in enumerate(players):
        where = f"players[{q}]"
        _object(entry, where, PLAYER_KEYS, PLAYER_KEYS)
        scores.append(_int(entry["score"], f"{where}.score", 0))
        in_game = entry["in_game"]
        if type(in_game) is not bool:
            raise ProtocolError(f"{where}.in_game: expected true or false, got {json.dumps(in_game)}")
        alive.append(in_game)
        size = _int(entry["hand_size"], f"{where}.hand_size", 0, rules.hand_size)
        if in_game and size == 0:
            raise ProtocolError(f"{where}.hand_size: a seat in the game holds at least one card")
        if not in_game and size:
            raise ProtocolError(f"{where}.hand_size: a seat out of the game holds no cards, not {size}")
        sizes.append(size)
        cards = _cards(entry["known"], f"{where}.known")
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
        raise ProtocolError(f"phase: expected \"play\" or \"slamdown\", got {json.dumps(phase)}")
    if phase == SLAMDOWN_PHASE and not rules.slamdown:
        raise ProtocolError("phase: \"slamdown\" but these rules have no slamdown")
    hand = _cards(state["hand"], "hand")
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
    """Read a protocol move (a discard's cards may come in any order; the engine's order is used)."""
    move = _object(value, "move", ("action", "cards", "draw"), ("action",))
    action = move["action"]
    if action not in ACTIONS:
        raise ProtocolError(f"move.action: expected one of {', '.join(ACTIONS)}, got {json.dumps(action)}")
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
