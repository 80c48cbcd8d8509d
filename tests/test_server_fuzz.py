"""A bounded fuzz of the stdio bot server (issue 18): thousands of hostile lines through one process.

Every kind of bad line the issue lists (deep nesting, huge numbers, non-UTF-8 bytes, lines over
the limit, quadratic-sized card lists, sloppy cards, impossible scores, nested presets, wrong
types, truncated JSON, ids of every kind) is generated from a seed, with valid states from seeded
games in between. Each bad line must get exactly one JSON error naming the problem, each valid
state the move that ``load_bot`` gives in process, and the server's peak memory (VmHWM, Linux) must
stay under ``agents.serving.server.MEMORY_BOUND_MIB``, the bound docs/protocol.md states.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from agents import load_bot, make_agent
from agents.serving.server import MEMORY_BOUND_MIB
from yaniv import Game
from yaniv.protocol import MAX_TEXT_BYTES, state_for

ROOT = Path(__file__).resolve().parent.parent
BOT = "heuristic"
SEED = 18
BAD_LINES = 3000
Line = tuple[bytes, Any]  # the line, and what its reply must be: a word its error names, or a whole reply


def valid_states() -> list[dict[str, Any]]:
    """States of the player to move, from seeded games over presets and table sizes."""
    states = []
    for n, rules in ((2, "default"), (3, "german"), (4, "french"), (6, "default")):
        game = Game(n, rules, seed=n)
        agents = [make_agent("random", seed=q) for q in range(n)]
        for _ in range(30):
            if game.is_over:
                break
            states.append(json.loads(json.dumps(state_for(game, game.current))))
            game.apply(agents[game.current].act(game.view(game.current)))
    return states


def _with_field(state: dict[str, Any], path: list[Any], raw: str) -> bytes:
    """``state`` as JSON text with the field at ``path`` written as ``raw`` (any text, valid JSON or not)."""
    state = json.loads(json.dumps(state))
    target = state
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = "@@FIELD@@"
    return json.dumps(state).replace('"@@FIELD@@"', raw).encode("utf-8", "surrogatepass")


def _field_name(path: list[Any]) -> str:
    return "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).lstrip(".")


NUMBER_FIELDS = [["seat"], ["to_move"], ["deck_size"], ["turn"], ["round"], ["players", 1, "score"],
                 ["players", 0, "hand_size"], ["rules", "score_limit"], ["rules", "yaniv_threshold"],
                 ["rules", "jokers"]]
TYPED_FIELDS = {("seat",): ('"0"', "1.5", "true", "[]", "null"), ("hand",): ('"AS"', "5", "{}"),
                ("deck_size",): ('"5"', "2.0", "false"), ("turn",): ("1.5", '"x"', "[1]"),
                ("phase",): ("5", "null", '"draw"'), ("players",): ('"x"', "{}", "[]"), ("pile",): ("[]", '"x"'),
                ("players", 0, "in_game"): ("1", '"yes"'), ("pile", "top"): ('"5H"', "{}")}


def too_long(rng: np.random.Generator) -> Line:
    """A line of 1 to 4 MiB: refused while it is read, never held whole."""
    size = MAX_TEXT_BYTES + int(rng.integers(1, 3 * MAX_TEXT_BYTES))
    return b'{"hand": [' + b'"AS", ' * (size // 6) + b"]}", "longer than the limit"


def bad_lines(states: list[dict[str, Any]], rng: np.random.Generator) -> Iterator[Line]:
    """Endless hostile lines, each with the word its error must contain."""
    def state() -> dict[str, Any]:
        chosen = json.loads(json.dumps(states[int(rng.integers(len(states)))]))
        if isinstance(chosen["rules"], str):
            chosen["rules"] = {"preset": chosen["rules"]}
        return chosen

    def nesting() -> Line:
        depth = int(rng.choice([33, 100, 1000, 100_000]))
        kind = int(rng.integers(4))
        if kind == 0:
            return b"[" * depth + b"]" * depth, "nested"
        if kind == 1:
            return b'{"a":' * depth + b"1" + b"}" * depth, "nested"
        if kind == 2:
            return b"[" * depth, "nested"
        return _with_field(state(), ["rules", "preset"], "[" * depth + "]" * depth), "nested"

    def huge_number() -> Line:
        path = NUMBER_FIELDS[int(rng.integers(len(NUMBER_FIELDS)))]
        digits = int(rng.choice([8, 65, 301, 4301, 6000]))
        sign = "-" if rng.random() < 0.2 else ""
        return _with_field(state(), path, sign + "9" * digits), _field_name(path)

    def not_utf8() -> Line:
        text = json.dumps(state()).encode()
        at = int(rng.integers(len(text)))
        junk = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80", b"\xe2\x82"][int(rng.integers(5))]
        return text[:at] + junk + text[at:], "not UTF-8"

    def big_list() -> Line:
        path, words = [(["hand"], "hand:"), (["players", 1, "known"], "players[1].known:"), (["pile", "dead"], "pile.dead:"),
                       (["history"], "history")][int(rng.integers(4))]
        count = int(rng.choice([55, 1000, 40_000]))
        if path == ["history"]:
            items = [{"reshuffle": ["AS"]}] * (count + 100)
        else:
            items = ["AS"] * count
        return _with_field(state(), path, json.dumps(items)), words

    def sloppy() -> Line:
        chosen = state()
        kind = int(rng.integers(6))
        if kind == 0:
            seats = [q for q, player in enumerate(chosen["players"]) if player["in_game"]]
            seat = seats[int(rng.integers(len(seats)))]
            chosen["players"][seat]["score"] = int(rng.integers(1000, 1_000_000))
            return json.dumps(chosen).encode(), f"players[{seat}].score"
        if kind == 1:
            code = chosen["hand"][0]
            spelling = [code + " ", " " + code, code.lower() + "\n", code + "\t", "JOKER", code + code][int(rng.integers(6))]
            chosen["hand"][0] = spelling
            return json.dumps(chosen).encode(), "hand[0]: unknown card"
        if kind == 2:
            rules: Any = "default"
            for _ in range(int(rng.integers(2, 20))):
                rules = {"preset": rules}
            chosen["rules"] = rules
            return json.dumps(chosen).encode(), "rules.preset"
        if kind == 3:
            name = ["score_limit", "yaniv_threshold", "assaf_penalty_points", "score_reset_subtract"][int(rng.integers(4))]
            chosen["rules"][name] = 10 ** int(rng.integers(7, 300))
            return json.dumps(chosen).encode(), f"rules.{name}"
        if kind == 4:
            chosen["turn"] = 10 ** int(rng.integers(7, 300))
            return json.dumps(chosen).encode(), "turn:"
        chosen["rules"]["score_reset_at"] = list(range(1, int(rng.integers(33, 5000))))
        return json.dumps(chosen).encode(), "rules.score_reset_at"

    def wrong_type() -> Line:
        paths = list(TYPED_FIELDS)
        path = list(paths[int(rng.integers(len(paths)))])
        values = TYPED_FIELDS[tuple(path)]
        return _with_field(state(), path, values[int(rng.integers(len(values)))]), _field_name(path) + ":"

    def broken_json() -> Line:
        text = json.dumps(state()).encode()
        kind = int(rng.integers(3))
        if kind == 0:
            return text[: int(rng.integers(1, len(text) - 1))], "not JSON"
        if kind == 1:
            return text.replace(b'"turn": ', b'"turn": NaN, "x": ', 1), "not JSON"
        junk = bytes(rng.integers(32, 127, int(rng.integers(1, 200))).astype(np.uint8))
        return b"{'" + junk.replace(b"[", b"(").replace(b"{", b"("), "not JSON"

    def bad_id() -> Line:
        request_id = [None, 0, "abc", [1, 2], {"k": 1}][int(rng.integers(5))]
        chosen = state()
        chosen["turn"] = -1
        return json.dumps({"id": request_id, "state": chosen}).encode(), {"id": request_id, "error": "turn:"}

    kinds: list[tuple[Callable[[], Line], float]] = [
        (nesting, 1), (huge_number, 2), (not_utf8, 1), (big_list, 1), (sloppy, 2), (wrong_type, 2),
        (broken_json, 1), (bad_id, 1),
    ]
    weights = np.array([w for _, w in kinds]) / sum(w for _, w in kinds)
    while True:
        yield kinds[int(rng.choice(len(kinds), p=weights))][0]()


def run_server(lines: list[bytes]) -> tuple[list[str], int, float, str]:
    """The server's reply lines, its exit status, its peak resident memory in MiB and its stderr.

    The peak is VmHWM from /proc, read once every reply is in and before the end of input: the
    child's own high-water mark (``ru_maxrss`` would count the test process's memory at the fork).
    """
    process = subprocess.Popen([sys.executable, "-m", "agents.serving", "--bot", BOT, "--id"], cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def feed() -> None:
        for line in lines:
            process.stdin.write(line + b"\n")
        process.stdin.flush()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    replies = [process.stdout.readline().decode() for _ in lines]
    writer.join()
    status_text = Path(f"/proc/{process.pid}/status").read_text()
    peak_kib = int(next(line.split()[1] for line in status_text.splitlines() if line.startswith("VmHWM:")))
    process.stdin.close()
    rest, errors = process.stdout.read(), process.stderr.read()
    replies += rest.decode().splitlines()
    return [r.rstrip("\n") for r in replies if r], process.wait(timeout=30), peak_kib / 1024, errors.decode()


def test_the_server_survives_thousands_of_hostile_lines_in_bounded_memory() -> None:
    started = time.perf_counter()
    rng = np.random.default_rng(SEED)
    states = valid_states()
    bot = load_bot(BOT)
    expected_moves = [bot.choose(state) for state in states]
    lines: list[bytes] = []
    expected: list[Any] = []
    generator = bad_lines(states, rng)
    for i in range(BAD_LINES):
        line, want = too_long(rng) if i % 1000 == 500 else next(generator)
        assert b"\n" not in line
        lines.append(line)
        expected.append(want)
        if i % 20 == 0:  # a valid state between the bad ones, now and then wrapped with an id
            k = (i // 20) % len(states)
            if k % 3:
                lines.append(json.dumps(states[k]).encode())
                expected.append(expected_moves[k])
            else:
                lines.append(json.dumps({"id": k, "state": states[k]}).encode())
                expected.append({"id": k, **expected_moves[k]})

    replies, status, peak_mib, errors = run_server(lines)

    assert status == 0, errors[-2000:]
    assert len(replies) == len(lines), "one reply per line"
    failures = []
    for line, want, text in zip(lines, expected, replies):
        reply = json.loads(text)
        if isinstance(want, str):
            ok = set(reply) == {"error"} and want in reply["error"] and len(reply["error"]) < 500
        elif "error" in want:
            ok = set(reply) == {"id", "error"} and reply["id"] == want["id"] and want["error"] in reply["error"]
        else:
            ok = reply == want
        if not ok:
            failures.append(f"{line[:120]!r} -> {text[:200]} (wanted {want!r:.100})")
    assert not failures, f"{len(failures)} wrong replies, the first: " + "\n".join(failures[:5])
    assert errors == "", "no bad line reaches a traceback"
    assert peak_mib < MEMORY_BOUND_MIB, f"peak memory {peak_mib:.0f} MiB, over the bound of {MEMORY_BOUND_MIB} MiB"
    assert f"{MEMORY_BOUND_MIB} MiB" in (ROOT / "docs" / "protocol.md").read_text(), "docs/protocol.md states the bound"
    assert time.perf_counter() - started < 60
