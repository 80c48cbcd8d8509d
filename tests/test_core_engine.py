"""The compiled core's rules against the reference engine (``yaniv.game``), move by move.

Every rule set of ``core_support.tables()`` (the presets, the house-rule sets, 2 to 8 players)
is played side by side by the Python ``Game`` and a core row: before each move the legal action
ids must be the same list in the same order, and after it every field of the state (hands, deck
order, pile, known cards, scores, the round's result, the phase, who moves). Shuffles come from
different generators: each reshuffle's cards and each deal's hand sizes are compared, then the
Python game adopts the core's order (``core_support.SideBySide``).

The CI run covers every table; the sweep over 10^5 positions and more runs with
``YANIV_LONG_TESTS=1``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from core_support import RULE_SETS, SideBySide, positions, tables

from agents.baselines.heuristic import HeuristicAgent
from yaniv import Game
from yaniv.cards import NUM_CARDS
from yaniv_env.core import engine as E
from yaniv_env.core import layout as L

LONG = os.environ.get("YANIV_LONG_TESTS") == "1"
TABLES = tables()


COMPARED = {"random": 0, "heuristic": 0}  # moves compared this session, by who chose them (the sweep's figure)


def play_side_by_side(game: Game, seed: int, moves: int, chooser, kind: str = "random") -> int:
    """Play ``moves`` moves (or to the game's end) on both engines, comparing after each; the count."""
    both = SideBySide(game, seed)
    played = 0
    while not game.is_over and played < moves:
        python, core = both.legal_actions()
        assert python == core, f"legal actions differ at turn {game.turn}: python {python}, core {core}"
        code = both.apply(chooser(game, python))
        assert code != E.ILLEGAL
        both.check()
        played += 1
    COMPARED[kind] += played
    return played


def random_chooser(seed: int):
    rng = np.random.default_rng(seed)
    return lambda game, actions: actions[int(rng.integers(len(actions)))]


def heuristic_chooser():
    agent = HeuristicAgent(call_risk=0.1, score_weight=2.0)
    from yaniv_env.encoding import action_table

    def choose(game: Game, actions: list[int]) -> int:
        view = game.view(game.current)
        return action_table(game.rules.hand_size).to_action(agent.act(view), view)

    return choose


@pytest.mark.parametrize("name,rules,players", TABLES, ids=[f"{t[0]}-{t[2]}p" for t in TABLES])
def test_random_play_matches_the_reference(name, rules, players):
    moves = 400 if LONG else 60
    played = 0
    for seed in range(5 if LONG else 1):
        played += play_side_by_side(Game(players, rules, seed=seed), seed, moves, random_chooser(seed))
    assert played > 0


@pytest.mark.parametrize("name", list(RULE_SETS))
@pytest.mark.parametrize("players", [2, 4])
def test_heuristic_play_matches_the_reference_over_full_games(name, players):
    """Careful play reaches what random play rarely does: Yaniv calls, Assafs, resets, the limit."""
    rules = RULE_SETS[name]
    games = 4 if LONG else 1
    for seed in range(games):
        play_side_by_side(Game(players, rules, seed=100 + seed), seed, 100_000 if LONG else 300, heuristic_chooser(),
                          "heuristic")


def test_full_games_reach_every_ending():
    """Whole games, side by side, until each rule set's game ends: eliminations, first over, resets."""
    endings = set()
    for name in ("default", "german", "flat_subtract", "strict_none", "capped", "one_round"):
        game = Game(3, RULE_SETS[name], seed=7)
        play_side_by_side(game, 7, 100_000, heuristic_chooser(), "heuristic")
        assert game.is_over
        endings.add(RULE_SETS[name].game_end)
    assert endings == {"elimination", "first_over", "one_round"}


def test_illegal_actions_are_refused_and_leave_the_row_untouched():
    rules = RULE_SETS["slamdown"]
    buf = np.zeros(L.MAX_DISCARDS, dtype=np.int64)
    out = np.zeros(1024, dtype=np.int64)
    checked = 0
    for game in positions(rules, 3, 40, seed=3):
        row = L.from_game(game)
        r = np.array([E.seed_rng(0)], dtype=np.uint64)
        legal = set(out[: E.legal_actions(row, out, buf)].tolist())
        size = (2**rules.hand_size - 1) * 6 + 3
        for action in [-1, size, size + 50, *range(size)]:
            if action in legal:
                continue
            before, state = row.copy(), r.copy()
            assert E.apply_action(row, r, action, buf) == E.ILLEGAL
            assert np.array_equal(row, before) and np.array_equal(r, state)
            checked += 1
    assert checked > 1000


def test_the_mask_is_the_legal_actions():
    buf = np.zeros(L.MAX_DISCARDS, dtype=np.int64)
    out = np.zeros(1024, dtype=np.int64)
    for name, rules, players in TABLES[::5]:
        mask = np.zeros((2**rules.hand_size - 1) * 6 + 3, dtype=np.int8)
        for game in positions(rules, players, 20, seed=1):
            row = L.from_game(game)
            E.action_mask(row, mask, buf)
            k = E.legal_actions(row, out, buf)
            assert sorted(np.flatnonzero(mask).tolist()) == sorted(out[:k].tolist())


def conserved(row: np.ndarray) -> list[int]:
    """Every card of the deck where the row holds it: hands, deck, dead, top (each once)."""
    cards = []
    for q in range(int(row[L.PLAYERS])):
        cards += row[L.HAND + q * L.HAND_ROOM : L.HAND + q * L.HAND_ROOM + row[L.HAND_LEN + q]].tolist()
    cards += row[L.DECK : L.DECK + row[L.DECK_LEN]].tolist()
    cards += np.flatnonzero(row[L.DEAD : L.DEAD + NUM_CARDS]).tolist()
    cards += row[L.TOP : L.TOP + row[L.TOP_LEN]].tolist()
    return sorted(cards)


@pytest.mark.parametrize("name", ["default", "one_joker_7", "no_jokers_4", "wild_sets_ends"])
def test_core_deals_are_whole_sorted_and_seeded(name):
    rules = RULE_SETS[name]
    full = list(range(52 + rules.jokers))
    rows = L.new_rows(3)
    for row in rows:
        L.write_rules(row, rules)
    seeds = [np.array([E.seed_rng(s)], dtype=np.uint64) for s in (5, 5, 6)]
    for row, r in zip(rows, seeds):
        E.new_game(row, r, 3, 0, 1)
        assert conserved(row) == full
        for q in range(3):
            hand = row[L.HAND + q * L.HAND_ROOM : L.HAND + q * L.HAND_ROOM + row[L.HAND_LEN + q]]
            assert len(hand) == rules.hand_size
            assert list(hand) == sorted(hand, key=lambda c: L.CARD_KEY[c])
            assert row[L.TOTAL + q] == L.CARD_POINTS[hand].sum()
        assert row[L.CURRENT] == 1 and row[L.ROUND] == 1
    assert np.array_equal(rows[0], rows[1]), "the same seed deals the same game"
    assert not np.array_equal(rows[0], rows[2])


def test_random_play_keeps_every_card_and_ends_every_game():
    """Invariants over whole random games on the core alone, every table: each card in exactly one
    place after every move, hands sorted, totals right, and the game ends."""
    buf = np.zeros(L.MAX_DISCARDS, dtype=np.int64)
    out = np.zeros(1024, dtype=np.int64)
    for i, (name, rules, players) in enumerate(TABLES):
        row = L.new_rows(1)[0]
        L.write_rules(row, rules)
        r = np.array([E.seed_rng(i)], dtype=np.uint64)
        E.new_game(row, r, players, 0, 0)
        full = list(range(52 + rules.jokers))
        for turn in range(20_000):
            k = E.legal_actions(row, out, buf)
            code = E.apply_action(row, r, out[E.below(r, k)], buf)
            assert code != E.ILLEGAL
            if turn % 7 == 0 or code != E.TURN_ON:
                assert conserved(row) == full
            if code == E.GAME_OVER:
                break
        if rules.max_turns is None:
            assert row[L.PHASE] == L.PHASE_OVER, f"{name} {players}p: no end after 20,000 turns"
        else:  # random play rarely calls before the cap, and capped rounds score nothing
            assert row[L.ROUNDS] > 100


def test_the_jit_cache_folder_follows_every_source_a_kernel_can_depend_on(tmp_path):
    """numba keys a cached kernel on its own file only; the package points the cache at a folder
    named by a hash of the core, ``yaniv`` and the encoding, so a change to any of them (a kernel in
    batch.py inlines engine.py; yaniv's constants are frozen into machine code) is never loaded
    stale. A user's NUMBA_CACHE_DIR wins."""
    import subprocess
    import sys
    from pathlib import Path

    import yaniv_env.core as core

    names = {(p.parent.name, p.name) for p in core._sources()}
    for module in ("engine.py", "layout.py", "bots.py", "observe.py", "search.py", "batch.py"):
        assert ("core", module) in names
    assert ("yaniv", "cards.py") in names and ("yaniv", "rules.py") in names and ("yaniv_env", "encoding.py") in names
    code = "import yaniv_env.core, numba; print(numba.config.CACHE_DIR)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    ours = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    folder = Path(ours.stdout.strip())
    assert folder.parent == tmp_path / "yaniv-rl" / "numba" and len(folder.name) == 16
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    theirs = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert theirs.stdout.strip() == str(tmp_path / "mine")


@pytest.mark.skipif(not LONG, reason="the long sweep runs with YANIV_LONG_TESTS=1")
def test_the_long_sweep_compared_over_100_000_positions():
    """Last in the file: the moves the side-by-side tests above compared (run the whole file)."""
    if not COMPARED["random"]:
        pytest.skip("run the whole file: the sweep is the tests above")
    total = sum(COMPARED.values())
    print(f"\nside by side: {total:,} moves compared ({COMPARED['random']:,} random, {COMPARED['heuristic']:,} "
          f"heuristic) over {len(TABLES)} tables, every one identical")
    assert total >= 100_000
