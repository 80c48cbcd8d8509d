"""The JSON state/move protocol (yaniv.protocol): round trips, schemas, and every kind of bad input."""

from __future__ import annotations

import copy
import json

import jsonschema
import numpy as np
import pytest

from agents import make_agent
from yaniv import Game, Move, parse_cards
from yaniv.game import DISCARD
from yaniv.protocol import (
    CARD_SPELLINGS, ProtocolError, apply_move, game_from_state, move_from_json, move_to_json, parse_json, schema, state_for,
    view_from_state,
)
from yaniv.rules import get_rules
from yaniv_env.encoding import Observer

SLAM_RULES = get_rules("default").replace(slamdown=True, jokers_in_sets=True)
CONFIGS = [(2, "default"), (3, "german"), (4, "french"), (5, SLAM_RULES), (8, "default")]
STATE_SCHEMA = jsonschema.Draft202012Validator(schema("state"))
MOVE_SCHEMA = jsonschema.Draft202012Validator(schema("move"))


def positions(num_players, rules, seed, moves=120):
    """Yield (game, player) at every turn of a random game: the player to move, and a seat that waits."""
    game = Game(num_players, rules, seed=seed)
    agents = [make_agent("random", seed=seed * 10 + q) for q in range(num_players)]
    for turn in range(moves):
        if game.is_over:
            return
        yield game, game.current
        waiting = [q for q in range(num_players) if game.alive[q] and q != game.current]
        yield game, waiting[turn % len(waiting)]
        game.apply(agents[game.current].act(game.view(game.current)))


@pytest.mark.parametrize("num_players,rules", CONFIGS)
def test_states_round_trip_and_rebuild_the_same_observation(num_players, rules):
    """state_for -> JSON -> game_from_state gives the player the same view facts, moves and observation."""
    observer = Observer(get_rules(rules), num_players)
    rng = np.random.default_rng(0)
    checked = 0
    for game, q in positions(num_players, rules, seed=num_players):
        for history in (True, False):
            state = json.loads(json.dumps(state_for(game, q, history=history)))
            STATE_SCHEMA.validate(state)
            rebuilt = game_from_state(state, rng)
            mine, theirs = game.view(q), rebuilt.view(q)
            assert (theirs.hand, theirs.top, theirs.pile, theirs.known, theirs.hand_sizes, theirs.scores) == (
                mine.hand, mine.top._replace(player=-1), mine.pile, mine.known, mine.hand_sizes, mine.scores
            )
            assert theirs.legal_moves == mine.legal_moves
            seen, real = observer.observe(theirs), observer.observe(mine)
            if history:
                assert np.array_equal(seen, real)
            else:  # all but each opponent's last discard and the odds built on it
                keep = ~observer.history_entries()
                assert np.array_equal(seen[keep], real[keep])
                assert not observer.view("opponents", seen).reshape(7, -1)[:, 6].any(), "nobody has discarded"
            assert np.array_equal(observer.action_mask(theirs), observer.action_mask(mine))
            if history:  # the history replays exactly, so the state reads back to itself
                assert state_for(rebuilt, q) == state
            checked += 1
    assert checked > 100


def test_every_legal_move_round_trips_and_fits_the_schema():
    seen = set()
    for game, q in positions(4, SLAM_RULES, seed=3, moves=300):
        if q != game.current:
            continue
        for move in game.legal_moves():
            text = move_to_json(move)
            MOVE_SCHEMA.validate(text)
            assert move_from_json(json.loads(json.dumps(text)), game.rules) == move
            seen.add(move.kind)
    assert seen == {"discard", "yaniv", "slamdown", "keep"}


def test_a_discard_may_list_its_cards_in_any_order():
    rules = get_rules("default")
    move = move_from_json({"action": "discard", "cards": ["7H", "5H", "6H"], "draw": "deck"}, rules)
    assert move == Move(DISCARD, parse_cards("5H 6H 7H"))


def test_apply_move_plays_legal_moves_and_refuses_illegal_ones_untouched():
    game = Game(3, seed=5)
    before = state_for(game, 0)
    hand = game.hands[game.current]
    with pytest.raises(ProtocolError, match="does not hold"):
        apply_move(game, {"action": "discard", "cards": ["KS" if "KS" not in before["hand"] else "KH"], "draw": "deck"})
    with pytest.raises(ProtocolError, match="cannot call Yaniv"):
        apply_move(game, {"action": "yaniv"})
    assert state_for(game, 0) == before
    move = apply_move(game, move_to_json(Move.discard((hand[-1],))))
    assert game.events[-1].cards == move.cards


# A valid state to break, one field at a time: (how to break it, the words the error must use).
def _state():
    game = Game(3, seed=11)
    game.apply(game.legal_moves()[-1])  # seat 0 discards, so the pile has a top and a dead part later
    game.apply(game.legal_moves()[-1])
    return state_for(game, game.current, history=False)


def _set(path, value):
    def change(state):
        target = state
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return state
    return change


def _dup_in_hand(s):
    s["hand"][1] = s["hand"][0]
    return s


def _hand_card_in_pile(s):
    s["pile"]["dead"].append(s["hand"][0])
    return s


def _known_elsewhere(s):
    other = (s["seat"] + 1) % len(s["players"])
    s["players"][other]["known"] = [s["pile"]["top"][0]]
    return s


def _short_hand(s):
    s["hand"].pop()
    return s


def _deck_off(s):
    s["deck_size"] += 1
    return s


def _wrong_drawable(s):
    s["pile"]["drawable"] = []
    return s


def _bad_history(s):
    s["history"] = [{"player": 0, "discard": ["AS"], "draw": "2C"}]
    return s


BAD_STATES = [
    ("not an object", lambda s: ["x"], "expected a JSON object"),
    ("unknown key", _set(["hands"], []), "unknown key(s) hands"),
    ("missing key", lambda s: {k: v for k, v in s.items() if k != "turn"}, "missing key(s) turn"),
    ("wrong protocol", _set(["protocol"], "yaniv/0"), "protocol"),
    ("unknown card", _set(["hand", 0], "11H"), "unknown card '11H'"),
    ("card not a string", _set(["hand", 0], 12), "a card is a string"),
    ("duplicate card", _dup_in_hand, "twice"),
    ("card in two places", _hand_card_in_pile, "in two places: hand and pile.dead"),
    ("known card also on the pile", _known_elsewhere, "in two places"),
    ("wrong hand size", _short_hand, "hand holds 4 cards but players"),
    ("counts do not add up", _deck_off, "do not add up"),
    ("drawable against the rules", _wrong_drawable, "pile.drawable"),
    ("bad phase", _set(["phase"], "draw"), "phase"),
    ("slamdown phase without the rule", _set(["phase"], "slamdown"), "no slamdown"),
    ("pending outside a slamdown", _set(["pending"], "AS"), "pending"),
    ("seat out of range", _set(["seat"], 9), "seat: expected an integer from 0 to 2"),
    ("negative score", _set(["players", 1, "score"], -3), "players[1].score"),
    ("hand size above the rules", _set(["players", 1, "hand_size"], 6), "players[1].hand_size"),
    ("out of game with cards", _set(["players", 1, "in_game"], False), "out of the game holds no cards"),
    ("unknown rules preset", _set(["rules"], "swiss"), "unknown rules preset 'swiss'"),
    ("bad rule setting", _set(["rules"], {"yaniv_threshold": -1}), "Rules.yaniv_threshold"),
    ("a joker the rules leave out", _set(["rules"], {"jokers": 0}), "not in the deck"),
    ("top not a group", _set(["pile", "top"], ["2C", "9H"]), "pile.top is not a group"),
    ("history that does not fit", _bad_history, "history"),
]


@pytest.mark.parametrize("name,breaker,words", BAD_STATES, ids=[b[0] for b in BAD_STATES])
def test_impossible_states_are_refused_with_the_reason(name, breaker, words):
    state = _state()
    view_from_state(state)  # the unbroken state is fine
    broken = breaker(copy.deepcopy(state))
    with pytest.raises(ProtocolError) as error:
        game_from_state(broken)
    assert words in str(error.value)


BAD_MOVES = [
    ("x", "expected a JSON object"),
    ({"action": "pass"}, "move.action"),
    ({"action": "yaniv", "cards": []}, "takes no cards"),
    ({"action": "discard", "cards": ["5H"]}, "needs \"cards\" and \"draw\""),
    ({"action": "discard", "cards": ["5H", "9S"], "draw": "deck"}, "move.cards"),
    ({"action": "discard", "cards": ["5X"], "draw": "deck"}, "unknown card"),
    ({"action": "discard", "cards": ["5H"], "draw": "top"}, "unknown card 'top'"),
    ({"action": "discard", "cards": ["5H"], "draw": "deck", "why": 1}, "unknown key(s) why"),
]


@pytest.mark.parametrize("move,words", BAD_MOVES)
def test_malformed_moves_are_refused_with_the_reason(move, words):
    with pytest.raises(ProtocolError) as error:
        move_from_json(move, get_rules("default"))
    assert words in str(error.value)


def test_the_schemas_refuse_what_the_reader_refuses_in_shape():
    state = _state()
    STATE_SCHEMA.validate(state)
    for breaker in (_set(["hands"], []), _set(["hand", 0], "11H"), _dup_in_hand, _set(["phase"], "draw")):
        assert not STATE_SCHEMA.is_valid(breaker(copy.deepcopy(state)))
    assert not MOVE_SCHEMA.is_valid({"action": "discard", "cards": ["5H"]})
    assert MOVE_SCHEMA.is_valid({"action": "discard", "cards": ["5H"], "draw": "deck"})


def test_a_state_without_history_is_a_round_joined_in_progress():
    """Bots that read the history still work: the record opens with each seat's holdings."""
    state = _state()
    game = game_from_state(state, 0)
    assert [e.kind for e in game.events] == ["state"] * 3
    for spec in ("heuristic", "search:8"):
        move = make_agent(spec, seed=0).act(game.view(state["seat"]))
        assert move in game.legal_moves()


# ---------------------------------------------------------------------------------------------
# Hostile and careless input (issue 18): every bound holds, every refusal names the field
# ---------------------------------------------------------------------------------------------


def _respell(text_of):
    """Write the hand's first card as ``text_of(code)``: a sloppy spelling of a card that is there."""
    def change(state):
        state["hand"][0] = text_of(state["hand"][0])
        return state
    return change


def _nested_presets(depth):
    def change(state):
        rules = "default"
        for _ in range(depth):
            rules = {"preset": rules}
        state["rules"] = rules
        return state
    return change


HOSTILE_STATES = [
    ("a score over the limit for a seat in the game", _set(["players", 1, "score"], 5000), "players[1].score"),
    ("a turn of 10^300", _set(["turn"], 10**300), "turn: expected an integer"),
    ("a round of 10^300", _set(["round"], 10**300), "round: expected an integer"),
    ("a deck size of 10^300", _set(["deck_size"], 10**300), "deck_size: expected an integer"),
    ("a seat of 10^4000", _set(["seat"], 10**4000), "seat: expected an integer"),
    ("a score of 10^4000", _set(["players", 0, "score"], 10**4000), "players[0].score"),
    ("a rule value of 10^300", _set(["rules"], {"score_limit": 10**300}), "rules.score_limit"),
    ("a rule value of 10^4000", _set(["rules"], {"yaniv_threshold": 10**4000}), "rules.yaniv_threshold"),
    ("a list of rule values too long", _set(["rules"], {"score_reset_at": list(range(1, 10**4))}),
     "rules.score_reset_at"),
    ("a rule value that is an object", _set(["rules"], {"jokers": {"a": 1}}), "rules.jokers"),
    ("a card with a trailing space", _respell(lambda code: code + " "), "unknown card"),
    ("a card with a newline", _respell(lambda code: code.lower() + "\n"), "unknown card"),
    ("a joker written JOKER", _set(["hand", 0], "JOKER"), "unknown card 'JOKER'"),
    ("a nested preset", _set(["rules"], {"preset": {"preset": "default"}}), "rules.preset"),
    ("900-deep nested presets", _nested_presets(900), "rules.preset"),
    ("a hand of 40,000 cards", _set(["hand"], ["AS"] * 40_000), "hand:"),
    ("a known list of 40,000 cards", _set(["players", 1, "known"], ["AS"] * 40_000), "players[1].known:"),
    ("a dead pile of 40,000 cards", _set(["pile", "dead"], ["AS"] * 40_000), "pile.dead:"),
    ("a history of 20,000 reshuffles", _set(["history"], [{"reshuffle": ["AS"]}] * 20_000),
     "history[100]: more than 100 reshuffles"),
    ("a reshuffle of no cards", _set(["history"], [{"reshuffle": []}]), "history[0].reshuffle"),
    ("a history event of 40,000 cards", _set(["history"], [{"player": 0, "discard": ["AS"] * 40_000, "draw": "deck"}]),
     "history[0].discard:"),
]


@pytest.mark.parametrize("name,breaker,words", HOSTILE_STATES, ids=[b[0] for b in HOSTILE_STATES])
def test_hostile_states_are_refused_at_once_by_field(name, breaker, words):
    import time

    broken = breaker(copy.deepcopy(_state()))
    started = time.perf_counter()
    with pytest.raises(ProtocolError) as error:
        view_from_state(broken)
    assert words in str(error.value)
    assert len(str(error.value)) < 400, "an error quotes a bounded part of the input"
    assert time.perf_counter() - started < 0.5, "size checks come before any deep work"


def test_the_documented_card_spellings_are_still_read():
    """docs/protocol.md: lower case, 10 for T, suit symbols, and JK for the first joker."""
    state = _state()
    for i, code in enumerate(state["hand"]):
        spellings = ["jk"] if code == "JK1" else [code.lower(), code[:-1] + "♣♦♥♠"["CDHS".index(code[-1])]]
        spellings += [code.replace("T", "10")] if code.startswith("T") else []
        for spelling in spellings:
            assert view_from_state(_set(["hand", i], spelling)(copy.deepcopy(state))).hand == view_from_state(state).hand
    assert parse_cards("10h q♦ JK") == tuple(CARD_SPELLINGS[text] for text in ("10H", "Q♦", "JK"))


@pytest.mark.parametrize(
    "text,words",
    [
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested"),
        ("[" * 100_000, "nested"),
        ('{"seat": NaN}', "NaN"),
        ('{"seat": -Infinity}', "Infinity"),
        (b'{"seat": "\xff"}', "not UTF-8"),
        ("x" * 2000, "longer than"),
    ],
    ids=["100k lists", "100k objects", "100k unclosed", "NaN", "Infinity", "not UTF-8", "too long"],
)
def test_parse_json_refuses_what_would_break_a_reader(text, words):
    import time

    started = time.perf_counter()
    with pytest.raises(ProtocolError) as error:
        parse_json(text, max_bytes=1000 if words == "longer than" else None)
    assert words in str(error.value)
    assert time.perf_counter() - started < 1.0


def test_parse_json_names_the_field_of_a_huge_number():
    state = _state()
    text = json.dumps(state).replace(f'"turn": {state["turn"]}', '"turn": ' + "7" * 6000)
    with pytest.raises(ProtocolError, match=r"^turn: expected an integer .* a number of 6000 digits"):
        view_from_state(parse_json(text))
    with pytest.raises(ProtocolError, match=r"^turn: expected an integer .* a number too large for a float"):
        view_from_state(parse_json(text.replace("7" * 6000, "1e999")))
    assert view_from_state(parse_json(json.dumps(state))).turn == state["turn"]
    assert parse_json(b'{"strings": "[[[[", "a": [[{"b": 12345678901234567890}]]}') == {
        "strings": "[[[[", "a": [[{"b": 12345678901234567890}]]}


def test_the_documented_limits_are_the_code_s():
    """docs/protocol.md's table of limits gives the numbers the reader and the server use."""
    from pathlib import Path

    from agents.serving.server import MEMORY_BOUND_MIB
    from yaniv.cards import NUM_CARDS
    from yaniv.protocol import MAX_DEPTH, MAX_DIGITS, MAX_NUMBER, MAX_RESHUFFLES, MAX_RULE_LIST, MAX_TEXT_BYTES

    limits = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text().split("## Limits")[1]
    for phrase in (f"{MAX_TEXT_BYTES} bytes", f"{MAX_DEPTH} levels", f"{MAX_DIGITS} digits", f"at most {MAX_NUMBER}",
                   f"at most {MAX_RULE_LIST} long", f"{MAX_RESHUFFLES} reshuffles", f"a deck ({NUM_CARDS})",
                   f"under {MEMORY_BOUND_MIB} MiB"):
        assert phrase in limits, phrase
