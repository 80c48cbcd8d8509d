"""The vector environment on the compiled core (``yaniv_env.vector``): both faces, seeding,
rewards against the Python engine's, autoreset, mixed opponents, a short MaskablePPO run, bad input."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from yaniv import Game, Rules, get_rules
from yaniv_env import aec
from yaniv_env.core import batch as B
from yaniv_env.core import bots
from yaniv_env.core import layout as L
from yaniv_env.encoding import action_table, observation_size
from yaniv_env.vector import YanivVecEnv, YanivVectorEnv, parse_players

A5 = action_table(5).size
N5 = observation_size(5)


def legal_random(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``masks``."""
    return (rng.random(masks.shape) * (masks > 0) + (masks > 0)).argmax(axis=1)


class UniformSnapshot:
    """A stand-in for a frozen policy: uniform among the legal actions; records its batch sizes."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert observations.dtype == np.float32 and observations.shape == (len(masks), N5)
        assert masks.dtype == np.int8 and masks.shape[1] == A5
        self.batches.append(len(masks))
        return legal_random(masks, rng)


def check_at_learner(env) -> None:
    """Every game waits for its learner, whose mask allows something."""
    batch = env.batch
    assert (batch.G[:, B.G_STATUS] == B.AT_LEARNER).all()
    assert (batch.S[:, L.CURRENT] == batch.G[:, B.G_LEARNER]).all()
    assert (batch.masks.sum(axis=1) > 0).all()


def python_game(row: np.ndarray) -> SimpleNamespace:
    """The fields of a finished game that ``yaniv.ranking`` and ``aec.rank_rewards`` read, from a row."""
    n = int(row[L.PLAYERS])
    rounds = int(row[L.ROUNDS])
    results = [SimpleNamespace(eliminated=[q for q in range(n) if row[L.OUT_ROUND + q] == k]) for k in range(rounds)]
    results[-1].caller = None if row[L.RES_CALLER] < 0 else int(row[L.RES_CALLER])
    results[-1].points = [int(p) for p in row[L.RES_POINTS : L.RES_POINTS + n]]
    results[-1].hands = [(0,) if row[L.RES_DEALT] >> q & 1 else () for q in range(n)]
    return SimpleNamespace(
        num_players=n, single_round=bool(row[L.SINGLE_ROUND]), is_over=row[L.PHASE] == L.PHASE_OVER,
        one_round=bool(row[L.SINGLE_ROUND]) or row[L.R_GAME_END] == L.ONE_ROUND,
        winners=tuple(q for q in range(n) if row[L.WINNERS] >> q & 1), results=results,
        scores=[int(s) for s in row[L.SCORE : L.SCORE + n]],
    )


# ------------------------------------------------------------------------------------------------
# Rewards: the port of the ranking and the round rewards against yaniv_env.aec on Python games
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rules, players", [("default", 2), ("default", 4), ("german", 3), ("french", 5),
                                            (Rules(game_end="one_round"), 3)])
def test_kernel_rewards_equal_the_python_rewards_of_finished_games(rules, players):
    assert B.ROUND_REWARD_SCALE == aec.ROUND_REWARD_SCALE
    rng = np.random.default_rng(players)
    for seed in range(6):
        for single_round in (True, False):
            game = Game(players, get_rules(rules), seed=seed, single_round=single_round)
            while not game.is_over:
                moves = game.legal_moves()
                game.apply(moves[int(rng.integers(len(moves)))])
            row = L.from_game(game)
            assert python_game(row).winners == tuple(game.winners)
            for q in range(players):
                assert B.rank_reward(row, q) == pytest.approx(aec.rank_rewards(game)[q])
                if single_round:
                    for kind in aec.ROUND_REWARDS:
                        assert B.round_reward(row, q, kind == "relative") == pytest.approx(
                            aec.round_rewards(game.results[-1], kind)[q])


@pytest.mark.parametrize("episode, round_reward, round_share, players", [
    ("round", "points", 0.0, 3), ("round", "relative", 0.0, "2-4"), ("game", "points", 0.0, "2-3"),
    ("game", "relative", 0.5, "2-3")])
def test_rewards_are_paid_at_the_episode_end_as_the_python_rewards(episode, round_reward, round_share, players):
    env = YanivVecEnv(num_envs=16, players=players, opponents="heuristic", episode=episode,
                      round_reward=round_reward, round_share=round_share, seed=5)
    env.reset()
    rng = np.random.default_rng(0)
    ended = 0
    kinds = set()
    for _ in range(60 if episode == "round" else 150):
        obs, rewards, dones, infos = env.step(legal_random(env.batch.masks, rng))
        assert (rewards[~dones] == 0).all()  # rewards come at the episode's end only
        for i in np.flatnonzero(dones):
            row = env.final_rows[int(i)]
            game = python_game(row)
            learner = infos[i]["seat"]  # the learner's seat in the episode that ended
            kinds.add(game.single_round)
            assert game.single_round == (episode == "round") or round_share
            if game.single_round:
                if game.results[-1].caller is None:
                    expected = 0.0
                    assert infos[i]["TimeLimit.truncated"]
                else:
                    expected = aec.round_rewards(game.results[-1], round_reward)[learner]
            else:
                expected = aec.rank_rewards(game)[learner]
            assert rewards[i] == pytest.approx(expected, abs=1e-6)
            ended += 1
        check_at_learner(env)
    assert ended > 10
    assert len(kinds) == (2 if round_share else 1), "a share between 0 and 1 mixes rounds and games"


@pytest.mark.parametrize("episode", ["round", "game"])
def test_a_game_of_one_round_pays_its_rank_in_either_episode(episode):
    """Under game_end=one_round every episode is one round, paid by its rank as the AEC env pays it."""
    env = YanivVecEnv(num_envs=16, players="2-3", rules=Rules(game_end="one_round", jokers=0), opponents="heuristic",
                      episode=episode, round_reward="relative", seed=2)
    env.reset()
    rng = np.random.default_rng(0)
    paid = []
    for _ in range(80):
        obs, rewards, dones, infos = env.step(legal_random(env.batch.masks, rng))
        for i in np.flatnonzero(dones):
            row = env.final_rows[int(i)]
            game = python_game(row)
            assert game.one_round and len(game.results) == 1
            assert rewards[i] == pytest.approx(aec.rank_rewards(game)[infos[i]["seat"]], abs=1e-6)
            assert not infos[i]["TimeLimit.truncated"]
            paid.append(float(rewards[i]))
    assert len(paid) > 10 and len(set(paid)) > 1  # a random learner rarely wins; ties and places do differ


def test_a_round_share_of_one_plays_the_round_episodes():
    """Every episode a round: no draw is made, so the streams are episode "round"'s, move for move."""
    rounds = YanivVecEnv(num_envs=8, players="2-4", opponents="heuristic", episode="round", seed=3)
    shared = YanivVecEnv(num_envs=8, players="2-4", opponents="heuristic", episode="game", round_share=1.0, seed=3)
    rng = np.random.default_rng(1)
    assert np.array_equal(rounds.reset(), shared.reset())
    for _ in range(40):
        actions = legal_random(rounds.batch.masks, rng)
        a, b = rounds.step(actions), shared.step(actions)
        for x, y in zip(a[:3], b[:3]):
            assert np.array_equal(x, y)


# ------------------------------------------------------------------------------------------------
# The two faces
# ------------------------------------------------------------------------------------------------


def test_sb3_face_spaces_terminal_observations_and_wrappers():
    from stable_baselines3.common.vec_env import VecCheckNan, VecMonitor

    env = YanivVecEnv(num_envs=8, players="2-4", opponents="greedy", seed=1)
    assert env.observation_space.shape == (N5,) and env.action_space.n == A5
    wrapped = VecCheckNan(VecMonitor(env), raise_exception=True)
    obs = wrapped.reset()
    assert obs.shape == (8, N5) and obs.dtype == np.float32
    assert all(env.observation_space.contains(o) for o in obs)
    rng = np.random.default_rng(1)
    episodes = 0
    for _ in range(40):
        masks = env.action_masks()
        assert masks.shape == (8, A5) and masks.dtype == bool
        assert np.array_equal(np.stack(wrapped.env_method("action_masks")), masks)
        obs, rewards, dones, infos = wrapped.step(legal_random(masks, rng))
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 8
        for i, info in enumerate(infos):
            assert ("terminal_observation" in info) == dones[i]
            if dones[i]:
                episodes += 1
                assert env.observation_space.contains(info["terminal_observation"])
                assert "episode" in info  # VecMonitor saw the end
                assert not np.array_equal(info["terminal_observation"], obs[i])  # a new deal
        check_at_learner(env)
    assert episodes > 5
    assert wrapped.has_attr("action_masks")
    assert env.get_attr("render_mode") == [None] * 8
    assert set(env.get_attr("num_players")) <= {2, 3, 4}
    seats, counts = env.get_attr("seat"), env.get_attr("num_players")
    assert all(0 <= s < n for s, n in zip(seats, counts))
    assert env.env_is_wrapped(VecMonitor) == [False] * 8
    env.set_attr("note", "x", indices=[2])
    assert env.get_attr("note", indices=2) == ["x"]


def test_gymnasium_face_same_step_autoreset():
    env = YanivVectorEnv(num_envs=6, players=2, opponents="heuristic", max_turns=6)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, infos = env.reset(seed=7)
    assert env.observation_space.contains(obs)
    assert infos["action_mask"].shape == (6, A5) and infos["_action_mask"].all()
    rng = np.random.default_rng(2)
    seen_end = 0
    for _ in range(30):
        obs, rewards, terminated, truncated, infos = env.step(legal_random(infos["action_mask"], rng))
        assert env.observation_space.contains(obs)
        assert np.array_equal(infos["action_mask"], env.batch.masks)
        ended = terminated | truncated
        if ended.any():
            assert np.array_equal(infos["_final_obs"], ended) and np.array_equal(infos["_final_info"], ended)
            for i in np.flatnonzero(ended):
                assert env.single_observation_space.contains(infos["final_obs"][i])
            assert all(infos["final_obs"][i] is None for i in np.flatnonzero(~ended))
            assert (rewards[truncated] == 0).all()
            seen_end += int(ended.sum())
        else:
            assert "final_obs" not in infos
    assert seen_end > 0
    env.close()


def test_gymnasium_face_next_step_autoreset_is_the_same_step_stream_a_step_later():
    """The same seeds and per-env choices give each env the same observations and rewards in both
    modes; next-step returns an episode's last observation (mask all zeros) at its end, then, ignoring
    the action sent (here an illegal one), the next episode's first observation with reward 0."""
    E = 5
    transcripts = {}
    for mode in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
        env = YanivVectorEnv(num_envs=E, players="2-3", opponents="heuristic", episode="round", max_turns=40,
                             autoreset_mode=mode)
        assert env.metadata["autoreset_mode"] == mode and YanivVectorEnv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        obs, infos = env.reset(seed=11)
        picks = [np.random.default_rng(100 + i) for i in range(E)]  # one draw per real decision of env i
        events = [[("obs", obs[i].tobytes())] for i in range(E)]
        dealt = np.zeros(E, dtype=bool)
        for _ in range(120):
            mask = infos["action_mask"]
            actions = np.zeros(E, dtype=np.int64)
            for i in range(E):
                if dealt[i]:
                    actions[i] = int(np.flatnonzero(mask[i] == 0)[0]) if not mask[i].all() else 0
                else:
                    legal = np.flatnonzero(mask[i])
                    actions[i] = legal[int(picks[i].integers(len(legal)))]
            obs, rewards, terminated, truncated, infos = env.step(actions)
            assert np.array_equal(env.action_masks(), infos["action_mask"].astype(bool))
            ended = terminated | truncated
            for i in range(E):
                if mode == AutoresetMode.SAME_STEP:
                    if ended[i]:
                        events[i].append(("end", infos["final_obs"][i].tobytes(), float(rewards[i])))
                        events[i].append(("obs", obs[i].tobytes()))
                    else:
                        events[i].append(("step", float(rewards[i]), obs[i].tobytes()))
                elif dealt[i]:
                    assert rewards[i] == 0 and not ended[i] and infos["action_mask"][i].any()
                    events[i].append(("obs", obs[i].tobytes()))
                elif ended[i]:
                    assert not infos["action_mask"][i].any()
                    events[i].append(("end", obs[i].tobytes(), float(rewards[i])))
                else:
                    events[i].append(("step", float(rewards[i]), obs[i].tobytes()))
            if mode == AutoresetMode.NEXT_STEP:
                dealt = ended
        transcripts[mode] = events
    same, nxt = transcripts[AutoresetMode.SAME_STEP], transcripts[AutoresetMode.NEXT_STEP]
    assert sum(e[0] == "end" for ev in nxt for e in ev) >= 10
    for i in range(E):
        n = len(nxt[i])
        assert nxt[i] == same[i][:n], f"env {i} differs"
    with pytest.raises(ValueError, match="autoreset_mode"):
        YanivVectorEnv(num_envs=2, autoreset_mode="later")
    with pytest.raises(ValueError, match="not offered"):
        YanivVectorEnv(num_envs=2, autoreset_mode=AutoresetMode.DISABLED)


def test_max_turns_truncates_and_redeals_until_the_learner_moves():
    # One move per episode: a deal where the opponent moves first would end before the learner's
    # first decision, so it is dealt again until the learner holds seat 0; then its move truncates.
    env = YanivVecEnv(num_envs=10, players=2, opponents="random", max_turns=1, seed=3)
    env.reset()
    rng = np.random.default_rng(3)
    for _ in range(5):
        assert env.get_attr("seat") == [0] * 10
        obs, rewards, dones, infos = env.step(legal_random(env.batch.masks, rng))
        assert dones.all() and (rewards == 0).all()
        assert all(info["TimeLimit.truncated"] for info in infos)


def test_rules_turn_cap_truncates_a_round_with_reward_zero():
    env = YanivVecEnv(num_envs=8, players=2, rules={"max_turns": 4}, opponents="random", seed=4)
    env.reset()
    rng = np.random.default_rng(4)
    truncated = 0
    for _ in range(20):
        _, rewards, dones, infos = env.step(legal_random(env.batch.masks, rng))
        for i in np.flatnonzero(dones):
            if infos[i]["TimeLimit.truncated"]:
                truncated += 1
                assert rewards[i] == 0 and env.final_rows[int(i)][L.RES_CALLER] == -1
    assert truncated > 0


# ------------------------------------------------------------------------------------------------
# Determinism and opponents
# ------------------------------------------------------------------------------------------------


def mixed_env(seed: int, snapshot: UniformSnapshot, draws: list) -> YanivVecEnv:
    def draw(rng: np.random.Generator, seats: int) -> list:
        draws.append(seats)
        return [("heuristic:score_weight=2", snapshot, "greedy")[int(rng.integers(3))] for _ in range(seats)]

    specs = ["random", ("greedy", "heuristic"), snapshot, draw, (snapshot, "heuristic:call_risk=0.1")]
    return YanivVecEnv(num_envs=5, players="2-3", opponents=specs, episode="game", seed=seed)


def rollout(env: YanivVecEnv, steps: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = [env.reset().copy()]
    for _ in range(steps):
        obs, rewards, dones, infos = env.step(legal_random(env.batch.masks, rng))
        out += [obs.copy(), rewards.copy(), dones.copy(),
                [info.get("terminal_observation", np.zeros(0)).copy() for info in infos]]
    return out


def same(a: list, b: list) -> bool:
    return all(
        all(np.array_equal(u, v) for u, v in zip(x, y)) if isinstance(x, list) else np.array_equal(x, y)
        for x, y in zip(a, b)
    ) and len(a) == len(b)


def test_threads_give_the_serial_kernels_trajectories_game_for_game():
    """With threads, each kernel call's games split in parts run on a thread pool; a game's row and
    generator are its own, so every trajectory is the serial one, with every kind of seat, table
    sizes, rule sets and single rounds drawn per episode."""

    def make(threads: int) -> YanivVecEnv:
        snapshot = UniformSnapshot()

        def draw(rng: np.random.Generator, seats: int) -> list:
            return [("heuristic:score_weight=2", snapshot, "greedy")[int(rng.integers(3))] for _ in range(seats)]

        specs = ["random", "heuristic", snapshot, draw, "search:8"] * 3
        return YanivVecEnv(num_envs=15, players="2-5", opponents=specs, episode="game", round_share=0.5, seed=7,
                           rule_sets=["default", "french", {"jokers": 0, "game_end": "one_round"}], threads=threads)

    serial = rollout(make(1), 150, 0)
    assert same(serial, rollout(make(4), 150, 0))
    assert same(serial, rollout(make(16), 150, 0))  # fewer games than twice the threads: one part
    for bad in (0, 2.0, True, 257):
        with pytest.raises(ValueError, match="threads must be an integer from 1"):
            YanivVecEnv(num_envs=2, threads=bad)


def test_same_seed_same_trajectories_with_mixed_opponents():
    runs = []
    for seed in (11, 11, 12):
        snapshot, draws = UniformSnapshot(), []
        runs.append((rollout(mixed_env(seed, snapshot, draws), 60, 0), snapshot, draws))
    assert same(runs[0][0], runs[1][0])
    assert not same(runs[0][0], runs[2][0])
    _, snapshot, draws = runs[0]
    assert draws and set(draws) <= {1, 2}  # other seats at 2 or 3 players
    assert snapshot.batches and max(snapshot.batches) > 1  # one forward pass for several games
    # a reset with a new seed replays a fresh env built with it
    env = mixed_env(11, UniformSnapshot(), [])
    rollout(env, 10, 5)
    env.seed(12)
    assert same(rollout(env, 60, 0), runs[2][0])


def test_mixed_opponents_seat_the_controllers_named():
    snapshot = UniformSnapshot()
    env = YanivVecEnv(num_envs=4, players=4, seed=0,
                      opponents=["random", ("greedy", "heuristic:score_weight=2", snapshot), snapshot, "heuristic"])
    env.reset()
    G = env.batch.G
    for i, expected in enumerate([(B.RANDOM,) * 3, (B.GREEDY, B.HEURISTIC, B.SNAPSHOT), (B.SNAPSHOT,) * 3,
                                  (B.HEURISTIC,) * 3]):
        learner = int(G[i, B.G_LEARNER])
        kinds = tuple(int(G[i, B.G_SEAT_KIND + (learner + 1 + k) % 4]) for k in range(3))
        assert kinds == expected and G[i, B.G_SEAT_KIND + learner] == B.LEARNER
    heuristic_row = G[1, B.G_SEAT_PARAM + (int(G[1, B.G_LEARNER]) + 2) % 4]
    assert env.batch.P[heuristic_row][bots.P_SCORE_WEIGHT] == 2.0
    rng = np.random.default_rng(0)
    for _ in range(30):
        env.step(legal_random(env.batch.masks, rng))
        check_at_learner(env)
    # a change of opponents takes effect at each env's next episode; unused snapshots are dropped
    env.batch._drop_unused_snapshots()
    assert env.batch._snapshots == [snapshot]
    env.set_attr("opponents", "greedy", indices=[0])
    assert env.get_attr("opponents", indices=[0]) == ["greedy"]
    assert (G[0, B.G_OTHER_KIND : B.G_OTHER_KIND + 3] == B.GREEDY).all()


def test_search_seats_move_in_one_compiled_call_as_search_action_would():
    """A "search:N" seat is searched on the game rows for every table at once: the same actions as
    search_action on each row with that game's generator, legal play, the same seed the same run."""
    from yaniv_env.core import search
    from yaniv_env.vector import CompiledSearch

    env = YanivVecEnv(num_envs=4, players="2-3", opponents=("search:8", "heuristic"), seed=3)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(25):
        S, R = env.batch.S.copy(), env.batch.R.copy()
        games = np.arange(4)
        got = CompiledSearch(8).act_rows(S.copy(), R.copy(), games)
        params, ranking = search.search_params(8), bots.heuristic_params(call_risk=search.CALL_RISK)
        want = [search.search_action(S[g].copy(), R[g].copy(), params, ranking) for g in games]
        assert got.tolist() == want
        env.step(legal_random(env.batch.masks, rng))
        check_at_learner(env)
    kinds = env.batch.G[:, B.G_SEAT_KIND : B.G_SEAT_KIND + 3]
    assert (kinds == B.SNAPSHOT).any(), "the search seats are played outside the bots' kernel"
    runs = []
    for _ in range(2):
        env = YanivVecEnv(num_envs=3, players=2, opponents="search:4", seed=5)
        runs.append(rollout(env, 30, 0))
    assert same(runs[0], runs[1])
    for spec, words in (("search:0", "budget"), ("search:many", "budget"), ("search:9999999999", "budget")):
        with pytest.raises(ValueError, match=words):
            YanivVecEnv(num_envs=2, opponents=spec)


def test_rule_sets_are_drawn_per_episode_and_shown_in_the_observation():
    """Each episode draws its rules from rule_sets with the env's generator: the rows play them (the
    Yaniv threshold, the jokers), get_attr names them, the observation's settings differ, and the
    same seed draws the same sequence."""
    sets = ["default", "french", {"jokers": 0, "yaniv_threshold": 6}]
    env = YanivVecEnv(num_envs=6, players="2-3", opponents="heuristic", rule_sets=sets, seed=2)
    env.reset()
    rng = np.random.default_rng(0)
    seen, settings = set(), {}
    for _ in range(300):
        for i in range(6):
            rules = env.get_attr("rules", indices=[i])[0]
            row = env.batch.S[i]
            assert row[L.R_THRESHOLD] == rules.yaniv_threshold
            seen.add((rules.yaniv_threshold, rules.jokers))
            settings.setdefault(rules.yaniv_threshold, env.batch.obs[i][-encoding_settings():].copy())
        env.step(legal_random(env.batch.masks, rng))
        check_at_learner(env)
    assert seen == {(7, 2), (5, 2), (6, 0)}
    assert not np.array_equal(settings[7], settings[6]) and not np.array_equal(settings[7], settings[5])
    runs = [rollout(YanivVecEnv(num_envs=3, players=2, rule_sets=sets, seed=9), 40, 1) for _ in range(2)]
    assert same(runs[0], runs[1])
    for bad, words in ((["default", {"hand_size": 7}], "hand size"), ("french", "non-empty list"),
                       ([{"yaniv_threshold": -1}], r"rule_sets\[0\]"), ([], "non-empty list")):
        with pytest.raises(ValueError, match=words):
            YanivVecEnv(num_envs=2, rule_sets=bad)


def test_every_rule_field_of_a_row_is_what_write_rules_writes_for_its_rules():
    """A new episode copies its rule set's fields, encoded once when the sets are given: over 200
    sets of the house space (every reset value list, limit, draw rule), each row's rule fields are
    those that layout.write_rules writes for the rules get_attr names, episode after episode."""
    from yaniv.rule_space import get_rule_space

    sets = get_rule_space("house").sample(200, np.random.default_rng(4))
    env = YanivVecEnv(num_envs=8, players="2-4", opponents="heuristic", rule_sets=sets, seed=5)
    env.reset()
    rng = np.random.default_rng(1)
    fields = L.RULE_FIELDS
    for rules in sets[:20]:  # write_rules writes every field of RULE_FIELDS and nothing else
        row = np.full(L.WIDTH, -7, dtype=np.int64)
        L.write_rules(row, rules)
        assert (row[fields] != -7).all() and (np.delete(row, np.arange(L.WIDTH)[fields]) == -7).all()
    seen = set()
    for _ in range(150):
        for i, rules in enumerate(env.get_attr("rules")):
            expected = L.new_rows(1)[0]
            L.write_rules(expected, rules)
            np.testing.assert_array_equal(env.batch.S[i, fields], expected[fields])
            seen.add(rules)
        env.step(legal_random(env.batch.masks, rng))
    assert len(seen) > 30
    env.set_rule_sets(sets[:3])  # set_rule_sets encodes its sets too
    for _ in range(150):
        env.step(legal_random(env.batch.masks, rng))
    for i, rules in enumerate(env.get_attr("rules")):
        expected = L.new_rows(1)[0]
        L.write_rules(expected, rules)
        np.testing.assert_array_equal(env.batch.S[i, fields], expected[fields])


def test_set_rule_sets_changes_the_rules_of_the_episodes_to_come_and_refuses_a_bad_list_whole():
    env = YanivVecEnv(num_envs=4, players=2, opponents="heuristic", rule_sets=["default"], seed=3)
    env.reset()
    with pytest.raises(ValueError, match=r"rule_sets\[1\]"):
        env.set_rule_sets(["french", {"yaniv_threshold": -1}])
    assert env.batch.rule_sets == [get_rules("default")]  # kept whole
    env.set_rule_sets([{"jokers": 0, "game_end": "one_round"}])
    rng = np.random.default_rng(0)
    started = env.get_attr("rules")
    ended = np.zeros(4, dtype=bool)
    for _ in range(500):
        _, _, dones, _ = env.step(legal_random(env.batch.masks, rng))
        ended |= dones
        for i, rules in enumerate(env.get_attr("rules")):
            assert rules == (started[i] if not ended[i] else get_rules("default").replace(jokers=0, game_end="one_round"))
    assert ended.all()


def test_set_players_changes_the_table_sizes_of_the_episodes_to_come_and_refuses_what_cannot_deal():
    env = YanivVecEnv(num_envs=4, players="2-6", opponents="heuristic", seed=4)
    env.reset()
    with pytest.raises(ValueError, match="players must be"):
        env.set_players("1-3")
    with pytest.raises(ValueError, match="rules of env 0: 8 players x 7 cards"):
        YanivVecEnv(num_envs=4, players="2-6", rules={"hand_size": 7}).set_players(8)
    assert env.batch.counts == (2, 3, 4, 5, 6)  # kept whole
    tuples = YanivVecEnv(num_envs=2, players=2, opponents=("heuristic",))
    with pytest.raises(ValueError, match="opponents of env 0 name 1 seats, and the largest table needs 3"):
        tuples.set_players(4)
    assert tuples.batch.counts == (2,)
    env.set_players(2)
    rng = np.random.default_rng(0)
    started = env.get_attr("num_players")
    ended, seen = np.zeros(4, dtype=bool), set()
    for _ in range(500):
        _, _, dones, _ = env.step(legal_random(env.batch.masks, rng))
        ended |= dones
        for i, n in enumerate(env.get_attr("num_players")):
            assert n == (started[i] if not ended[i] else 2)
            seen.add(n)
    assert ended.all() and 2 in seen


def encoding_settings() -> int:
    from yaniv_env import encoding

    return encoding.SETTINGS_FEATURES


def test_numpy_policy_snapshots_play_batched():
    ppo = pytest.importorskip("agents.policies.ppo")
    if not hasattr(ppo.NumpyPolicy, "act_batch"):
        pytest.skip("NumpyPolicy.act_batch not available")
    rng = np.random.default_rng(0)
    policy = ppo.NumpyPolicy([rng.normal(size=(16, N5)).astype(np.float32) * 0.1,
                              rng.normal(size=(A5, 16)).astype(np.float32)],
                             [np.zeros(16, np.float32), np.zeros(A5, np.float32)], "tanh")
    env = YanivVecEnv(num_envs=6, players=3, opponents=policy, seed=0)
    env.reset()
    for _ in range(20):
        env.step(legal_random(env.batch.masks, rng))
        check_at_learner(env)


def test_maskable_ppo_learns_a_few_steps():
    from sb3_contrib import MaskablePPO

    env = YanivVecEnv(num_envs=4, players="2-3", opponents=["heuristic", "random", "greedy", UniformSnapshot()],
                      seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]}, device="cpu")
    model.learn(256)
    assert model.num_timesteps >= 256


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------


def test_bad_actions_are_refused_by_name_and_change_nothing():
    env = YanivVecEnv(num_envs=3, players=2, opponents="random", seed=0)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros(3, dtype=np.int64))
    env.reset()
    rows = env.batch.S.copy()
    good = legal_random(env.batch.masks, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step(good[:2])
    with pytest.raises(ValueError, match="integer"):
        env.step(good.astype(np.float64))
    with pytest.raises(ValueError, match="integer"):
        env.step(np.ones(3, dtype=bool))
    bad = good.copy()
    bad[2] = A5
    with pytest.raises(ValueError, match=f"env 2: {A5} is not an action id"):
        env.step(bad)
    illegal = int(np.flatnonzero(env.batch.masks[1] == 0)[0])
    bad = good.copy()
    bad[1] = illegal
    with pytest.raises(ValueError, match=rf"env 1: illegal action {illegal} \("):
        env.step(bad)
    assert np.array_equal(env.batch.S, rows)
    env.step(good)


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown bot 'clever'"):
        YanivVecEnv(num_envs=2, opponents="clever")
    with pytest.raises(ValueError, match="call_risky"):
        YanivVecEnv(num_envs=2, opponents="heuristic:call_risky=1")
    with pytest.raises(ValueError, match="gamma must not be negative"):
        YanivVecEnv(num_envs=2, opponents="heuristic:gamma=-1")
    with pytest.raises(ValueError, match="only the heuristic"):
        YanivVecEnv(num_envs=2, opponents="greedy:x=1")
    with pytest.raises(ValueError, match="one spec per env"):
        YanivVecEnv(num_envs=3, opponents=["random", "greedy"])
    with pytest.raises(ValueError, match="at least 3"):
        YanivVecEnv(num_envs=2, players="2-4", opponents=("random", "greedy"))
    with pytest.raises(ValueError, match="act_batch"):
        YanivVecEnv(num_envs=2, opponents=3)
    with pytest.raises(ValueError, match="players"):
        YanivVecEnv(num_envs=2, players="2-9")
    with pytest.raises(ValueError, match="same hand size"):
        YanivVecEnv(num_envs=2, rules=["default", {"hand_size": 7}])
    with pytest.raises(ValueError, match="episode"):
        YanivVecEnv(num_envs=2, episode="match")
    with pytest.raises(ValueError, match="num_envs"):
        YanivVecEnv(num_envs=0)
    for share in (1.5, -0.1, True, "half"):
        with pytest.raises(ValueError, match="round_share must be a number from 0 to 1"):
            YanivVecEnv(num_envs=2, episode="game", round_share=share)
    with pytest.raises(ValueError, match="round_share mixes single rounds into episode 'game', not 'round'"):
        YanivVecEnv(num_envs=2, episode="round", round_share=0.5)
    assert parse_players("2-4") == (2, 3, 4) and parse_players([2, 5]) == (2, 5) and parse_players(3) == (3,)


def test_a_snapshot_choosing_an_illegal_action_is_named():
    class Stubborn:
        def act_batch(self, observations, masks, rng):
            return np.full(len(masks), A5 - 1)  # "keep" outside a slamdown: never legal

        def __repr__(self) -> str:
            return "Stubborn()"

    env = YanivVecEnv(num_envs=2, players=2, opponents=Stubborn(), seed=0)
    with pytest.raises(ValueError, match=r"snapshot Stubborn\(\) chose illegal action"):
        env.reset()
        env.step(legal_random(env.batch.masks, np.random.default_rng(0)))


def test_kernel_play_reports_a_refused_move():
    env = YanivVecEnv(num_envs=2, players=2, opponents="random", seed=0)
    env.reset()
    batch = env.batch
    illegal = np.array([int(np.flatnonzero(batch.masks[0] == 0)[0]), 0])
    assert B.play(batch.S, batch.R, batch.G, batch.W, batch.P, batch.C, np.array([0]), illegal[:1]) == 0
    assert batch.G[0, B.G_STATUS] == B.ERROR
