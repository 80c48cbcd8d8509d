"""One game played on the compiled core, with a Python ``yaniv.Game`` of the same position on demand.

``raw_env`` steps its game here: the core row is the state, so a turn costs a compiled
transition, observation and mask; the Python ``Game`` that frontends, renderers and agents read
(``PlayerView``s, the event record, ``RoundResult``s) is brought up to date only when asked for
(``Mirror.game``), by replaying the actions played since; from then on it follows every move,
since whoever asked for it may keep it (the environment's ``game`` attribute stays live).

    mirror = Mirror(Game(3, rules, seed=1), seed=1)   # the core row starts from the game's deal
    code = mirror.apply(action)                        # engine.TURN_ON / ROUND_OVER / GAME_OVER / ILLEGAL
    mirror.game.view(0)                                # the same position, as a yaniv.Game

Contract: ``mirror.game`` always holds the row's position (``layout.position`` of both is equal:
the differential tests check it). The core draws its shuffles from its own generator (seeded
with ``seed``), so where a move reshuffles the deck or a round ends and the next is dealt, the
replay gives the Python game the core's cards (the reshuffled deck in the core's order; the new
hands, deck and face-up card); everything else it derives itself. An illegal action leaves both
untouched. ``round_rewards``-style figures and the final ranking are read off the row
(``round_points``, ``final_ranks``), so an episode can end without the replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from yaniv.game import Game
from yaniv.melds import SINGLE, Group
from yaniv_env.core import engine as E
from yaniv_env.core import layout as L
from yaniv_env.core import observe as core_observe
from yaniv_env.encoding import action_table

_DEAL, _DECK = 0, 1


class Mirror:
    """A core row and the Python ``Game`` of the same position (see the module docstring)."""

    __slots__ = ("row", "rng", "table", "over", "current", "_game", "_log", "_buf", "_obs_buf", "_live")

    def __init__(self, game: Game, seed: int) -> None:
        self.row = L.from_game(game)
        self.rng = np.array([E.seed_rng(seed)], dtype=np.uint64)
        self.table = action_table(game.rules.hand_size)
        self._game = game
        self._log: list[tuple[int, Any]] = []  # actions played on the row since the game was last brought up to date
        self._buf = np.zeros(L.MAX_DISCARDS, dtype=np.int64)
        self._obs_buf = core_observe.scratch()
        self._live = False  # once the game has been handed out, it is kept up to date move by move
        self.over = bool(self.row[L.PHASE] == L.PHASE_OVER)  # the game is over
        self.current = int(self.row[L.CURRENT])  # the seat to move

    def apply(self, action: int) -> int:
        """Play ``action`` on the row; the engine's code (``ILLEGAL``: nothing changed)."""
        row = self.row
        pools = row[L.POOLS]
        code = E.apply_action(row, self.rng, action, self._buf)
        if code == E.ILLEGAL:
            return code
        self.current = int(row[L.CURRENT])
        self.over = code == E.GAME_OVER
        shuffle: Any = None
        if code == E.ROUND_OVER:  # the next round is dealt: its hands, deck and face-up card
            n = int(row[L.PLAYERS])
            shuffle = (_DEAL, [row[L.HAND + q * L.HAND_ROOM : L.HAND + q * L.HAND_ROOM + row[L.HAND_LEN + q]].tolist()
                               for q in range(n)], row[L.DECK : L.DECK + row[L.DECK_LEN]].tolist(), int(row[L.TOP]))
        elif row[L.POOLS] != pools:
            shuffle = (_DECK, row[L.DECK : L.DECK + row[L.DECK_LEN]].tolist())
        self._log.append((action, shuffle))
        if self._live:
            self.game  # noqa: B018 (a reader holds the game: keep it current)
        return code

    @property
    def game(self) -> Game:
        """The Python game of the row's position. Brought up to date on access; from the first access
        on it is kept up to date after every move, since whoever asked may hold on to it."""
        self._live = True
        game = self._game
        for action, shuffle in self._log:
            game.apply(self.table.to_move(action, game.view(game.current)))
            if shuffle is not None:
                _adopt(game, shuffle)
        self._log.clear()
        return game

    def observe(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> None:
        """Write ``seat``'s observation into ``obs`` and its action mask into ``mask`` (zeros when it is
        not to move), both zeroed first: one compiled call."""
        _observe_and_mask(self.row, seat, obs, mask, self._obs_buf, self._buf)


@njit(cache=True)
def _observe_and_mask(s, seat, obs, mask, obs_buf, buf):
    core_observe.observe(s, seat, obs, obs_buf)
    if seat == s[L.CURRENT] and s[L.PHASE] != L.PHASE_OVER:
        E.action_mask(s, mask, buf)
    else:
        mask[:] = 0


def _adopt(game: Game, shuffle: Any) -> None:
    """Give ``game`` the core's cards where the two generators differ (see the module docstring)."""
    if shuffle[0] == _DECK:
        deck = shuffle[1]
        if sorted(deck) != sorted(game.deck):
            raise RuntimeError("the core and the Python engine reshuffled different cards: a bug in yaniv_env.core")
        game.deck = deck
    else:
        _, hands, deck, face_up = shuffle
        if [len(h) for h in hands] != [len(h) for h in game.hands]:
            raise RuntimeError("the core and the Python engine dealt different hand sizes: a bug in yaniv_env.core")
        game.hands = hands
        game.totals = [int(sum(L.CARD_POINTS[c] for c in h)) for h in hands]
        game.deck = deck
        game.pile = [Group((face_up,), SINGLE, -1, (face_up,))]
    game._views = {}
    game._discards = None


def round_points(row: np.ndarray) -> tuple[list[int], list[int]]:
    """The finished round's points per seat, and the seats dealt in it (``RoundResult.points``, and the
    seats with a hand in ``RoundResult.hands``): what ``yaniv_env.aec.round_rewards`` reads."""
    n = int(row[L.PLAYERS])
    points = [int(p) for p in row[L.RES_POINTS : L.RES_POINTS + n]]
    dealt = [q for q in range(n) if row[L.RES_DEALT] >> q & 1]
    return points, dealt


def final_ranks(row: np.ndarray) -> tuple[int, ...]:
    """``yaniv.ranking.final_ranks`` of the finished game in ``row``."""
    if row[L.PHASE] != L.PHASE_OVER:
        raise ValueError("the game is not over: it has no final ranking yet")
    n = int(row[L.PLAYERS])
    winners = int(row[L.WINNERS])
    if row[L.SINGLE_ROUND] or row[L.R_GAME_END] == L.ONE_ROUND:
        capped = row[L.ROUNDS] == 0 or row[L.RES_CALLER] < 0
        keys = [(not winners >> q & 1, 0 if capped else int(row[L.RES_POINTS + q])) for q in range(n)]
    else:
        rounds = int(row[L.ROUNDS])
        out = [int(row[L.OUT_ROUND + q]) if row[L.OUT_ROUND + q] >= 0 else rounds for q in range(n)]
        keys = [(not winners >> q & 1, -out[q], int(row[L.SCORE + q])) for q in range(n)]
    return tuple(sum(other < mine for other in keys) for mine in keys)
