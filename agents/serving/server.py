"""Serve a bot over stdin/stdout, one JSON state per line in, one JSON move per line out.

    python -m agents.serving --bot default          # any agent spec: heuristic, search:64, a folder, ...

A frontend in any language spawns this process and writes one protocol state (``yaniv.protocol``,
``docs/protocol.md``) per line; for each line it reads back one line: the move, e.g.
``{"action": "discard", "cards": ["5H", "5S"], "draw": "deck"}``, or an error object
``{"error": "hand holds 4 cards but players[0].hand_size is 5"}``. A bad line (malformed JSON, an
impossible state, a state for a seat that is not to move) gets an error object and the process
keeps serving; blank lines are skipped. It stops at the end of its input, exit status 0. A bot that
cannot be loaded is reported on stderr before anything is read, exit status 2.

With ``--id`` the state may be wrapped as ``{"id": ..., "state": {...}}``; the answer then carries
the same ``id``, so a frontend can pipeline requests.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from typing import IO, Any

from agents.registry import specs_help
from agents.serving.bots import Bot, load_bot
from yaniv.protocol import ProtocolError


def answer(bot: Bot, line: str, with_id: bool = False) -> dict[str, Any]:
    """The reply to one input line: a move, or {"error": ...}."""
    request_id = None
    try:
        state = json.loads(line)
    except json.JSONDecodeError as error:
        return {"error": f"not JSON: {error}"}
    if with_id and isinstance(state, dict) and "state" in state:
        request_id = state.get("id")
        state = state["state"]
    try:
        reply = bot.choose(state)
    except ProtocolError as error:
        reply = {"error": str(error)}
    except Exception as error:  # a bug in a bot must not take the frontend's game down with it
        traceback.print_exc(file=sys.stderr)
        reply = {"error": f"internal error in bot {bot.name!r}: {type(error).__name__}: {error}"}
    if request_id is not None:
        reply = {"id": request_id, **reply}
    return reply


def serve(bot: Bot, stdin: IO[str], stdout: IO[str], with_id: bool = False) -> int:
    """Answer every line of ``stdin``; returns how many lines were answered."""
    count = 0
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps(answer(bot, line, with_id)) + "\n")
        stdout.flush()
        count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.serving", description=__doc__.split("\n\n")[0],
                                     epilog=specs_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", default="default", help="the bot's agent spec (listed below; default: default)")
    parser.add_argument("--seed", type=int, default=0, help="the bot's seed (the same state and seed, the same move)")
    parser.add_argument("--id", action="store_true", help='accept {"id": ..., "state": ...} and echo the id')
    args = parser.parse_args(argv)
    try:
        bot = load_bot(args.bot, seed=args.seed)
    except ValueError as error:
        print(f"serve: {error}", file=sys.stderr)
        return 2
    serve(bot, sys.stdin, sys.stdout, args.id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
