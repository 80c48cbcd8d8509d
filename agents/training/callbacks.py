"""What runs during PPO: ``SelfPlayCallback`` (snapshots, evaluation, checkpoints, progress) and
``evaluate_policy`` (a policy against baseline bots).

    callback = SelfPlayCallback(config, pool, envs, state)
    model.learn(total_timesteps=..., callback=callback, tb_log_name="ppo")
    callback.save_final_checkpoint(model)                # latest.zip and state.json at the model's step
    callback.final_evaluation()                          # unless one ran at this step

Every ``snapshot_every`` steps the callback adds a frozen copy of the learner to the opponent pool
(and to the run's pool/ folder, which keeps the pool's snapshots only); every ``eval_every`` steps
(0: only when asked) it plays the current policy against each of ``eval_opponents`` in all other
seats (``eval_games`` games or rounds at ``eval_players`` seats, the same seed each time; one due in
the run's last rollout is left to the final evaluation) and keeps the best by mean win rate as
checkpoints/best.zip and best.npz; every ``checkpoint_every`` steps it writes checkpoints/latest.zip
and latest.npz, then state.json (``agents.training.runs`` gives the write order that keeps every
kill point resumable). TensorBoard gets SB3's PPO figures, ``eval_<opponent>/*``,
``eval/mean_win_rate``, ``selfplay/*`` (env steps per second, the opponents' share of the rollout
time, the pool's size) and the whole config as text.

Contract: everything the callback must remember across a resume lives in ``state`` (the run's
state.json, ``agents.training.runs``), so a resumed run continues its schedule, pool and
evaluations. Rollouts run torch on ``rollout_threads`` (the network sees one batch of ``n_envs``
observations a step: with few tables extra threads only spin); updates get ``torch_threads``.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.policies.ppo import NumpyPolicy, PPOAgent
from agents.training.config import TrainConfig
from agents.training.runs import save_model_atomically, save_state
from agents.training.selfplay import OpponentPool

TB_LOG_NAME = "ppo"
"""The TensorBoard run's name under the run's tb/ (tb/ppo_1, continued on every resume)."""


def evaluate_policy(
    policy: NumpyPolicy,
    opponent: str,
    num_players: int,
    games: int,
    seed: int,
    rules: str,
    episode: str = "game",
    max_turns: int = 500,
) -> dict[str, float]:
    """The policy against ``opponent`` bots in every other seat: a tournament of ``games`` (rounded
    up to whole seat rotations; see ``agents.tournament``) on duplicate deals, in this process.
    A round reaching ``max_turns`` ends with no winner (bots can trade cards forever), counted in
    ``capped_rounds`` (TensorBoard: ``eval_<opponent>/capped_rounds``: a learner that loops). The
    tournament stops with a ValueError naming the agent on any illegal move, so a finished
    evaluation had none (which is why no count of them is reported)."""
    from agents.tournament import run_tournament

    games = -(-games // num_players) * num_players
    learner = PPOAgent(policy, name="learner")
    result = run_tournament(
        [learner] + [opponent] * (num_players - 1), num_players, games, seed=seed, rules=rules,
        rounds=episode == "round", workers=1, progress=False, max_turns=max_turns,
    )
    stats = next(a for a in result.agents if a.name == "learner")
    low, high = stats.win_interval
    return {
        "win_rate": stats.win_rate,
        "win_rate_low": low,
        "win_rate_high": high,
        "points_per_round": stats.points_per_round or 0.0,
        "margin": stats.margin or 0.0,  # the others' points a round minus its own, paired by deal
        "yaniv_per_round": stats.calls_per_round or 0.0,
        "assafed_rate": stats.assafed_per_call or 0.0,
        "rounds_per_game": stats.rounds_per_game or 0.0,
        "capped_rounds": result.capped_rounds,  # rounds that reached the turn cap: a loop
        "games": stats.games,
    }



def evaluate_opponents(policy: NumpyPolicy, config: TrainConfig) -> dict[str, dict[str, float]]:
    """``evaluate_policy`` against each of ``config.eval_opponents`` (``eval_games`` at ``eval_players``
    seats, the same seed each time): what both backends' evaluations play."""
    players = config.eval_players or max(config.player_counts)
    return {opponent: evaluate_policy(policy, opponent, players, config.eval_games, seed=config.seed + 7919,
                                      rules=config.rules, episode=config.eval_episode, max_turns=config.max_turns)
            for opponent in config.eval_opponents}


class SelfPlayCallback(BaseCallback):
    """Adds snapshots to the pool, evaluates, writes checkpoints and drives the progress bar.

    Everything it must remember across a resume lives in ``self.state`` (state.json).
    """

    def __init__(self, config: TrainConfig, pool: OpponentPool, envs: Sequence[Any],
                 state: dict[str, Any]) -> None:
        super().__init__()
        self.config = config
        self.pool = pool
        self.envs = envs
        self.state = state
        self.run_dir = config.run_dir
        self.bar: Any = None  # a tqdm bar while training with progress on
        self._rollout_start = time.perf_counter()
        self._rollout_steps = 0
        self._clock_start = 0.0
        self._eval_text = "no evaluation yet"
        self._paused = 0.0

    # SB3 hooks --------------------------------------------------------------------------------

    def _on_training_start(self) -> None:
        from stable_baselines3.common.logger import TensorBoardOutputFormat

        text = "\n".join(f"    {k}: {v!r}" for k, v in self.config.to_dict().items())
        for fmt in self.logger.output_formats:
            if isinstance(fmt, TensorBoardOutputFormat):
                fmt.writer.add_text("config", text, self.num_timesteps)
                fmt.writer.flush()
        self._split_if_due()
        if self.config.progress:
            from tqdm import tqdm

            self.bar = tqdm(total=self.config.total_timesteps, initial=self.num_timesteps, unit="step", dynamic_ncols=True)

    def _on_rollout_start(self) -> None:
        # Rollouts run the network on one batch of n_envs observations a step: with a handful of
        # tables extra torch threads only spin (badly, on a shared machine), so rollout_threads is
        # its own key. The update gets config.torch_threads back.
        import torch

        torch.set_num_threads(self.config.rollout_threads)
        self._rollout_start = time.perf_counter()
        self._paused = 0.0  # seconds of snapshots, evaluations and checkpoints inside this rollout
        self._rollout_steps = self.num_timesteps
        self._clock_start = sum(env.clock[0] for env in self.envs)

    def _on_rollout_end(self) -> None:
        import torch

        torch.set_num_threads(self.config.torch_threads)
        elapsed = time.perf_counter() - self._rollout_start - self._paused
        steps = self.num_timesteps - self._rollout_steps
        opponent = sum(env.clock[0] for env in self.envs) - self._clock_start
        if elapsed > 0:
            self.logger.record("selfplay/env_steps_per_second", steps / elapsed)
            self.logger.record("selfplay/opponent_time_share", opponent / elapsed)
            self.state["last_steps_per_second"] = steps / elapsed
            self.state["last_opponent_share"] = opponent / elapsed
        self.logger.record("selfplay/pool_snapshots", len(self.pool.snapshots))
        self._split_if_due()  # before the update: the rollout's probabilities and values hold for the towers

    def _split_if_due(self) -> None:
        """From ``towers_from`` on, the model has its towers (``split_towers``) and the tables draw
        the rule sets, table sizes and baselines of that step (``one_round_share``,
        ``towers_players``, ``towers_baselines``); the rollout under way finishes on the games it
        was dealt."""
        from agents.training.model import has_towers, split_towers

        c = self.config
        if not c.towers or self.num_timesteps < c.towers_from or has_towers(self.model):
            return
        split_towers(self.model, c.towers)
        self.pool.set_step(self.num_timesteps)
        for env in self.envs:
            if hasattr(env, "vec_env"):  # the compiled core's tables; rule sets need them (config checks)
                env.vec_env.set_rule_sets(c.training_rule_sets(self.num_timesteps) or None)
                env.vec_env.set_players(c.training_players(self.num_timesteps))
        self.state["towers_split_at"] = self.num_timesteps
        self.logger.record("selfplay/towers_split_at", self.num_timesteps)
        opponents = f", against {', '.join(self.pool.baselines)}" if c.towers_baselines else ""
        print(f"step {self.num_timesteps:,}: the network split into two towers ({c.towers}); the tables seat "
              f"{c.training_players(self.num_timesteps)}{opponents} from here", flush=True)

    def _due(self, key: str, every: int) -> bool:
        """Whether ``state[key]`` (a next_* step) has come; if so it moves to the first multiple of
        ``every`` after it that lies past this step, before the action saves the state (so a
        resumed run neither repeats the action nor falls behind)."""
        step, due = self.num_timesteps, self.state[key]
        if step < due:
            return False
        self.state[key] = due + ((step - due) // every + 1) * every
        return True

    def _on_step(self) -> bool:
        c = self.config
        start = time.perf_counter()
        if self._due("next_snapshot", c.snapshot_every):
            self.add_snapshot()
        if c.eval_every and not self._in_last_rollout() and self._due("next_eval", c.eval_every):
            self.evaluate()
        if self._due("next_checkpoint", c.checkpoint_every):
            self.save_checkpoint()
        self._paused += time.perf_counter() - start  # not the rollout's: its rate counts the games alone
        step = self.num_timesteps
        if self.bar is not None:
            self.bar.update(step - self.bar.n)
            rate = self.state.get("last_steps_per_second")
            self.bar.set_postfix_str((f"{rate:,.0f} steps/s | " if rate else "") + self._eval_text, refresh=False)
        return True

    def _in_last_rollout(self) -> bool:
        """Whether the rollout under way is the run's last: ``learn`` stops once a rollout ends at or
        past ``total_timesteps``, and ``final_evaluation`` follows it. An evaluation due inside it
        waits for that one: it would play the same policy but for the last update, which a rate
        falling to zero makes no update at all (a second point on the curve, and 200 games an
        opponent, for nothing)."""
        c = self.config
        return self._rollout_steps + c.n_envs * c.n_steps >= c.total_timesteps

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()

    # Actions ----------------------------------------------------------------------------------

    def current_policy(self) -> NumpyPolicy:
        return NumpyPolicy.from_sb3(self.model, meta={"rules": self.config.rules, "step": self.num_timesteps})

    def add_snapshot(self) -> None:
        """pool/snapshot_<step>.npz and the pool in ``state``; the snapshot that left the pool is
        deleted by the next ``save_state``, once state.json no longer names it."""
        policy = self.current_policy()
        pool_dir = self.run_dir / "pool"
        pool_dir.mkdir(exist_ok=True)
        policy.save(pool_dir / OpponentPool.file_name(self.num_timesteps))
        self.pool.add(self.num_timesteps, policy)
        self.state["pool"] = [OpponentPool.file_name(s) for s, _ in self.pool.snapshots]

    def evaluate(self, step: int | None = None) -> dict[str, dict[str, float]]:
        """The current policy against every evaluation opponent, logged and kept in the state at ``step``
        (the model's by default; after the expert stage, the steps and labels together)."""
        c = self.config
        step = self.num_timesteps if step is None else step
        policy = self.current_policy()
        results = evaluate_opponents(policy, c)
        for opponent, stats in results.items():
            for key, value in stats.items():
                self.logger.record(f"eval_{opponent}/{key}", value)
        score = float(np.mean([r["win_rate"] for r in results.values()]))
        self.logger.record("eval/mean_win_rate", score)
        self.logger.dump(step)
        self.state.setdefault("evaluations", []).append({"step": step, "results": results})
        first = c.eval_opponents[0]
        self._eval_text = f"eval vs {first}: {results[first]['win_rate']:.0%}"
        if score > self.state.get("best_score", -1.0):
            self.state["best_score"] = score
            self.state["best_step"] = step
            save_model_atomically(self.model, self.run_dir / "checkpoints" / "best.zip")
            policy.save(self.run_dir / "checkpoints" / "best.npz")
        save_state(self.run_dir, self.state)
        return results

    def save_checkpoint(self) -> None:
        """latest.zip (the SB3 model) and latest.npz (the policy's weights), then state.json."""
        folder = self.run_dir / "checkpoints"
        save_model_atomically(self.model, folder / "latest.zip")
        self.current_policy().save(folder / "latest.npz")
        self.state["timesteps"] = self.num_timesteps
        save_state(self.run_dir, self.state)

    def save_final_checkpoint(self, model: Any) -> None:
        """A checkpoint of ``model`` at its own step count, after ``learn`` returned or was interrupted,
        or when the run had no steps left and ``learn`` never ran (nor set this callback's step)."""
        self.model, self.num_timesteps = model, model.num_timesteps
        self.save_checkpoint()

    def final_evaluation(self, step: int | None = None) -> None:
        """An evaluation at ``step`` (the current step by default), unless one ran there already; it
        stands for any that fell due in the last rollout (so a run resumed with more steps does not
        evaluate again at once)."""
        step = self.num_timesteps if step is None else step
        advanced = bool(self.config.eval_every) and self._due("next_eval", self.config.eval_every)
        evaluations = self.state.get("evaluations", [])
        if not evaluations or evaluations[-1]["step"] != step:
            if not hasattr(self.model, "_logger"):  # learn never ran here: a resume with no steps left
                from stable_baselines3.common.utils import configure_logger

                self.model.set_logger(configure_logger(self.model.verbose, self.model.tensorboard_log,
                                                       TB_LOG_NAME, reset_num_timesteps=False))
            self.evaluate(step)  # saves the state
        elif advanced:
            save_state(self.run_dir, self.state)

