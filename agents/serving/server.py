"""Serve a bot over stdin/stdout, one JSON state per line in, one JSON move per line out.

    python -m agents.serving --bot default          # any agent spec: heuristic, search:64, a folder, ...

A frontend in any language spawns this process and writes one protocol state (``yaniv.protocol``,
``docs/protocol.md``) per line; for each line it reads back one line: the move, e.g.
``{"action": "discard", "cards": ["5H", "5S"], "draw": "deck"}``, or an error object
``{"error": "hand holds 4 cards but players[0].hand_size is 5"}``. A bad line (malformed JSON, an
impossible state, a state for a seat that is not to move) gets an error object naming the problem
and the process keeps serving; blank lines are skipped. It stops at the end of its input, exit
status 0. A bot that cannot be loaded is reported on stderr before anything is read, exit status 2.

With ``--id`` the state may be wrapped as ``{"id": ..., "state": {...}}``; the answer (a move or an
error) then carries the same ``id``, ``null`` included, so a frontend can pipeline requests.

Limits, for input from anyone (docs/protocol.md, "Limits"): a line is at most ``--max-line-bytes``
bytes (default 1 MiB), checked while reading, so a longer line is dropped in chunks and never held
whole; it must be UTF-8; then ``yaniv.protocol.parse_json`` bounds its nesting and numbers, and the
protocol reader every field's size, before any deeper work. The process's memory stays bounded
(tests/test_server_fuzz.py measures it). An SB3 checkpoint (a pickle) is loaded only with
``--trust-pickle``.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from typing import IO, Any, Final, Iterator

from agents.registry import specs_help
from agents.serving.bots import Bot, load_bot
from yaniv.protocol import MAX_TEXT_BYTES, ProtocolError, parse_json

DRAIN_CHUNK: Final = 1 << 16  # how much of a too-long line is read at a time while it is dropped
MEMORY_BOUND_MIB: Final = 128  # the peak resident memory tests/test_server_fuzz.py holds the server to


def read_lines(stream: IO[bytes], max_bytes: int) -> Iterator[bytes | int]:
    """Each line of ``stream`` as bytes (its newline kept), or, for a line over ``max_bytes`` bytes,
    its length in bytes: such a line is read and dropped in chunks, so memory stays bounded."""
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        if len(line.rstrip(b"\r\n")) <= max_bytes:
            yield line
            continue
        length = len(line)
        while not line.endswith(b"\n"):
            line = stream.readline(DRAIN_CHUNK)
            if not line:
                break
            length += len(line)
        yield length - (1 if line.endswith(b"\n") else 0)


def answer(bot: Bot, line: str | bytes, with_id: bool = False) -> dict[str, Any]:
    """The reply to one input line: a move, or {"error": ...} naming the problem."""
    try:
        state = parse_json(line, max_bytes=None)
    except ProtocolError as error:
        return {"error": str(error)}
    wrapped = with_id and isinstance(state, dict) and "state" in state
    if wrapped:
        request_id = state.get("id")
        state = state["state"]
    try:
        reply = bot.choose(state)
    except ProtocolError as error:
        reply = {"error": str(error)}
    except Exception as error:  # a bug in a bot must not take the frontend's game down with it
        traceback.print_exc(file=sys.stderr)
        reply = {"error": f"internal error in bot {bot.name!r}: {type(error).__name__}: {error}"}
    if wrapped:
        try:
            json.dumps(request_id)
        except (TypeError, ValueError):  # a number parse_json left unread (yaniv.protocol.NumberTooLarge)
            return {"error": "id: holds a number too large to echo; use a string or a smaller number"}
        reply = {"id": request_id, **reply}
    return reply


def serve(bot: Bot, stdin: IO[bytes], stdout: IO[str], with_id: bool = False,
          max_line_bytes: int = MAX_TEXT_BYTES) -> int:
    """Answer every line of ``stdin`` (a binary stream); returns how many lines were answered."""
    count = 0
    for line in read_lines(stdin, max_line_bytes):
        if isinstance(line, int):
            reply = {"error": f"line: {line} bytes, longer than the limit of {max_line_bytes} (--max-line-bytes)"}
        elif not line.strip():
            continue
        else:
            reply = answer(bot, line, with_id)
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
        count += 1
    return count


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.serving", description=__doc__.split("\n\n")[0],
                                     epilog=specs_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", default="default", help="the bot's agent spec (listed below; default: default)")
    parser.add_argument("--seed", type=int, default=0, help="the bot's seed (the same state and seed, the same move)")
    parser.add_argument("--id", action="store_true", help='accept {"id": ..., "state": ...} and echo the id')
    parser.add_argument("--max-line-bytes", type=positive_int, default=MAX_TEXT_BYTES, metavar="N",
                        help=f"refuse longer lines with an error (default: {MAX_TEXT_BYTES}, 1 MiB)")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="allow an SB3 checkpoint (.zip, a pickle that can run code when loaded): trusted files "
                             "only; .npz weights and exported bots need no trust")
    args = parser.parse_args(argv)
    try:
        bot = load_bot(args.bot, seed=args.seed, trust_pickle=args.trust_pickle)
    except ValueError as error:
        print(f"serve: {error}", file=sys.stderr)
        return 2
    serve(bot, sys.stdin.buffer, sys.stdout, args.id, args.max_line_bytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
