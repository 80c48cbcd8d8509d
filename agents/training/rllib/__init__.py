"""Training on Ray RLlib: ``backend: rllib``, from train.py, with the run folder and the bot of SB3's.

    pip install -e ".[rllib]"                        # the extra: the tested ray[rllib] release
    python train.py --config configs/rllib.yaml      # a local Ray instance sized to the machine
    python train.py --config configs/rllib.yaml ray_address=auto env_runners=16   # a cluster: docs/distributed.md
    python -m agents.training.rllib.convert runs/NAME/checkpoints/rllib_000100000 policy.npz --trust-pickle

=============  ========================================================================================
module         job
=============  ========================================================================================
``tables``     ``CoreTables``: the learner's tables on the compiled core as the runners' vector env
               (``rllib_env: vector``, the default): next-step autoreset, opponents from the pool
``env``        ``YanivMultiAgentEnv``: the PettingZoo AEC table as an RLlib multi-agent env, seats
               mapped to the learner or to frozen snapshots by their agent ids, baseline seats inside
               (``rllib_env: aec``)
``module``     ``MaskedActorCritic``: SB3's actor and critic MLPs as an RLModule, masking illegal
               actions; ``numpy_policy`` turns its weights into ``agents.policies.ppo.NumpyPolicy``
``trainer``    Ray (local or a cluster), the PPO ``AlgorithmConfig``, ``RLlibTrainer``: iterations,
               snapshots, evaluations, atomic checkpoints, resume
``convert``    an RLlib checkpoint to the project's ``.npz`` weights (then ``agents.policies.export``)
=============  ========================================================================================

What the user keeps from the SB3 backend: the typed config (``agents.training.config``: RLlib's
own keys ``ray_address``, ``ray_num_cpus``, ``env_runners``, ``rllib_env``, ``envs_per_runner``, ``learners``,
``learner_gpus``, ``shared_fraction``; keys only SB3 reads refused by name), the run folder
(``agents.training.runs``; the model checkpoint is ``checkpoints/rllib_<step>/``), TensorBoard
with the evaluations against the baselines, Ctrl-C saving, ``--resume``, and the output: the
learner's actor as ``.npz`` weights (``checkpoints/latest.npz``, ``policy.npz``), so ``ppo:PATH``,
``load_bot``, ``evaluate.py``, the server, the terminal game and the ONNX export take an
RLlib-trained bot as they take an SB3-trained one.

Importing this package imports no Ray; its modules do (``env``, ``module``) or do when called
(``trainer``; ``tables`` needs none), so the base install, which has no Ray, never reaches them unless ``backend: rllib``
asks, and ``require_ray`` then says how to install it in one line.
"""

from agents.training.rllib.trainer import INSTALL, require_ray

__all__ = ["INSTALL", "require_ray"]
