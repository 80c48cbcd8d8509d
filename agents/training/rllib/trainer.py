"""The RLlib run: Ray, the PPO algorithm, and what happens between its iterations.

    require_ray()                                   # ConfigError with the install line if the extra is missing
    run, checkpoint = open_run(config_path, resume_dir, overrides)   # every check, nothing written
    cluster = connect(run.config)                   # a local Ray instance, or the cluster of ray_address
    run.write_files()
    trainer = RLlibTrainer(run, checkpoint)         # env runners, learners, modules; restored if resumed
    while trainer.steps < run.config.total_timesteps:
        trainer.iteration()                         # one PPO iteration; snapshots, evaluations, checkpoints when due
    trainer.save_checkpoint(); trainer.final_evaluation(); run.finish(trainer.steps); trainer.close()

The algorithm is RLlib's PPO on the new API stack, on ``env_runners`` processes with
``envs_per_runner`` tables each and ``learners`` learner processes (0: the trainer's own) with
``learner_gpus`` GPUs each. What the runners play is ``rllib_env``:

* ``vector`` (the default): ``CoreTables`` (``.tables``), the learner's tables on the compiled
  core, one call for all of a runner's tables, through RLlib's single-agent runner and its default
  module (``learner_module``); the pool's snapshots play inside the tables, given to every runner
  on each change (``push_pool``), as SB3's runs play them;
* ``aec``: ``YanivMultiAgentEnv`` (``.env``), the PettingZoo AEC table, with the modules of
  ``.module`` (the learner and ``pool_size`` snapshot slots, mapped from the agent ids).

 The config's PPO keys map onto
RLlib's: ``n_steps`` is each table's steps per iteration (so an iteration samples ``n_steps *
envs_per_runner * max(1, env_runners)`` env steps), ``batch_size`` the minibatch, ``n_epochs``,
``learning_rate``, ``gamma``, ``gae_lambda``, ``clip_range``, ``ent_coef`` and ``vf_coef`` as
named; as in SB3, no KL term, no value clipping and gradients clipped at a norm of 0.5.
``steps`` counts the learner module's decisions, as SB3's count the learner's; the schedule of
snapshots, evaluations and checkpoints is SB3's (``agents.training.callbacks``), checked after
each iteration.

The run folder is the SB3 run's (``agents.training.runs``), except that the model checkpoint is
RLlib's: ``checkpoints/rllib_<step>/`` (``Algorithm.save_to_path``, written under a ``.tmp`` name
and renamed, then state.json naming its step, then the older ones deleted: a kill at any instant
leaves a resumable folder) beside ``checkpoints/latest.npz``; the best policy by evaluation is
``checkpoints/best.npz`` (no RLlib copy of it), copied to ``policy.npz`` at the end. Snapshots are
``pool/snapshot_*.npz`` as for SB3 and are given to the runners' tables (aec: written into the
snapshot modules, oldest in ``snapshot_0``) on every change and after a resume. TensorBoard (``tb/ppo_1``): ``rollout/*`` and
``train/*`` (RLlib's returns, lengths and losses), ``eval_<opponent>/*`` and ``eval/mean_win_rate``
(``agents.training.callbacks.evaluate_opponents``, on a ``NumpyPolicy`` of the learner's weights:
the evaluation plays the bot the run would export, and stops on any illegal move),
``selfplay/*`` (env steps per second, overall and while sampling; the pool's size) and the config.

Trust: ``--resume`` restores ``checkpoints/rllib_<step>/``, whose files are pickles (RLlib writes
its classes and states so) and can run code: naming the run folder is the request to load it, as
for SB3's checkpoints. Resume only run folders you trust; the ``.npz`` weights load no code.

Ray: ``connect`` starts a local instance (``ray_num_cpus`` CPUs, 0: all) or joins
``ray_address`` (``auto``: the instance ``ray start`` runs on this machine; ``HOST:PORT``: a
head node, checked with a TCP connection first, then given ``CONNECT_TIMEOUT_S`` to answer as
Ray's GCS, so an unreachable one fails within seconds, naming the address). Either way it checks the cluster has the CPUs and GPUs the runners and
learners ask for, since Ray would otherwise wait for them forever; ``close`` stops the algorithm
and disconnects (a local instance ends with it).
"""

from __future__ import annotations

import math
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents.policies.ppo import NumpyPolicy
from agents.training.callbacks import evaluate_opponents
from agents.training.config import ConfigError, TrainConfig, load_config, read_yaml_mapping, refuse_changes_on_resume
from agents.training.runs import Run, load_pool, load_state, new_run, new_state, save_state
from agents.training.selfplay import OpponentPool

INSTALL = "pip install -e '.[rllib]'"
CONNECT_TIMEOUT_S = 5.0
"""How long ``connect`` waits for a ``HOST:PORT`` head node to accept a TCP connection."""
CHECKPOINT_PREFIX = "rllib_"


def require_ray() -> None:
    """ConfigError, one line with the install command, unless Ray RLlib and torch import."""
    try:
        import ray.rllib  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:
        raise ConfigError(f"backend 'rllib' needs Ray RLlib, which is not installed ({error.name} is missing): "
                          f"{INSTALL} (docs/distributed.md)") from None


def checkpoint_name(step: int) -> str:
    return f"{CHECKPOINT_PREFIX}{step:09d}"


def _step_of_checkpoint(name: str) -> int | None:
    tail = name[len(CHECKPOINT_PREFIX):]
    return int(tail) if name.startswith(CHECKPOINT_PREFIX) and tail.isdigit() else None


# -- Opening the run ---------------------------------------------------------------------------


def open_run(config_path: Path | None, resume_dir: Path | None, overrides: Sequence[str]) -> tuple[Run, Path | None]:
    """The run to train and the RLlib checkpoint to restore (None: a fresh algorithm); every check
    of ``agents.training.runs`` (ValueError, nothing written), plus that a resumed run keeps its
    ``pool_size`` (its modules were built with it) and has the checkpoint its state.json names."""
    if resume_dir is None:
        return new_run(config_path, overrides), None
    saved_path = resume_dir / "config.yaml"
    if not saved_path.is_file():
        raise ConfigError(f"{resume_dir} holds no run to resume: no config.yaml (a run killed before writing it "
                          f"never started: start it with --config)")
    saved = read_yaml_mapping(saved_path)
    saved.update(runs_dir=str(resume_dir.parent), name=resume_dir.name)
    config = load_config(None, overrides, base=saved)
    was = load_config(None, base=saved)
    refuse_changes_on_resume(was, config)
    if config.pool_size != was.pool_size:
        raise ConfigError(f"config key 'pool_size' cannot change on --resume of an rllib run (the run has "
                          f"{was.pool_size!r}, not {config.pool_size!r}): its checkpoint holds that many snapshot "
                          "modules; start a new run to change it")
    if not (resume_dir / "state.json").exists():
        return Run(config, resume_dir, new_state(config)), None
    state = load_state(resume_dir)
    checkpoint = resume_dir / "checkpoints" / checkpoint_name(state["timesteps"])
    if not checkpoint.is_dir():
        if state["timesteps"]:
            raise ValueError(f"no checkpoint to resume from at {checkpoint}, though the run state says step "
                             f"{state['timesteps']}: put it back, or start a new run with another name=")
        return Run(config, resume_dir, new_state(config)), None
    pool = load_pool(config, resume_dir, state["pool"])
    return Run(config, resume_dir, state, pool), checkpoint


# -- Ray ---------------------------------------------------------------------------------------


def _check_reachable(address: str) -> None:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"config key 'ray_address': expected auto or HOST:PORT, got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        raise ConfigError(f"config key 'ray_address': cannot reach a Ray head node at {address} within "
                          f"{CONNECT_TIMEOUT_S:.0f} s ({error}); start one there with 'ray start --head' "
                          "(docs/distributed.md)") from None


def connect(config: TrainConfig) -> str:
    """Starts or joins Ray (see the module docstring) and checks its resources; a line describing
    the cluster. ConfigError naming ``ray_address`` if it cannot be reached, or the key whose
    resources the cluster lacks (then disconnected)."""
    import ray

    address = config.ray_address
    if address and address != "auto":
        _check_reachable(address)
    if address:  # Ray retries a cluster's GCS for a minute; a cluster that answers does so at once
        os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(int(CONNECT_TIMEOUT_S)))
    try:
        if address:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        else:
            ray.init(num_cpus=config.ray_num_cpus or None, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        ray.shutdown()
        where = f"at {address}" if address != "auto" else "on this machine (ray_address: auto)"
        raise ConfigError(f"config key 'ray_address': cannot join the Ray cluster {where}: "
                          f"{' '.join(str(error).split())[:300]}") from None
    resources = ray.cluster_resources()
    cpus, gpus = resources.get("CPU", 0.0), resources.get("GPU", 0.0)
    need_cpus = config.env_runners + (config.learners if config.learner_gpus == 0 else 0)
    need_gpus = config.learners * config.learner_gpus
    problem = ""
    if need_cpus > cpus:
        problem = (f"config keys 'env_runners' and 'learners' ask for {need_cpus} CPUs (one per env runner and "
                   f"CPU learner), but the Ray cluster has {cpus:g}")
    elif need_gpus > gpus:
        problem = f"config key 'learner_gpus' asks for {need_gpus:g} GPUs, but the Ray cluster has {gpus:g}"
    if problem:
        ray.shutdown()
        raise ConfigError(problem)
    nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
    kind = f"the cluster at {address}" if address else "a local Ray instance"
    return f"{kind}: {nodes} node(s), {cpus:g} CPUs, {gpus:g} GPUs"


# -- The algorithm -----------------------------------------------------------------------------


def learner_module(config: TrainConfig) -> str:
    """The id of the module being trained: RLlib's default module on the vector env, ``learner``
    among the AEC mode's modules."""
    if config.rllib_env == "vector":
        from ray.rllib.core import DEFAULT_MODULE_ID

        return DEFAULT_MODULE_ID
    from agents.training.rllib.env import LEARNER

    return LEARNER


def algorithm_config(config: TrainConfig, seed: int) -> Any:
    """RLlib's ``PPOConfig`` for ``config`` (see the module docstring), seeding the envs from ``seed``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.training.rllib.module import MaskedActorCritic

    model_config = {"net_arch": list(config.net_arch), "activation": config.activation}
    batch = config.n_steps * config.envs_per_runner * max(1, config.env_runners)
    algo = PPOConfig()
    if config.rllib_env == "vector":
        from agents.training.rllib.tables import CoreTables

        algo = (
            algo.environment(CoreTables, env_config={"config": config.to_dict()}, disable_env_checking=True)
            .env_runners(num_env_runners=config.env_runners, num_envs_per_env_runner=config.envs_per_runner,
                         rollout_fragment_length=config.n_steps, num_cpus_per_env_runner=1,
                         gym_env_vectorize_mode="vector_entry_point")
            .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedActorCritic, model_config=model_config))
        )
    else:
        from agents.training.rllib.env import LEARNER, YanivMultiAgentEnv, env_config, module_for_agent, module_ids

        modules = module_ids(config.pool_size)
        algo = (
            algo.environment(YanivMultiAgentEnv, env_config=env_config(config), disable_env_checking=True)
            .env_runners(num_env_runners=config.env_runners, num_envs_per_env_runner=config.envs_per_runner,
                         rollout_fragment_length=config.n_steps, num_cpus_per_env_runner=1)
            .multi_agent(policies=set(modules), policy_mapping_fn=module_for_agent, policies_to_train=[LEARNER])
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
                m: RLModuleSpec(module_class=MaskedActorCritic, model_config=model_config) for m in modules}))
        )
    return (
        algo
        .learners(num_learners=config.learners, num_gpus_per_learner=config.learner_gpus)
        .training(train_batch_size_per_learner=batch // max(1, config.learners), minibatch_size=config.batch_size,
                  num_epochs=config.n_epochs, lr=config.learning_rate, gamma=config.gamma, lambda_=config.gae_lambda,
                  clip_param=config.clip_range, entropy_coeff=config.ent_coef, vf_loss_coeff=config.vf_coef,
                  use_kl_loss=False, vf_clip_param=1e12, grad_clip=0.5, grad_clip_by="global_norm")
        .fault_tolerance(restart_failed_env_runners=False)
        .reporting(metrics_num_episodes_for_smoothing=20)
        .debugging(seed=seed, log_level="ERROR")
    )


def _number(tree: dict[str, Any], *path: str) -> float | None:
    """A finite number at ``path`` of a result dict, else None (RLlib leaves NaN where nothing was seen)."""
    value: Any = tree
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


class RLlibTrainer:
    """The algorithm of a run and its schedule between iterations (see the module docstring)."""

    def __init__(self, run: Run, checkpoint: Path | None = None) -> None:
        import torch
        from torch.utils.tensorboard import SummaryWriter

        self.run, self.config, self.state = run, run.config, run.state
        self.pool: OpponentPool = run.pool
        self.steps = self.state["timesteps"]
        self.module = learner_module(self.config)
        torch.set_num_threads(self.config.torch_threads)
        self.algo = algorithm_config(self.config, seed=self.config.seed + self.steps).build_algo()
        if checkpoint is not None:
            self.algo.restore_from_path(str(checkpoint.resolve()))
        remove_other_checkpoints(run.dir / "checkpoints", keep=None if checkpoint is None else checkpoint.name)
        self.push_pool()
        self.writer = SummaryWriter(str(run.dir / "tb" / "ppo_1"), purge_step=self.steps or None)
        text = "\n".join(f"    {k}: {v!r}" for k, v in self.config.to_dict().items())
        self.writer.add_text("config", text, self.steps)
        self.bar: Any = None
        if self.config.progress:
            from tqdm import tqdm

            self.bar = tqdm(total=self.config.total_timesteps, initial=self.steps, unit="step", dynamic_ncols=True)
        self._eval_text = "no evaluation yet"
        self.last_rate: float | None = None

    # -- the modules ------------------------------------------------------------------------------

    def learner_state(self) -> dict[str, Any]:
        return self.algo.learner_group.get_weights([self.module])[self.module]

    def current_policy(self) -> NumpyPolicy:
        """The learner module's actor as a ``NumpyPolicy`` (what the run exports)."""
        from agents.training.rllib.module import numpy_policy

        return numpy_policy(self.learner_state(), self.config.activation,
                            meta={"rules": self.config.rules, "step": self.steps, "backend": "rllib"})

    def push_pool(self) -> None:
        """vector: gives every env runner's tables the pool's snapshots. aec: writes them into the
        snapshot modules (oldest in slot 0), on the learners and every env runner, then publishes the
        count to every env runner's envs."""
        from agents.training.rllib.env import publish_pool_fill, snapshot_module
        from agents.training.rllib.module import module_state

        snapshots = self.pool.snapshots
        if self.config.rllib_env == "vector":
            def give(runner: Any) -> int | None:
                env = getattr(runner, "env", None)
                if env is None:
                    return None  # the local runner of a run with remote ones has no tables
                env.unwrapped.set_pool(snapshots)
                return len(env.unwrapped.pool.snapshots)

            held = self.algo.env_runner_group.foreach_env_runner(give, local_env_runner=True)
            if any(n is not None and n != len(snapshots) for n in held) or all(n is None for n in held):
                raise RuntimeError(f"the env runners hold {held} snapshots after the push, not {len(snapshots)}")
            return
        if snapshots:
            like = self.learner_state()
            weights = {snapshot_module(k): module_state(policy, like) for k, (_, policy) in enumerate(snapshots)}
            self.algo.learner_group.set_weights(weights)
            self.algo.env_runner_group.sync_weights(from_worker_or_learner_group=self.algo.learner_group,
                                                    policies=list(weights), inference_only=True, timeout_seconds=120)
        count = len(snapshots)
        self.algo.env_runner_group.foreach_env_runner(lambda runner: publish_pool_fill(count), local_env_runner=True)

    def runner_nodes(self) -> list[str]:
        """The Ray node id of each remote env runner (empty with ``env_runners: 0``)."""
        import ray

        if not self.config.env_runners:
            return []
        return self.algo.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False)

    def placement(self) -> str:
        """Where the env runners run: each node's id and address, with its count of runners."""
        import ray

        nodes = self.runner_nodes()
        if not nodes:
            return "env runners: none (the trainer's process samples)"
        address = {n["NodeID"]: n.get("NodeManagerAddress", "?") for n in ray.nodes()}
        here = ray.get_runtime_context().get_node_id()
        parts = []
        for node in sorted(set(nodes)):
            where = address.get(node, "?") + (", the trainer's node" if node == here else "")
            parts.append(f"{nodes.count(node)} on node {node[:12]} ({where})")
        return "env runners: " + ", ".join(parts)

    # -- one iteration and the schedule -----------------------------------------------------------

    def iteration(self) -> dict[str, Any]:
        """One PPO iteration (sample, update), its figures to TensorBoard, then whatever fell due."""
        module = self.module
        start = time.perf_counter()
        result = self.algo.train()
        elapsed = time.perf_counter() - start
        learner_steps = _number(result, "env_runners", "num_module_steps_sampled", module) or 0.0
        env_steps = _number(result, "env_runners", "num_env_steps_sampled") or 0.0
        self.steps += int(learner_steps)
        figures = {
            "rollout/ep_rew_mean": _number(result, "env_runners", "module_episode_returns_mean", module),
            "rollout/ep_len_mean": _number(result, "env_runners", "episode_len_mean"),
            "selfplay/env_steps_per_second": env_steps / elapsed if elapsed > 0 else None,
            "selfplay/pool_snapshots": float(len(self.pool.snapshots)),
        }
        sampling = _number(result, "timers", "env_runner_sampling_timer")
        if sampling:
            figures["selfplay/sampling_steps_per_second"] = env_steps / sampling
        for name in ("policy_loss", "vf_loss", "entropy", "total_loss", "vf_explained_var"):
            figures[f"train/{name}"] = _number(result, "learners", module, name)
        for key, value in figures.items():
            if value is not None:
                self.writer.add_scalar(key, value, self.steps)
        self.last_rate = figures["selfplay/env_steps_per_second"]
        self._after_iteration()
        if self.bar is not None:
            self.bar.update(self.steps - self.bar.n)
            rate = f"{self.last_rate:,.0f} env steps/s | " if self.last_rate else ""
            self.bar.set_postfix_str(rate + self._eval_text, refresh=False)
        return result

    def _due(self, key: str, every: int) -> bool:
        """As ``SelfPlayCallback._due``: whether ``state[key]`` has come, moving it past this step if so."""
        due = self.state[key]
        if self.steps < due:
            return False
        self.state[key] = due + ((self.steps - due) // every + 1) * every
        return True

    def _after_iteration(self) -> None:
        c = self.config
        if self._due("next_snapshot", c.snapshot_every):
            self.add_snapshot()
        if c.eval_every and self._due("next_eval", c.eval_every):
            self.evaluate()
        if self._due("next_checkpoint", c.checkpoint_every):
            self.save_checkpoint()

    # -- actions ----------------------------------------------------------------------------------

    def add_snapshot(self) -> None:
        """pool/snapshot_<step>.npz, the pool in ``state``, and the snapshot modules."""
        policy = self.current_policy()
        pool_dir = self.run.dir / "pool"
        pool_dir.mkdir(exist_ok=True)
        policy.save(pool_dir / OpponentPool.file_name(self.steps))
        self.pool.add(self.steps, policy)
        self.state["pool"] = [OpponentPool.file_name(s) for s, _ in self.pool.snapshots]
        self.push_pool()

    def evaluate(self) -> dict[str, dict[str, float]]:
        """The learner's policy against each of ``eval_opponents`` (as the SB3 callback's)."""
        c = self.config
        policy = self.current_policy()
        results = evaluate_opponents(policy, c)
        for opponent, stats in results.items():
            for key, value in stats.items():
                self.writer.add_scalar(f"eval_{opponent}/{key}", value, self.steps)
        score = float(np.mean([r["win_rate"] for r in results.values()]))
        self.writer.add_scalar("eval/mean_win_rate", score, self.steps)
        self.writer.flush()
        self.state.setdefault("evaluations", []).append({"step": self.steps, "results": results})
        first = c.eval_opponents[0]
        self._eval_text = f"eval vs {first}: {results[first]['win_rate']:.0%}"
        if score > self.state.get("best_score", -1.0):
            self.state["best_score"] = score
            self.state["best_step"] = self.steps
            policy.save(self.run.dir / "checkpoints" / "best.npz")
        save_state(self.run.dir, self.state)
        return results

    def save_checkpoint(self) -> Path:
        """checkpoints/rllib_<step>/ (under a .tmp name, then renamed), latest.npz, state.json, and
        only then the deletion of the older RLlib checkpoints."""
        folder = self.run.dir / "checkpoints"
        name = checkpoint_name(self.steps)
        final = folder / name
        if not final.is_dir():
            tmp = folder / f"{name}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            self.algo.save_to_path(str(tmp.resolve()))
            os.replace(tmp, final)
        self.current_policy().save(folder / "latest.npz")
        self.state["timesteps"] = self.steps
        save_state(self.run.dir, self.state)
        remove_other_checkpoints(folder, keep=name)
        return final

    def final_evaluation(self) -> None:
        evaluations = self.state.get("evaluations", [])
        if not evaluations or evaluations[-1]["step"] != self.steps:
            self.evaluate()

    def close(self) -> None:
        """Stops the algorithm (its env runners and learners), closes the curves and the bar."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.writer.close()
        self.algo.stop()


def remove_other_checkpoints(folder: Path, keep: str | None) -> None:
    """Deletes every RLlib checkpoint folder in ``folder`` but ``keep`` (and any ``.tmp`` one a kill left)."""
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        if path.is_dir() and path.name.startswith(CHECKPOINT_PREFIX) and path.name != keep:
            if _step_of_checkpoint(path.name) is not None or path.name.endswith(".tmp"):
                shutil.rmtree(path, ignore_errors=True)


class StopOnInterrupt:
    """While entered, the first Ctrl-C (SIGINT) only sets ``requested``, so the iteration under way
    finishes and the caller saves at a step RLlib completed; a second one raises KeyboardInterrupt."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nCtrl-C: stopping after this iteration, then saving (Ctrl-C again to stop at once)", flush=True)

    def __enter__(self) -> "StopOnInterrupt":
        import signal

        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        import signal

        signal.signal(signal.SIGINT, self._previous)


def disconnect() -> None:
    import ray

    ray.shutdown()
