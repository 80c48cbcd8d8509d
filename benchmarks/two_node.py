"""A two-node Ray cluster on this machine, and a tiny RLlib training run through ``ray_address``.

    python benchmarks/two_node.py [--port 6390] [--worker-cpus 2] [--runners 2]

Needs the extra (pip install -e ".[rllib]"). Starts a head node with no CPUs (``ray start --head
--num-cpus 0`` on 127.0.0.1) and a worker node with ``--worker-cpus`` (``ray start --address``),
as two machines would (docs/distributed.md), then runs ``train.py --config configs/rllib.yaml
ray_address=127.0.0.1:PORT env_runners=N`` for a few iterations in a temporary folder. Since the
head offers no CPU, every env runner must land on the worker: the script prints train.py's lines
that say where they run, checks that every runner is on the worker's node and that the run
finished, and stops both nodes (``ray stop``) whatever happens. Exit status 0 when all holds.

It stops every Ray node of this machine's user at the end (``ray stop``): run it where no other
Ray cluster is needed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RAY = str(Path(sys.executable).with_name("ray"))
TINY = ["total_timesteps=300", "n_steps=64", "envs_per_runner=2", "batch_size=64", "n_epochs=1", "net_arch=[32,32]",
        "snapshot_every=150", "pool_size=2", "eval_every=0", "eval_games=4", "eval_players=2", "eval_episode=round",
        "eval_opponents=[greedy]", "checkpoint_every=1000", "progress=false", "players=2-3"]


def ray(*args: str) -> str:
    done = subprocess.run([RAY, *args], capture_output=True, text=True, timeout=180)
    if done.returncode:
        raise RuntimeError(f"ray {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=6390)
    parser.add_argument("--worker-cpus", type=int, default=2)
    parser.add_argument("--runners", type=int, default=2)
    args = parser.parse_args()
    address = f"127.0.0.1:{args.port}"
    # Ray's token authentication: the head writes ~/.ray/auth_token; every node and driver must use it
    # (on separate machines, copy that file or set RAY_AUTH_TOKEN: docs/distributed.md)
    os.environ["RAY_AUTH_MODE"] = "token"
    runs = Path(tempfile.mkdtemp(prefix="two_node_"))
    try:
        ray("start", "--head", "--node-ip-address=127.0.0.1", f"--port={args.port}", "--num-cpus=0",
            "--include-dashboard=false", "--disable-usage-stats")
        ray("start", f"--address={address}", "--node-ip-address=127.0.0.1", f"--num-cpus={args.worker_cpus}",
            "--disable-usage-stats")
        import ray as ray_api

        ray_api.init(address=address, log_to_driver=False, configure_logging=False)
        nodes = [n for n in ray_api.nodes() if n["Alive"]]
        worker = [n["NodeID"] for n in nodes if n["Resources"].get("CPU", 0) > 0]
        print(f"cluster at {address}: {len(nodes)} nodes; the head {'has no' if len(worker) == 1 else 'HAS'} CPUs, "
              f"the worker node {worker[0][:12] if worker else '?'} has {args.worker_cpus}")
        ray_api.shutdown()
        done = subprocess.run(
            [sys.executable, str(ROOT / "train.py"), "--config", str(ROOT / "configs" / "rllib.yaml"),
             f"runs_dir={runs}", "name=two_node", f"ray_address={address}", f"env_runners={args.runners}", *TINY],
            capture_output=True, text=True, cwd=ROOT, timeout=600)
        for line in done.stdout.splitlines():
            if line.startswith(("rllib:", "env runners:", "trained", "  throughput")):
                print("  train.py: " + line.strip())
        if done.returncode:
            print(done.stderr[-3000:])
            return 1
        placement = next(line for line in done.stdout.splitlines() if line.startswith("env runners:"))
        placed = re.findall(r"(\d+) on node (\w+)", placement)
        on_worker = len(worker) == 1 and all(worker[0].startswith(node) for _, node in placed)
        count = sum(int(n) for n, _ in placed)
        print(f"{count} env runner(s), {'all on the worker node' if on_worker else 'NOT all on the worker node'}; "
              f"run finished: {(runs / 'two_node' / 'policy.npz').is_file()}")
        return 0 if on_worker and count == args.runners and (runs / "two_node" / "policy.npz").is_file() else 1
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)
        shutil.rmtree(runs, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
