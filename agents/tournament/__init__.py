"""Tournaments: seat-rotated, duplicate-deal play between agents, with statistics and reports."""

from agents.tournament.core import *  # noqa: F401,F403
from agents.tournament.core import GameRecord, TournamentPlan, TournamentResult, plan_tournament, run_tournament, wilson_interval  # noqa: F401
