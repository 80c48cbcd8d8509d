"""Tournament reports: the terminal table, the result files and the plots of a ``TournamentResult``.

``TournamentResult.table()``, ``.write(out_dir)``, ``.plot_ratings()`` and
``.plot_head_to_head()`` call these functions; ``evaluate.py`` prints the table and writes the
files:

==========================  ================================================================
file                        contents
==========================  ================================================================
``results.json``            the configuration, every agent's figures, head to head, seat win
                            rates (``TournamentResult.to_dict``)
``results.csv``             one row per agent: the figures of ``AgentStats.to_dict``
``head_to_head.csv``        one row per ordered pair that met: games, ahead, ties, ahead rate
``ratings.png``             each agent's rating, mu +- 2 sigma
``head_to_head.png``        the head-to-head matrix, row ahead of column
==========================  ================================================================

``write`` never replaces earlier results unless told to (``overwrite=True``; ``evaluate.py
--overwrite``), and writes all five files or none: each is rendered to a temporary file in the
folder first, and only when all five are there are they renamed over their names, so a failure
while writing (a full disk, a broken plot) leaves what was there before. Other files in the
folder are left alone. ``existing_results`` and ``prepare_folder`` let a script check the folder
before it plays a game (evaluate.py does).

matplotlib is imported only to draw, so the table needs no plotting library.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Sequence

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from agents.tournament.statistics import AgentStats, TournamentResult

RESULT_FILES = {
    "json": "results.json",
    "csv": "results.csv",
    "head_to_head_csv": "head_to_head.csv",
    "ratings_png": "ratings.png",
    "head_to_head_png": "head_to_head.png",
}
"""The files ``write`` writes, by key (the keys of its answer)."""


def table(result: TournamentResult) -> str:
    """The terminal report: one row per agent (best rating first), then head to head."""

    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    plan = result.plan
    header = ["agent", "games", "win rate [95% CI]", "rating ±2σ", "pts/round", "margin [95% CI]", "Yaniv/round",
              "Assafed/call", "Assafs/round", "rounds/game", "turns/game", "ms/move"]
    rows = []
    for s in result.ranking():
        low, high = s.win_interval
        rows.append([
            s.name, str(s.games), f"{s.win_rate:6.1%} [{low:.1%}, {high:.1%}]", f"{s.mu:.1f} ± {2 * s.sigma:.1f}",
            num(s.points_per_round, ".2f"), _margin_text(s), num(s.calls_per_round, ".3f"),
            num(s.assafed_per_call, ".1%"),
            num(s.assafs_per_round, ".3f"), num(s.rounds_per_game, ".1f"), num(s.turns_per_game, ".1f"),
            num(s.ms_per_move, ".3f"),
        ])
    lines = [plan.describe(), ""]
    lines += _format_table(header, rows, right=range(1, len(header)))
    lines.append("margin: the tablemates' mean points per round minus the agent's own (positive: it takes fewer), "
                 "paired by deal")
    # Head to head.
    order = [plan.labels.index(s.name) for s in result.ranking()]
    rates = result.head_to_head()
    short = [plan.labels[a] if len(plan.labels[a]) <= 12 else plan.labels[a][:11] + "…" for a in order]
    h2h_rows = [[short[i]] + ["-" if i == j or math.isnan(rates[a, b]) else f"{rates[a, b]:.0%}"
                              for j, b in enumerate(order)] for i, a in enumerate(order)]
    lines += ["", "Head to head: how often the row agent finished ahead of the column agent (ties count 1/2)"]
    lines += _format_table(["ahead of →"] + short, h2h_rows, right=range(1, len(short) + 1))
    seat_rates = ", ".join(f"seat {q}: {w / max(result.games, 1):.1%}" for q, w in enumerate(result.seat_wins))
    lines += ["", f"Wins by seat: {seat_rates}"]
    if result.capped_rounds:
        lines.append(f"Rounds cut by the turn cap (no winner, no points): {result.capped_rounds} of {result.rounds}")
    lines.append(f"{result.games} games in {result.wall_seconds:.1f} s")
    return "\n".join(lines)


def existing_results(out_dir: str | os.PathLike[str]) -> list[str]:
    """The names of the result files ``out_dir`` already holds (none if it is not a folder)."""
    out = Path(out_dir)
    try:
        return [name for name in RESULT_FILES.values() if out.is_dir() and (out / name).exists()]
    except OSError:  # a name too long, a loop of links: no results can be there
        return []


def prepare_folder(out_dir: str | os.PathLike[str]) -> Path:
    """Make sure files can be written into ``out_dir``: create it (and its parents) if needed, then
    write and remove a probe file. ValueError naming the folder and the reason otherwise; the
    folders it created are removed again."""
    out = Path(out_dir)
    if not os.fspath(out_dir).strip():
        raise ValueError("the output folder's name is empty")
    created: list[Path] = []
    probe = out / f".write-probe-{os.getpid()}"
    try:
        if out.exists() and not out.is_dir():
            raise ValueError(f"{out} exists and is not a folder")
        created = [p for p in (out, *out.parents) if not p.exists()]
        out.mkdir(parents=True, exist_ok=True)
        with probe.open("x") as f:
            f.write("probe\n")
        probe.unlink()
    except OSError as error:
        for folder in created:  # deepest first
            try:
                folder.rmdir()
            except OSError:
                pass
        raise ValueError(f"cannot write into {out}: {error.strerror or error}") from None
    return out


def write(result: TournamentResult, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> dict[str, Path]:
    """Write results.json, results.csv, head_to_head.csv, ratings.png and head_to_head.png, all or none.

    FileExistsError, before anything is written, if ``out_dir`` already holds any of them and
    ``overwrite`` is off; ValueError if the folder cannot be written (``prepare_folder``).
    """
    out = Path(out_dir)
    existing = existing_results(out)
    if existing and not overwrite:
        raise FileExistsError(
            f"{out} already holds results ({', '.join(existing)}); pass overwrite=True to replace them"
        )
    prepare_folder(out_dir)
    writers: dict[str, Callable[[TournamentResult, Path], None]] = {
        "json": _write_json, "csv": _write_csv, "head_to_head_csv": _write_head_to_head_csv,
        "ratings_png": lambda r, path: _save_figure(plot_ratings(r), path),
        "head_to_head_png": lambda r, path: _save_figure(plot_head_to_head(r), path),
    }
    paths = {key: out / name for key, name in RESULT_FILES.items()}
    temporary = {key: out / f".{name}.{os.getpid()}.tmp" for key, name in RESULT_FILES.items()}
    try:
        for key, path in temporary.items():
            writers[key](result, path)
        for key, path in temporary.items():
            os.replace(path, paths[key])
    finally:
        for path in temporary.values():
            path.unlink(missing_ok=True)
    return paths


def _write_text(path: Path, write: Callable[[IO[str]], None]) -> None:
    """``write`` into a new file at ``path``, flushed to the disk before it is closed."""
    with path.open("w", newline="") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


def _write_json(result: TournamentResult, path: Path) -> None:
    _write_text(path, lambda f: f.write(json.dumps(result.to_dict(), indent=2) + "\n"))


def _write_csv(result: TournamentResult, path: Path) -> None:
    rows = [s.to_dict() for s in result.agents]

    def write(f: IO[str]) -> None:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            row["seat_games"] = " ".join(map(str, row["seat_games"]))
            row["seat_win_rates"] = " ".join("" if v is None else f"{v:.6g}" for v in row["seat_win_rates"])
            writer.writerow({k: "" if v is None else v for k, v in row.items()})

    _write_text(path, write)


def _write_head_to_head_csv(result: TournamentResult, path: Path) -> None:
    rates = result.head_to_head()
    counts = (result.head_to_head_games, result.head_to_head_ahead, result.head_to_head_ties)

    def write(f: IO[str]) -> None:
        writer = csv.writer(f)
        writer.writerow(["agent", "opponent", "games", "ahead", "ties", "ahead_rate"])
        for a, name in enumerate(result.plan.labels):
            for b, other in enumerate(result.plan.labels):
                if a != b and result.head_to_head_games[a, b]:
                    writer.writerow([name, other, *(int(c[a, b]) for c in counts), f"{rates[a, b]:.6g}"])

    _write_text(path, write)


def _save_figure(figure: Figure, path: Path) -> None:
    with path.open("wb") as f:
        figure.savefig(f, format="png", dpi=120)
        f.flush()
        os.fsync(f.fileno())


def plot_ratings(result: TournamentResult) -> Figure:
    """A matplotlib Figure: each agent's rating mu with its mu ± 2 sigma interval."""
    from matplotlib.figure import Figure

    ranked = result.ranking()[::-1]  # best on top
    fig = Figure(figsize=(6.4, 1.2 + 0.45 * len(ranked)), layout="constrained")
    ax = fig.subplots()
    ys = np.arange(len(ranked))
    mus = [s.mu for s in ranked]
    ax.errorbar(mus, ys, xerr=[2 * s.sigma for s in ranked], fmt="o", capsize=4, color="tab:blue")
    ax.set_yticks(ys, [s.name for s in ranked])
    ax.set_xlabel("OpenSkill rating (Plackett-Luce): μ ± 2σ")
    mode = "rounds" if result.plan.rounds else "games"
    ax.set_title(f"Ratings: {result.games} {mode}, {result.plan.num_players} players")
    ax.grid(axis="x", alpha=0.3)
    ax.set_ylim(-0.6, len(ranked) - 0.4)
    return fig


def plot_head_to_head(result: TournamentResult) -> Figure:
    """A matplotlib Figure: the head-to-head matrix (row ahead of column)."""
    import matplotlib
    from matplotlib.figure import Figure

    order = [result.plan.labels.index(s.name) for s in result.ranking()]
    rates = result.head_to_head()[np.ix_(order, order)]
    names = [result.plan.labels[a] for a in order]
    size = 2.5 + 0.7 * len(names)
    fig = Figure(figsize=(size + 1.2, size), layout="constrained")
    ax = fig.subplots()
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="0.92")  # the diagonal, pairs that never met
    image = ax.imshow(np.ma.masked_invalid(rates), cmap=cmap, vmin=0, vmax=1)
    for i in range(len(names)):
        for j in range(len(names)):
            if not math.isnan(rates[i, j]):
                ax.text(j, i, f"{rates[i, j]:.0%}", ha="center", va="center",
                        color="white" if abs(rates[i, j] - 0.5) > 0.3 else "black")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title("Head to head: row finished ahead of column")
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def _margin_text(s: AgentStats) -> str:
    if s.margin is None:
        return "-"
    interval = s.margin_interval
    return f"{s.margin:+.2f}" + (f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else "")


def _format_table(header: list[str], rows: list[list[str]], right: Sequence[int] = ()) -> list[str]:
    right = set(right)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(padded).rstrip()

    return [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]
