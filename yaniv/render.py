"""A readable text view of a game, with suit symbols, for logs and terminals."""

from __future__ import annotations

from yaniv.cards import cards_str, hand_points
from yaniv.game import CALL, DECK, DISCARD, OVER, RESHUFFLE, SLAM, SLAMDOWN_PHASE, STATE, Event, Game, RoundResult


def render_game(game: Game, viewer: int | None = None) -> str:
    """The table as text. ``viewer`` sees only its own hand; None shows every hand."""
    lines = [
        f"Round {game.round_number} · turn {game.turn} · deck {game.deck_size} cards · "
        f"{game.rules.describe()}"
    ]
    top = game.top
    dead = len(game.pile_cards()) - len(top.cards)
    owner = "deal" if top.player < 0 else f"P{top.player}"
    lines.append(
        f"Pile top ({top.kind}, from {owner}): {cards_str(top.cards)}"
        f"   may be drawn: {cards_str(top.drawable) or '-'}   dead below: {dead}"
    )
    for q in range(game.num_players):
        if not game.alive[q]:
            lines.append(f"  P{q}  out of the game (score {game.scores[q]})")
            continue
        marker = "▶" if q == game.current and game.phase != OVER else " "
        hand = game.hands[q]
        if viewer is None or viewer == q:
            shown = f"{cards_str(hand):<22} ({hand_points(hand)} pts)"
        else:
            known = [c for c in hand if c in game.known[q]]
            shown = " ".join(["??"] * (len(hand) - len(known)) + [cards_str(known)] if known else ["??"] * len(hand))
            shown = f"{shown:<22} ({len(hand)} cards)"
        lines.append(f"{marker} P{q}  {shown}  score {game.scores[q]}")
    if game.phase == SLAMDOWN_PHASE:
        lines.append(f"P{game.current} may slam down the card just drawn.")
    if game.phase == OVER:
        lines.append("Game over. Winner(s): " + ", ".join(f"P{q}" for q in game.winners))
    return "\n".join(lines)


def describe_event(event: Event) -> str:
    """One line for a public event: "P1 threw 5♥ 6♥ 7♥ and drew from the deck"."""
    if event.kind == DISCARD:
        source = "the deck" if event.drew == DECK else cards_str([event.drew]) + " from the pile"
        return f"P{event.player} threw {cards_str(event.cards)} and drew {source}"
    if event.kind == SLAM:
        return f"P{event.player} slammed down {cards_str(event.cards)}"
    if event.kind == RESHUFFLE:
        return f"the pile ({len(event.cards)} cards) was shuffled into a new deck"
    if event.kind == STATE:
        shown = f": {cards_str(event.cards)} known" if event.cards else ""
        return f"P{event.player} holds {len(event.cards) + event.drew} cards{shown} (the round joined in progress)"
    if event.kind == CALL:
        return f"P{event.player} called Yaniv!"
    return f"P{event.player}: {event.kind}"


def describe_result(result: RoundResult) -> str:
    """A short account of a round's end."""
    if result.caller is None:
        return f"The round hit the turn cap after {result.turns} turns: no winner, no points."
    head = f"P{result.caller} called Yaniv with {result.totals[result.caller]}"
    if result.assafers:
        head += " and was Assafed by " + ", ".join(f"P{q}" for q in result.assafers)
    parts = [f"P{q} +{p}" for q, p in enumerate(result.points) if p]
    tail = "; ".join(parts) or "nobody scores"
    resets = f" (reset: {', '.join(f'P{q}' for q in result.resets)})" if result.resets else ""
    out = f" Eliminated: {', '.join(f'P{q}' for q in result.eliminated)}." if result.eliminated else ""
    return f"{head}. {tail}{resets}. Scores: {list(result.scores)}.{out}"
