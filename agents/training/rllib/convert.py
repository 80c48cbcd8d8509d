"""An RLlib checkpoint of a run as the project's ``.npz`` policy weights.

    python -m agents.training.rllib.convert runs/NAME/checkpoints/rllib_000100000 OUT.npz --trust-pickle
    python -m agents.policies.export OUT.npz OUT_DIR           # then the ONNX bot, as for any run

CHECKPOINT is an ``Algorithm.save_to_path`` folder of the RLlib backend (``checkpoints/rllib_<step>/``
of a run) or the learner module's own folder inside it
(``learner_group/learner/rl_module/default_policy``, or ``.../learner`` for ``rllib_env: aec``). The learner module's actor
(``agents.training.rllib.module``) becomes a ``NumpyPolicy`` saved as ``.npz``, which loads with no
code (``ppo:OUT.npz``, ``load_bot``, ``evaluate.py``, the export). A run writes the same weights
itself (``checkpoints/latest.npz``, ``policy.npz``), so this is for a checkpoint taken alone.

Trust: RLlib writes its checkpoints as pickles, which can run code when loaded, so reading one takes
``--trust-pickle`` (``trust_pickle=True``): checkpoints you or someone you trust wrote only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents.policies.ppo import NumpyPolicy

MODULES = Path("learner_group") / "learner" / "rl_module"
LEARNER_MODULES = (MODULES / "default_policy", MODULES / "learner")
"""Where the learner module lies in an algorithm checkpoint: RLlib's default module (rllib_env
vector), or the AEC mode's ``learner`` among the snapshot modules."""


def _refuse_untrusted(path: Path, trust_pickle: bool) -> None:
    if not trust_pickle:
        raise ValueError(f"{path} is an RLlib checkpoint, whose files are pickles that can run code when loaded: "
                         "load it only if you trust it, with trust_pickle=True (--trust-pickle). Safe to share and "
                         "load: its run's .npz weights (checkpoints/latest.npz, policy.npz)")


def module_folder(path: Path) -> Path:
    """The learner module's folder in an algorithm checkpoint, or ``path`` if it is one itself."""
    for folder in LEARNER_MODULES:
        if (path / folder).is_dir():
            return path / folder
    if (path / "module_state.pkl").is_file() or (path / "module_state.msgpack").is_file():
        return path
    raise ValueError(f"{path} is not an RLlib checkpoint of this project (no {' or '.join(map(str, LEARNER_MODULES))} "
                     "in it, nor a module's module_state file)")


def load_module(path: str | Path, *, trust_pickle: bool = False) -> Any:
    """The learner ``MaskedActorCritic`` of an RLlib checkpoint (a pickle: only with ``trust_pickle``)."""
    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"no RLlib checkpoint folder at {path}")
    folder = module_folder(path)
    _refuse_untrusted(path, trust_pickle)
    from ray.rllib.core.rl_module.rl_module import RLModule

    from agents.training.rllib.module import MaskedActorCritic

    try:
        module = RLModule.from_checkpoint(str(folder.resolve()))
    except Exception as error:  # a damaged checkpoint fails in many ways
        raise ValueError(f"cannot load the RLlib checkpoint {path}: {type(error).__name__}: {error}") from None
    if not isinstance(module, MaskedActorCritic):
        raise ValueError(f"{path} holds a {type(module).__name__}, not this project's MaskedActorCritic")
    return module


def policy_from_checkpoint(path: str | Path, *, trust_pickle: bool = False, rules: str | None = None) -> NumpyPolicy:
    """The learner's actor of an RLlib checkpoint as a ``NumpyPolicy``; ``rules`` (the meta the
    export writes) defaults to the run's, when the checkpoint lies in a run's checkpoints/ folder."""
    from agents.training.rllib.module import numpy_policy

    path = Path(path)
    module = load_module(path, trust_pickle=trust_pickle)
    if rules is None:
        rules = _run_rules(path)
    return numpy_policy(module.get_state(), module.model_config.get("activation", "tanh"),
                        meta={"rules": rules, "backend": "rllib"})


def _run_rules(path: Path) -> str:
    from agents.training.config import ConfigError, read_yaml_mapping

    config = path.resolve().parent.parent / "config.yaml"
    if path.resolve().parent.name == "checkpoints" and config.is_file():
        try:
            return str(read_yaml_mapping(config).get("rules", "default"))
        except ConfigError:
            pass
    return "default"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.training.rllib.convert",
                                     description="Turn an RLlib checkpoint into .npz policy weights.")
    parser.add_argument("checkpoint", type=Path, help="an RLlib checkpoint folder (checkpoints/rllib_<step>/ of a run)")
    parser.add_argument("out", type=Path, help="the .npz file to write")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="allow the checkpoint's pickles (which can run code when loaded): trusted files only")
    parser.add_argument("--rules", help="the rules preset to record (default: the run's, else default)")
    args = parser.parse_args(argv)
    try:
        from agents.training.rllib import require_ray

        require_ray()
        policy = policy_from_checkpoint(args.checkpoint, trust_pickle=args.trust_pickle, rules=args.rules)
        if args.out.suffix != ".npz":
            raise ValueError(f"the weights file must end in .npz, got {args.out}")
        policy.save(args.out)
    except ValueError as error:
        print(f"convert: {error}", file=sys.stderr)
        return 2
    hidden = [int(w.shape[1]) for w in policy.weights[:-1]]
    print(f"wrote {args.out}: {policy.observation_size} observations -> {policy.num_actions} actions, "
          f"hidden {hidden} {policy.activation}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
