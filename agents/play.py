"""Play Yaniv in a terminal against the bots.

    python -m agents.play --players 3 --bots search,runs/default/policy.npz
    yaniv-play --players 4 --bots heuristic --rules french --seed 7

You sit in seat 0 (``--seat``); the bots take the other seats in order. ``--bots`` is a
comma-separated list of agent specs, one per bot seat; if it is shorter, its last spec fills the
remaining seats; an empty list or an empty spec between commas is refused. A spec is anything
``agents.registry`` resolves (``--help`` lists them): a registered name such as ``heuristic`` or
``search:N``, or a path (an exported bot's folder, a run folder holding ``policy.npz``, a policy
file). Every spec is checked before the deal. An SB3 checkpoint (``.zip``) is a pickle, which can
run code when loaded: it is refused unless ``--trust-pickle`` is given, for files you trust
(``.npz`` weights and exported bots are safe from anyone). ``--rules``
picks a preset, ``--seed`` makes the deal and the bots repeatable (without one a seed is drawn and
printed), ``--round`` plays a single round instead of a full game.

Moves, one per line (upper or lower case; cards as ``5H``, ``10H`` or ``TH``, ``Q♦``, ``JK``/``JK1``/``JK2``):

============================  ===============================================================
``yaniv``                     call Yaniv (your hand totals at most the threshold)
``5H 5S deck`` (or ``d``)     throw 5♥ 5♠, then draw from the deck
``5H 6H 7H 9C``               throw the run 5♥ 6♥ 7♥, then take 9♣ from the pile: the last token
                              says where to draw; the thrown cards may come in any order
``slam`` / ``keep``           when the card you drew may be slammed down on your discard
``moves``                     list every legal move in this notation
``help``                      this summary; an empty line shows the table again
``quit``                      leave the game
============================  ===============================================================

A move that cannot be read or is not legal is refused with the reason and changes nothing; the
prompt repeats. So is a line longer than ``MAX_LINE`` characters (the rest of it is skipped) and
one holding bytes that are not text in the input's encoding (the command line reads them
without failing: ``errors="surrogateescape"``). The prompt ``your move>`` ends its line (and is flushed) when stdin or stdout is
not a terminal, so another program can drive the game line by line. The game ends when it is
over, on ``quit``, or at the end of input (EOF), always with exit status 0 (130 on Ctrl-C); a bad
option or bot spec exits with status 2 and one line naming the problem, before any card is dealt.
Short forms: ``y`` yaniv, ``d`` deck, ``s``/``k`` slam/keep, ``m`` moves, ``h`` or ``?`` help.

``play()`` is the same game as a function over any text streams, and returns the ``Game``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence, TextIO

import numpy as np

from agents.base import Agent
from agents.registry import make_agent, parse_spec, specs_help
from yaniv import (
    DECK, KEEP, PRESETS, SLAMDOWN, YANIV, Game, Move, Rules, card_code, card_str, cards_str, describe_event,
    describe_result,
)
from yaniv.cards import JOKERS, hand_points, parse_card
from yaniv.game import (
    CALL, DISCARD, KEEP_CARD, MAX_PLAYERS, MIN_PLAYERS, OVER, SLAM, SLAMDOWN_PHASE, Event, RoundResult,
)

PROG = "yaniv-play"
PROMPT = "your move> "
DEFAULT_BOT = "heuristic"
DECK_WORDS = ("deck", "d")
QUIT_WORDS = ("quit", "exit")
HELP_WORDS = ("help", "h", "?")
MOVES_WORDS = ("moves", "m")
MAX_LINE = 1_000  # characters in a line of input; a move needs a few dozen

HELP = """\
Moves:  yaniv                call Yaniv (hand total at most {threshold})
        5H 5S deck           throw cards, then draw: 'deck' (or 'd') or the pile card to take, e.g. 5H 5S 7C
        slam | keep          slam the drawn card down onto your discard, or keep it (when offered)
        moves  help  quit    list the legal moves, this help, leave; an empty line shows the table
Cards:  5H 10H (or TH) QD AS JK1 JK2; suits C D H S or ♣ ♦ ♥ ♠; any order, any case"""


class SetupError(ValueError):
    """A bad option or bot spec, found before the deal."""


# ----------------------------------------------------------------------------------------------
# The notation
# ----------------------------------------------------------------------------------------------


def card_text(card: int) -> str:
    """A card in the move notation: "5H", "10H", "AS", "JK1"."""
    code = card_code(card)
    return "10" + code[1:] if code.startswith("T") and card < JOKERS[0] else code


def move_text(move: Move) -> str:
    """A move in the notation ``parse_move`` reads: "yaniv", "5H 5S deck", "5H 7C", "slam", "keep"."""
    if move.kind == CALL:
        return "yaniv"
    if move.kind == SLAM:
        return "slam"
    if move.kind == KEEP_CARD:
        return "keep"
    draw = "deck" if move.draw == DECK else card_text(move.draw)
    return " ".join([*(card_text(c) for c in move.cards), draw])


def parse_move(text: str, game: Game) -> Move:
    """The legal move of the player to move that ``text`` names; ValueError saying why otherwise.

    A discard is matched to the legal moves by its set of cards and its draw, so the cards may be
    typed in any order; a joker typed as the one the player does not have is read as the other.
    What no legal move matches is tried on a copy of the game for the engine's reason.
    """
    tokens = text.replace(",", " ").split()
    if not tokens:
        raise ValueError("empty move")
    word = tokens[0].lower()
    if len(tokens) == 1 and word in ("yaniv", "y"):
        return _checked(YANIV, game)
    if len(tokens) == 1 and word in ("slam", "s", "keep", "k"):
        return _checked(SLAMDOWN if word.startswith("s") else KEEP, game)
    if game.phase == SLAMDOWN_PHASE:
        raise ValueError(f"decide on the card you drew ({card_str(game.pending)}) first: 'slam' or 'keep'")
    if len(tokens) < 2:
        raise ValueError(
            f"{text.strip()!r} is not a move: throw cards, then say where to draw, e.g. "
            f"'{card_text(game.hands[game.current][-1])} deck' (type 'help' or 'moves')"
        )
    hand = game.hands[game.current]
    cards = [_resolve_joker(parse_card(t), hand) for t in tokens[:-1]]
    if tokens[-1].lower() in DECK_WORDS:
        draw = DECK
    else:
        draw = _resolve_joker(parse_card(tokens[-1]), game.top.drawable)
        if draw in hand and draw not in game.top.drawable:
            raise ValueError(
                f"end the move with where to draw: 'deck' (or 'd') or a pile card "
                f"({_drawable_text(game)}); {card_str(draw)} is in your hand"
            )
    wanted = frozenset(cards)
    if len(wanted) == len(cards):
        for move in game.legal_moves():
            if move.kind == DISCARD and move.draw == draw and frozenset(move.cards) == wanted:
                return move
    return _checked(Move.discard(tuple(cards), draw), game)


def _checked(move: Move, game: Game) -> Move:
    """``move`` if it is legal now; else the engine's reason, found on a copy so the game stays as it is."""
    if move in game.legal_moves():
        return move
    game.copy().apply(move)  # raises with the reason
    raise ValueError(f"{move_text(move)!r} is not a legal move now (type 'moves')")  # pragma: no cover


def _resolve_joker(card: int, cards: Sequence[int]) -> int:
    # The two jokers play alike; "JK" reads as JK1, so take the one that is actually there.
    if card in JOKERS and card not in cards:
        other = JOKERS[1] if card == JOKERS[0] else JOKERS[0]
        if other in cards:
            return other
    return card


def _undecodable(line: str) -> bool:
    """Whether ``line`` holds bytes its stream could not decode (``errors="surrogateescape"``)."""
    return any("\udc80" <= ch <= "\udcff" for ch in line)


def _drawable_text(game: Game) -> str:
    drawable = cards_str(game.top.drawable)
    return f"may draw: {drawable} or the deck" if drawable else "may draw: the deck only"


# ----------------------------------------------------------------------------------------------
# The bots
# ----------------------------------------------------------------------------------------------


def bot_specs(bots: str | Sequence[str], players: int, *, trust_pickle: bool = False) -> list[str]:
    """One checked agent spec per bot seat, in seat order, each as ``NAME[:ARGUMENT]`` (a path as the
    spec it stands for: ``agents.registry.path_spec``); ValueError naming a bad spec, an empty one,
    or a pickle-based checkpoint without ``trust_pickle``.

    A shorter list is filled with its last spec.
    """
    if isinstance(bots, str):
        specs = [s.strip() for s in bots.split(",")]
    elif isinstance(bots, Sequence) and all(isinstance(s, str) for s in bots):
        specs = [s.strip() for s in bots]
    else:
        raise ValueError(f"--bots must be agent specs (text), got {bots!r}")
    if not any(specs):
        raise ValueError(f"--bots is empty ({bots!r}): name one or more agent specs, separated by commas, "
                         f"e.g. {DEFAULT_BOT}")
    if not all(specs):
        raise ValueError(f"--bots {bots!r} holds an empty spec (number {specs.index('') + 1} of {len(specs)}): "
                         "name one agent spec per bot seat, separated by single commas")
    seats = players - 1
    if len(specs) > seats:
        raise ValueError(f"{len(specs)} bots given ({', '.join(specs)}) for {seats} bot seat(s)")
    specs += [specs[-1]] * (seats - len(specs))
    resolved = []
    for spec in specs:
        try:
            resolved.append(parse_spec(spec, trust_pickle=trust_pickle).canonical)
        except ValueError as error:
            raise ValueError(f"bad bot spec {spec!r}: {error}") from None
    return resolved


def _label(spec: str, trust_pickle: bool = False) -> str:
    """A bot's name at the table: a path argument shortened to its last part."""
    checked = parse_spec(spec, trust_pickle=trust_pickle)
    if isinstance(checked.value, Path) and checked.argument:
        return f"{checked.name}:{Path(checked.argument).name}"
    return spec


# ----------------------------------------------------------------------------------------------
# The game loop
# ----------------------------------------------------------------------------------------------


def play(
    players: int = 2,
    bots: str | Sequence[str] = DEFAULT_BOT,
    rules: str | Rules = "default",
    seed: int | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    *,
    seat: int = 0,
    single_round: bool = False,
    trust_pickle: bool = False,
) -> Game:
    """Play one game, a person at ``seat`` (moves read from ``stdin``) against bots; returns the Game.

    The game is over unless the person quit or the input ended. ``SetupError`` (a ValueError),
    before anything is printed, for a bad player count, seat, rules preset or bot spec (a
    pickle-based checkpoint is one unless ``trust_pickle``: it can run code when loaded).
    """
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    drawn_seed = seed is None
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**31)
    try:
        if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"--players must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {players!r}")
        if type(seat) is not int or not 0 <= seat < players:
            raise ValueError(f"--seat must be a seat from 0 to {players - 1}, got {seat!r}")
        game = Game(players, rules, seed=seed, single_round=single_round)
        if type(trust_pickle) is not bool:
            raise ValueError(f"trust_pickle must be True or False, got {trust_pickle!r}")
        specs = iter(bot_specs(bots, players, trust_pickle=trust_pickle))
        seeds = np.random.SeedSequence(seed).spawn(players)  # the deal and each seat: independent streams
        agents: dict[int, Agent] = {}
        labels = {seat: "you"}
        for q in range(players):
            if q != seat:
                spec = next(specs)
                agents[q] = make_agent(spec, seed=int(seeds[q].generate_state(1)[0]), trust_pickle=trust_pickle)
                labels[q] = _label(spec, trust_pickle)
    except ValueError as error:
        raise SetupError(str(error)) from None

    tty = stdin.isatty() and stdout.isatty()

    def say(text: str = "") -> None:
        stdout.write(text + "\n")
        stdout.flush()

    def ask() -> str | None:
        """The next line of input (None at its end); a line that is too long or not text is
        refused here, and asked again."""
        while True:
            try:
                line = read_line()
            except UnicodeDecodeError:  # a stream that decodes strictly (the command line's does not)
                line = "\udcff"
            if line is None or (len(line) <= MAX_LINE and not _undecodable(line)):
                return line
            if len(line) > MAX_LINE:
                say(f"  refused: the line is longer than {MAX_LINE} characters")
            else:
                encoding = str(getattr(stdin, "encoding", None) or "the input's encoding").upper()
                say(f"  refused: the line holds bytes that are not {encoding} text")

    def read_line() -> str | None:
        if tty and stdin is sys.stdin and stdout is sys.stdout:
            try:
                return input(PROMPT)
            except EOFError:
                return None
        stdout.write(PROMPT if tty else PROMPT + "\n")
        stdout.flush()
        line = stdin.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE and not line.endswith("\n"):
            while True:  # skip the rest of the overlong line, a bounded piece at a time
                rest = stdin.readline(MAX_LINE)
                if not rest or rest.endswith("\n"):
                    break
        return line if line else None

    def name(q: int) -> str:
        return f"P{q} ({labels[q]})"

    def event_line(event: Event) -> str:
        line = describe_event(event).replace("drew the deck", "drew from the deck")
        return "You" + line[len(f"P{seat}"):] if event.player == seat else line

    def show_table() -> None:
        top = game.top
        owner = "the deal" if top.player < 0 else f"P{top.player}"
        seats = "   ".join(
            f"{name(q)} {game.scores[q]}" + (f" [{game.hand_sizes[q]}]" if q != seat else "")
            if game.alive[q] else f"{name(q)} out"
            for q in range(players)
        )
        hand = game.hands[seat]
        say(f"Scores: {seats}   (deck {game.deck_size})")
        say(f"Pile:  {cards_str(top.cards)}  ({top.kind} from {owner}); {_drawable_text(game)}")
        hint = f"   you may call yaniv (≤ {game.rules.yaniv_threshold})" if game.can_call_yaniv() else ""
        say(f"Hand:  {cards_str(hand)}  = {hand_points(hand)}{hint}")
        if game.phase == SLAMDOWN_PHASE:
            say(f"You drew {card_str(game.pending)}, which fits your discard: 'slam' it down or 'keep' it?")

    def announce_round() -> None:
        say(f"\n=== Round {game.round_number}: P{game.current} starts ===")

    def show_result(result: RoundResult) -> None:
        say("--- " + describe_result(result))
        for q in range(players):
            if result.hands[q]:
                say(f"    {name(q):<20} {cards_str(result.hands[q]):<22} = {result.totals[q]}")
        if seat in result.eliminated and not game.is_over:
            say("You are out of the game; the bots play on.")

    def apply(move: Move) -> None:
        """Play a move and report what became public (and, to the person, what they drew)."""
        mover = game.current
        events, count, results = game.events, len(game.events), len(game.results)
        hand_before = list(game.hands[seat])
        game.apply(move)
        # A round's end deals a new round with a new events list; the old list still holds the
        # events of the move that ended it.
        if game.alive[seat] or game.is_over:
            for event in events[count:]:
                say(event_line(event))
        if mover == seat and move.kind == DISCARD and move.draw == DECK and len(game.results) == results:
            drawn = [c for c in game.hands[seat] if c not in hand_before]
            if drawn:
                say(f"    (you drew {card_str(drawn[0])} from the deck)")
        for result in game.results[results:]:
            show_result(result)
            if not game.is_over:
                announce_round()

    say(f"Yaniv · {game.rules.describe()} · {players} players · seed {seed}" + (" (drawn)" if drawn_seed else ""))
    say(f"You are P{seat}; bots: " + ", ".join(name(q) for q in agents) + ". Type 'help' for the notation.")
    announce_round()
    while not game.is_over:
        q = game.current
        if q != seat:
            apply(agents[q].act(game.view(q)))
            continue
        show_table()
        while True:
            line = ask()
            if line is None:
                say("\nEnd of input: the game is left unfinished.")
                return game
            word = line.strip().lower()
            if word in QUIT_WORDS:
                say("You left the game.")
                return game
            if word in HELP_WORDS:
                say(HELP.format(threshold=game.rules.yaniv_threshold))
                continue
            if word in MOVES_WORDS:
                moves = [move_text(m) for m in game.legal_moves()]
                say(f"legal moves ({len(moves)}):")
                for i in range(0, len(moves), 6):
                    say("  " + "  |  ".join(moves[i:i + 6]))
                continue
            if not word:
                show_table()
                continue
            try:
                move = parse_move(line, game)
            except ValueError as error:
                say(f"  refused: {error}")
                continue
            apply(move)
            break

    assert game.phase == OVER
    winners = ", ".join(name(q) for q in game.winners) or "nobody"
    cheer = " You win!" if seat in game.winners else ""
    say(f"\nGame over after {game.round_number} round(s). Winner: {winners}.{cheer}")
    return game


# ----------------------------------------------------------------------------------------------
# The command line
# ----------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = _Parser(prog=PROG, description=__doc__.split("\n\n")[0].strip(),
                     epilog=HELP.format(threshold="the threshold") + "\n\n" + specs_help(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2, help="seats at the table, 2 to 8 (default: 2)")
    parser.add_argument("--bots", default=DEFAULT_BOT, metavar="SPEC,...",
                        help="comma-separated agent specs for the bot seats, in order (listed below); the last one "
                             f"fills the rest (default: {DEFAULT_BOT})")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default: 0)")
    parser.add_argument("--rules", default="default", help=f"rules preset: {', '.join(PRESETS)} (default: default)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the deal and the bots (default: drawn)")
    parser.add_argument("--round", action="store_true", help="play a single round instead of a full game")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="load SB3 checkpoints (.zip, pickles that can run code): only files you trust")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):  # a terminal without the suit symbols gets "?" rather than a crash
        sys.stdout.reconfigure(errors="replace")
    if hasattr(sys.stdin, "reconfigure"):  # bytes that are not text: refused by the game, not a crash
        sys.stdin.reconfigure(errors="surrogateescape")
    try:
        play(args.players, args.bots, args.rules, args.seed, seat=args.seat, single_round=args.round,
             trust_pickle=args.trust_pickle)
    except SetupError as error:
        print(f"{PROG}: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted: the game is left unfinished.")
        return 130
    except BrokenPipeError:  # the reader went away (e.g. piped into head): nothing left to say
        sys.stdout = open(os.devnull, "w")
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
