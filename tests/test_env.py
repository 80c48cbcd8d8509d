"""The PettingZoo AEC environment and the Gymnasium view: API checkers, masks against the engine,
observations that never see hidden cards, rewards, and a short MaskablePPO run."""

from __future__ import annotations

import re
import warnings

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import yaniv_env
from yaniv import DECK, POINTS, YANIV, Game, Move, Rules, parse_cards
from yaniv.cards import deck_cards
from yaniv.game import OVER
from yaniv.rules import RULE_FIELDS
from yaniv_env import encoding
from yaniv_env.aec import round_rewards
from yaniv.odds import at_most
from yaniv_env.encoding import DRAW_SOURCES, OPPONENT, SELF, action_table, observation_layout

# PettingZoo's api_test notes that dict observations are not arrays; they are the documented format.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
]


@pytest.mark.parametrize("players", [2, 3, 4, 8])
@pytest.mark.parametrize("episode", ["round", "game"])
@pytest.mark.parametrize("rules", ["default", "german"])
def test_pettingzoo_api_and_seed(players, episode, rules):
    api_test(yaniv_env.env(num_players=players, episode=episode, rules=rules), num_cycles=200)
    seed_test(lambda: yaniv_env.env(num_players=players, episode=episode, rules=rules), num_cycles=200)


def test_gymnasium_and_sb3_checkers():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gymnasium.make(yaniv_env.GYM_ID, num_players=3)
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(yaniv_env.YanivGymEnv(num_players=3, rules="german"))


def legal_actions_from_engine(env, game: Game) -> set[int]:
    table = env.table
    return {table.to_action(move, game.view(game.current)) for move in game.legal_moves()}


@pytest.mark.parametrize(
    "players,rules",
    [(2, "default"), (4, "german"), (3, Rules(slamdown=True, jokers_in_sets=True, draw_from_run="ends_and_jokers")),
     (8, "default"), (5, Rules(hand_size=7, jokers=1))],
    ids=["2-default", "4-german", "3-house", "8-default", "5-seven-cards"],
)
def test_mask_is_exactly_the_engines_legal_moves_and_every_unmasked_action_applies(players, rules):
    env = yaniv_env.raw_env(num_players=players, rules=rules, episode="game", max_turns=1500)
    rng = np.random.default_rng(players)
    turns = 0
    for episode in range(3):
        env.reset(seed=episode)
        while env.agents:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            obs = env.observe(agent)
            mask = obs["action_mask"]
            assert set(np.flatnonzero(mask)) == legal_actions_from_engine(env, env.game)
            for other in env.agents:  # agents not on turn see an all-zero mask
                if other != agent:
                    assert not env.observe(other)["action_mask"].any()
            assert obs["observation"].dtype == np.float32
            assert 0.0 <= obs["observation"].min() and obs["observation"].max() <= 1.0
            action = int(rng.choice(np.flatnonzero(mask)))
            legal_moves = set(env.game.legal_moves())
            assert all(env.table.to_move(int(a), env.game.view(env.game.current)) in legal_moves for a in np.flatnonzero(mask)), (
                "each allowed action is exactly one of the engine's legal moves (cards in canonical order)"
            )
            env.step(action)  # raw_env raises if an unmasked action were illegal
            turns += 1
    assert turns > 1000


def test_illegal_actions_raise_in_the_raw_env_with_the_reason():
    env = yaniv_env.raw_env(num_players=2)
    env.reset(seed=3)
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match=rf"illegal action {illegal} .*player_"):
        env.step(illegal)
    with pytest.raises(ValueError, match="out of range"):
        env.step(env.table.size)
    # the wrapped env ends the episode with -1 for the offender instead
    wrapped = yaniv_env.env(num_players=2)
    wrapped.reset(seed=3)
    offender = wrapped.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(illegal)
    assert all(wrapped.terminations.values()) and wrapped.rewards[offender] == -1


def test_observation_ignores_hidden_cards():
    """Swap the other players' unseen cards and the deck: the observation must not move."""
    env = yaniv_env.raw_env(num_players=4, rules=Rules(slamdown=True))
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(6):
        env.reset(seed=seed)
        while env.agents and not env.game.is_over:
            agent = env.agent_selection
            for observer in range(4):
                before = env.observer.observe(env.game.view(observer))
                mask_before = env.observer.action_mask(env.game.view(observer))
                shuffled = env.game.sample_hidden(observer, rng)
                if hidden_cards(shuffled, observer) == hidden_cards(env.game, observer):
                    continue
                assert np.array_equal(env.observer.observe(shuffled.view(observer)), before)
                assert np.array_equal(env.observer.action_mask(shuffled.view(observer)), mask_before)
                checked += 1
            mask = env.observe(agent)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
    assert checked > 200


@pytest.mark.parametrize("players,rules", [(8, "default"), (3, Rules(slamdown=True)), (2, "german")])
def test_the_observers_running_memos_never_go_stale(players, rules):
    """The observer carries the legal discards of the last hand and the stakes of each score from one
    call to the next. Across turns, reshuffles, new rounds and other games observed in between, it
    must give exactly what a fresh observer gives."""
    env = yaniv_env.raw_env(num_players=players, rules=rules, episode="game")
    rng = np.random.default_rng(1)
    reshuffles = rounds = 0
    for seed in range(3):
        env.reset(seed=seed)
        for _ in range(250):
            if not env.agents or env.game.is_over:
                break
            game = env.game
            fresh = encoding.Observer(env.rules, players)
            for seat in range(players):
                assert np.array_equal(env.observer.observe(game.view(seat)), fresh.observe(game.view(seat)))
                assert np.array_equal(env.observer.action_mask(game.view(seat)), fresh.action_mask(game.view(seat)))
            other = game.sample_hidden(game.current, rng)  # another game, observed in between
            assert np.array_equal(env.observer.observe(other.view(other.current)), fresh.observe(game.view(game.current)))
            reshuffles += any(e.kind == "reshuffle" for e in game.events[-1:])
            round_number = game.round_number
            env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
            rounds += env.game.round_number != round_number  # env.game: brought up to date on access
    assert reshuffles > 0 and rounds > 0


def hidden_cards(game: Game, observer: int) -> tuple:
    return tuple(tuple(game.hands[q]) for q in range(game.num_players) if q != observer) + (tuple(game.deck),)


def test_observation_reflects_what_the_player_saw():
    """A card taken from the pile shows in the taker's known cards, seen from every other seat."""
    env = yaniv_env.raw_env(num_players=3)
    env.reset(seed=0)
    game = env.game
    taker = game.current
    top = game.pile[-1].drawable[0]
    move = next(m for m in game.legal_moves() if m.kind == "discard" and m.draw == top)
    env.step(env.table.to_action(move, game.view(game.current)))
    for observer in range(3):
        if observer == taker:
            continue
        obs = env.observer.observe(game.view(observer))
        k = (taker - observer) % 3
        opponents = env.observer.view("opponents", obs).reshape(7, -1)
        assert opponents[k - 1, encoding.OPPONENT_SCALARS + top] == 1.0
        assert opponents[k - 1, OPPONENT.present] == 1.0 and opponents[2:, OPPONENT.present].sum() == 0  # absent: 0


def test_observation_holds_each_opponents_last_discard_and_the_assaf_odds():
    """Seat 0 throws a single card and draws from the deck, seat 1 takes the pile card: seat 2 sees
    each one's last discard, the odds that it Assafs a call (yaniv.odds, checked by hand in
    tests/test_odds.py), their combination and its own total's steps."""
    env = yaniv_env.raw_env(num_players=3)
    env.reset(seed=0)
    game = env.game
    assert game.current == 0
    throw0 = max(game.hands[0])
    env.step(env.table.to_action(Move("discard", (throw0,), DECK), game.view(0)))
    taken = game.pile[-1].drawable[0]
    move1 = next(m for m in game.legal_moves() if m.kind == "discard" and len(m.cards) == 1 and m.draw == taken)
    env.step(env.table.to_action(move1, game.view(game.current)))
    obs = env.observer.observe(game.view(2))
    opponents = env.observer.view("opponents", obs).reshape(7, -1)
    total = game.totals[2]
    odds = []
    for row, cap, fresh, known in ((0, POINTS[throw0], 1, 0), (1, POINTS[move1.cards[0]], 0, POINTS[taken])):
        assert opponents[row, OPPONENT.has_discarded : OPPONENT.assaf_odds].tolist() == pytest.approx([1.0, cap / 10, fresh])
        room = total - known  # an equal total Assafs under the default rules
        hidden = 5 - (1 if known else 0)  # five cards; seat 1's pile card is known
        expected = at_most(2, cap, fresh, hidden - fresh)[room] if room >= 0 else 0.0
        assert opponents[row, OPPONENT.assaf_odds] == pytest.approx(expected)
        odds.append(expected)
    assert opponents[2:, OPPONENT.has_discarded : OPPONENT.assaf_odds + 1].sum() == 0  # absent seats
    own = env.observer.view("self", obs)
    assert own[SELF.assafed_odds] == pytest.approx(1 - (1 - odds[0]) * (1 - odds[1]))
    assert own[SELF.total_le_0 :].tolist() == [float(total <= t) for t in range(11)]
    # before anyone has discarded, a hand is plain cards of the deck
    env.reset(seed=0)
    first = env.observer.view("opponents", env.observer.observe(env.game.view(1))).reshape(7, -1)
    assert first[:2, OPPONENT.has_discarded : OPPONENT.assaf_odds].sum() == 0
    assert first[0, OPPONENT.assaf_odds] == pytest.approx(at_most(2, -1, 0, 5)[env.game.totals[1]])


def test_layout_table_in_the_docstring_matches_the_space():
    """The segment table of yaniv_env.encoding is the layout the code builds."""
    doc = encoding.__doc__
    rows = re.findall(r"^(\w+)\s{2,}\S.*?\s{2,}(\d+)\s{2,}", doc, flags=re.M)
    documented = [(name, int(size)) for name, size in rows if name in dict(observation_layout(5))]
    assert documented == observation_layout(5)
    total = sum(size for _, size in observation_layout(5))
    env = yaniv_env.raw_env(num_players=2)
    assert env.observation_space("player_0")["observation"].shape == (total,)
    assert "observation_size(hand_size)" in yaniv_env.aec.__doc__  # derived, never typed as a number
    table = action_table(5)
    assert table.size == 31 * DRAW_SOURCES + 3 == 189
    assert "189 actions" in doc and f"{action_table(7).size} with seven" in doc


def test_the_settings_segment_covers_every_rule_setting():
    """Each field of Rules is observed or left out with a reason: a new setting must choose."""
    observed = {field for _, field, _ in encoding.SETTINGS}
    assert not observed & set(encoding.SETTINGS_NOT_OBSERVED)
    assert observed | set(encoding.SETTINGS_NOT_OBSERVED) == set(RULE_FIELDS)
    # each observed feature moves with its setting
    for name, field, value in encoding.SETTINGS:
        assert 0.0 <= float(value(Rules())) <= 1.0
    assert encoding.settings_vector(Rules(slamdown=True), 3)[[len(encoding.SETTINGS) - 1, len(encoding.SETTINGS) + 1]].tolist() == [1, 1]


def test_one_observation_size_for_every_player_count():
    sizes = {yaniv_env.raw_env(num_players=n).observer.size for n in range(2, 9)}
    assert len(sizes) == 1


@pytest.mark.parametrize("round_reward", ["points", "relative"])
def test_round_rewards_for_every_agent(round_reward):
    env = yaniv_env.raw_env(num_players=3, episode="round", round_reward=round_reward)
    env.reset(seed=1)
    # Force a showdown: give the player to move a Yaniv hand and the others known totals.
    caller = env.game.current
    texts = {caller: "AS 2S", (caller + 1) % 3: "KH QH", (caller + 2) % 3: "3C 4D"}
    hands = [parse_cards(texts[q]) for q in range(3)]
    rest = [c for c in deck_cards(2) if c not in {c for h in hands for c in h}]
    env.game = game = Game.from_position(hands, [rest[:1]], rest[1:], single_round=True, current=caller)
    env.step(env.table.yaniv)
    assert game.phase == OVER
    # points: the caller 3 (A + 2) wins and takes 0; K Q takes 20, 3 4 takes 7
    expected = {caller: 0.0, (caller + 1) % 3: -20 / 50, (caller + 2) % 3: -7 / 50}
    if round_reward == "relative":  # (the others' mean - own) / 50
        expected = {caller: (27 / 2) / 50, (caller + 1) % 3: (7 / 2 - 20) / 50, (caller + 2) % 3: (20 / 2 - 7) / 50}
    for seat, value in expected.items():
        assert env.rewards[f"player_{seat}"] == pytest.approx(value)
        assert env._cumulative_rewards[f"player_{seat}"] == pytest.approx(value)
    assert all(env.terminations.values())


def test_relative_round_rewards_leave_out_seats_not_in_the_round():
    from yaniv.game import RoundResult

    # seat 2 is out of the game (no hand); seat 0 was Assafed by seat 1: 30 + its 5 points
    result = RoundResult(
        0, ((1, 3), (0,), (), (9, 10)), (5, 1, 0, 19), (35, 0, 0, 19), (1,), (1,), (), (35, 0, 250, 19), (), 12
    )
    assert round_rewards(result, "points") == pytest.approx([-35 / 50, 0.0, 0.0, -19 / 50])
    assert round_rewards(result, "relative") == pytest.approx(
        [((0 + 19) / 2 - 35) / 50, ((35 + 19) / 2) / 50, 0.0, ((35 + 0) / 2 - 19) / 50]
    )
    with pytest.raises(ValueError, match="round_reward must be one of"):
        yaniv_env.raw_env(round_reward="score")


@pytest.mark.parametrize("seed", range(4))
def test_game_rewards_rank_the_players_by_elimination_order(seed):
    game = Game(4, seed=seed)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        legal = game.legal_moves()
        game.apply(legal[int(rng.integers(len(legal)))])
    rewards = yaniv_env.rank_rewards(game)
    out = {q: i for i, result in enumerate(game.results) for q in result.eliminated}
    assert rewards[game.winners[0]] == 1.0 and game.winners[0] not in out
    for p in out:
        for q in out:
            if out[p] < out[q]:
                assert rewards[p] < rewards[q], "out earlier ranks lower"
            elif out[p] == out[q] and game.scores[p] < game.scores[q]:
                assert rewards[p] > rewards[q], "out together: the lower score ranks higher"
    assert sum(rewards) == pytest.approx(0.0), "rank rewards are zero-sum, ties sharing"
    # with four players, untied ranks give exactly 1, 1/3, -1/3, -1
    if len(set(rewards)) == 4:
        assert sorted(rewards) == pytest.approx([-1.0, -1 / 3, 1 / 3, 1.0])


def test_rank_rewards_share_ties():
    """Seat 0 calls with 3 and keeps its 7; seat 1 takes 7 (7 + 0 = 7, level with seat 0) and seat 2
    takes 10, passing the limit of 10: the game ends, seats 0 and 1 share first place."""
    hands = [parse_cards("AC 2C"), parse_cards("7H"), parse_cards("KH")]
    game = Game.from_position(hands, [parse_cards("5S")], [], Rules(game_end="first_over", score_limit=10),
                              scores=[7, 0, 5])
    game.apply(YANIV)
    assert game.is_over and game.scores == [7, 7, 15] and game.winners == (0, 1)
    assert yaniv_env.rank_rewards(game) == pytest.approx([0.5, 0.5, -1.0])


def test_a_game_of_one_round_is_ranked_by_the_round_alone():
    """Seat 0 calls with 3 from 150 points behind; seat 2 takes 7 and seat 1 takes 10. Under
    game_end=one_round the game is over: seat 0 first, then the fewer points taken (seat 2), the
    scores (150, 10, 7) deciding nothing."""
    hands = [parse_cards("AC 2C"), parse_cards("KH"), parse_cards("7H")]
    game = Game.from_position(hands, [parse_cards("5S")], [], Rules(game_end="one_round"), scores=[150, 0, 0])
    game.apply(YANIV)
    assert game.is_over and game.winners == (0,) and game.scores == [150, 10, 7]
    assert yaniv_env.rank_rewards(game) == pytest.approx([1.0, -1.0, 0.0])


@pytest.mark.parametrize("round_reward", ["points", "relative"])
def test_a_game_of_one_round_pays_its_rank_in_a_round_episode_too(round_reward):
    """A round episode pays points because it stands for a round of a longer game; a game of one
    round is won by winning the round, and pays the rank whatever the episode."""
    rng = np.random.default_rng(0)
    paid = set()
    for seed in range(6):
        env = yaniv_env.raw_env(num_players=2, rules=Rules(game_end="one_round", jokers=0), episode="round",
                                round_reward=round_reward)
        env.reset(seed=seed)
        final = {}
        for agent in env.agent_iter():
            _, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                final[agent] = reward
                env.step(None)
                continue
            mask = env.observe(agent)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.game.is_over
        ranked = yaniv_env.rank_rewards(env.game)
        assert [final[a] for a in env.possible_agents] == pytest.approx(ranked)
        paid.update(ranked)
    assert paid == {1.0, -1.0}


def test_gym_view_plays_opponents_and_gives_the_final_reward():
    calls = []

    def opponent(observation, mask):
        calls.append(1)
        return int(np.flatnonzero(mask)[0])

    env = yaniv_env.YanivGymEnv(num_players=3, opponents=opponent, seat=1)
    obs, info = env.reset(seed=0)
    assert info["seat"] == 1 and env.aec.game.current == 1
    total, steps, done = 0.0, 0, False
    while not done:
        mask = env.action_masks()
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[-1]))
        total += reward
        steps += 1
        done = terminated or truncated
    assert calls, "opponents were asked to move"
    result = env.aec.game.results[-1]
    assert total == pytest.approx(-result.points[1] / 50)
    with pytest.raises(RuntimeError):
        env.step(0)


def test_gym_view_never_starts_an_episode_that_is_already_over():
    """Opponents that call Yaniv at once can end a deal before the learner moves: reset skips it."""

    def eager(observation, mask):
        return len(mask) - 3 if mask[len(mask) - 3] else int(np.flatnonzero(mask)[0])  # Yaniv when allowed

    env = yaniv_env.YanivGymEnv(num_players=4, opponents=eager, rules=Rules(yaniv_threshold=30))
    for seed in range(30):
        env.reset(seed=seed)
        assert env.aec.agent_selection == env.learner and env.action_masks().any()
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_gym_view_penalizes_or_raises_on_illegal_actions():
    env = yaniv_env.YanivGymEnv(num_players=2)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert reward == -1.0 and terminated and "illegal action" in info["illegal_action"]
    strict = yaniv_env.YanivGymEnv(num_players=2, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(illegal)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_players"):
        yaniv_env.raw_env(num_players=9)
    with pytest.raises(ValueError, match="episode"):
        yaniv_env.raw_env(episode="match")
    with pytest.raises(ValueError, match="preset"):
        yaniv_env.raw_env(rules="klaberjass")
    with pytest.raises(ValueError, match="seat"):
        yaniv_env.YanivGymEnv(num_players=2, seat=2)
    with pytest.raises(ValueError, match="opponents"):
        yaniv_env.YanivGymEnv(num_players=4, opponents=[lambda observation, mask: 0])


def test_render_modes():
    env = yaniv_env.raw_env(num_players=2, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "Pile top" in text and ("♠" in text or "♥" in text or "♦" in text or "♣" in text)


def test_maskable_ppo_trains_briefly_without_illegal_actions():
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = yaniv_env.YanivGymEnv(num_players=2)
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=128, n_epochs=2, seed=0, verbose=0)
    model.learn(total_timesteps=2048)
    illegal = 0
    obs, _ = env.reset(seed=1)
    for _ in range(500):
        action, _ = model.predict(obs, action_masks=env.action_masks())
        obs, _, terminated, truncated, info = env.step(int(action))
        illegal += "illegal_action" in info
        if terminated or truncated:
            obs, _ = env.reset()
    assert illegal == 0


def test_score_segments_price_each_move_by_the_score_it_leaves():
    """86 points, KC KD 4H AC in hand (sorted slots: AC 4H KC KD), 9C on the pile. Throwing the
    kings (slots 2 and 3: subset 0b1100) leaves 5; with the 9 the hand is 14 and 86 + 14 = 100 is
    halved to 50: reset = 50/100. A deck draw does so with the 3 unseen nines among 49 unseen
    cards: 0.5 * 3/49. Nothing can pass 200 (over = 0). At 190 the same 14 would (190 + 14 > 200),
    and so would any deck card above 5; a deck five makes 190 + 10 = 200 exactly, halved to 100."""
    hands = [parse_cards("KC KD 4H AC"), parse_cards("9S")]
    used = set(hands[0]) | set(hands[1]) | set(parse_cards("9C"))
    game = Game.from_position(hands, [parse_cards("9C")], [c for c in deck_cards(2) if c not in used],
                              single_round=True, scores=[86, 50])
    observer = encoding.Observer(game.rules, 2)
    kings = 0b1100
    assert [game.hands[0][i] for i in (2, 3)] == list(parse_cards("KC KD"))
    deck_action, nine_action = (kings - 1) * DRAW_SOURCES, (kings - 1) * DRAW_SOURCES + 1
    obs = observer.observe(game.view(0))
    reset, over = observer.view("reset", obs), observer.view("over", obs)
    assert reset[nine_action] == pytest.approx(0.5)
    assert reset[deck_action] == pytest.approx(0.5 * 3 / 49)
    assert over.sum() == 0
    assert np.count_nonzero(reset) == np.count_nonzero(reset[observer.action_mask(game.view(0))[: reset.size].astype(bool)])
    # The opponent holds one card: it ends the round before this player's next turn with chance
    # 0.6 (yaniv.odds.ROUND_END_CHANCE), and the soon segments weigh the stakes by it.
    soon = observer.view("reset_soon", obs)
    assert soon[nine_action] == pytest.approx(0.6 * 0.5) and soon[deck_action] == pytest.approx(0.6 * 0.5 * 3 / 49)
    np.testing.assert_allclose(soon, 0.6 * reset, rtol=1e-6)
    three = Game.from_position([hands[0], parse_cards("9S 2D 3D")], [parse_cards("9C")],
                               [c for c in deck_cards(2) if c not in used | set(parse_cards("2D 3D"))],
                               single_round=True, scores=[86, 50])  # the opponent holds three cards: 0.12
    np.testing.assert_allclose(observer.view("reset_soon", observer.observe(three.view(0))), 0.12 * reset, rtol=1e-6)
    # Not on turn: the segments are zero (they describe the moves of the player to move).
    assert observer.view("reset", observer.observe(game.view(1))).sum() == 0
    game = Game.from_position(hands, [parse_cards("9C")], [c for c in deck_cards(2) if c not in used],
                              single_round=True, scores=[190, 50])
    obs = observer.observe(game.view(0))
    reset, over = observer.view("reset", obs), observer.view("over", obs)
    unseen = [c for c in deck_cards(2) if c not in set(game.hands[0]) | set(parse_cards("9C"))]
    assert over[nine_action] == 1.0 and reset[nine_action] == 0.0
    assert over[deck_action] == pytest.approx(sum(POINTS[c] > 5 for c in unseen) / 49)
    # 190 + 5 + a five is exactly 200: halved to 100, 100 points off.
    assert reset[deck_action] == pytest.approx(1.0 * sum(POINTS[c] == 5 for c in unseen) / 49)
    np.testing.assert_allclose(observer.view("over_soon", obs), 0.6 * over, rtol=1e-6)
    # Far from 100, 200 and the limit, both segments are zero.
    game = Game.from_position(hands, [parse_cards("9C")], [c for c in deck_cards(2) if c not in used],
                              single_round=True, scores=[10, 50])
    obs = observer.observe(game.view(0))
    for name in ("reset", "over", "reset_soon", "over_soon"):
        assert observer.view(name, obs).sum() == 0
    # In a game of one round, the first position (86 + 14 = 100) prices nothing: the round decides
    # the game, whatever the scores become; the settings segment says so.
    one = Rules(game_end="one_round")
    game = Game.from_position(hands, [parse_cards("9C")], [c for c in deck_cards(2) if c not in used], one,
                              scores=[86, 50])
    observer = encoding.Observer(one, 2)
    obs = observer.observe(game.view(0))
    for name in ("reset", "over", "reset_soon", "over_soon"):
        assert observer.view(name, obs).sum() == 0
    settings = observer.view("settings", obs)
    names = [name for name, _, _ in encoding.SETTINGS]
    assert settings[names.index("one_round")] == 1.0 and settings[names.index("first_over")] == 0.0


BAD_ACTIONS = [3.7, 3.0, "3", True, np.bool_(True), None, "x", float("nan"), [3], np.array([3])]


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_an_action_that_is_not_an_integer_id_is_refused_by_name(bad):
    """Issue 18.17: 3.7 used to play action 3, "3" and True were taken as ids, and None, "x" or NaN
    raised bare TypeErrors. Only ints and numpy integers are action ids."""
    env = yaniv_env.raw_env(num_players=2)
    env.reset(seed=0)
    before = env.game.copy()
    with pytest.raises(ValueError, match="an action is an integer id"):
        env.step(bad)
    assert env.game.hands == before.hands and env.game.turn == before.turn
    gym_env = yaniv_env.YanivGymEnv(num_players=2)
    gym_env.reset(seed=0)
    with pytest.raises(ValueError, match="an action is an integer id"):
        gym_env.step(bad)


def test_numpy_integer_actions_are_ids():
    env = yaniv_env.raw_env(num_players=2)
    env.reset(seed=0)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    env.step(legal[0])  # a numpy int64, as policies give
    env.step(np.array(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))  # a 0-d array
    assert env.game.turn == 2


def test_calls_out_of_order_say_to_reset():
    """Issue 18.18: before reset an AttributeError, after a truncated episode KeyError 'player_0'."""
    env = yaniv_env.raw_env(num_players=2, max_turns=3)
    for call in (lambda: env.step(0), env.last, lambda: env.observe("player_0")):
        with pytest.raises(RuntimeError, match=r"before reset\(\): call reset\(\) first"):
            call()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'player_7'"):
        env.observe("player_7")
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    assert not env.agents
    for call in (lambda: env.step(0), env.last):
        with pytest.raises(RuntimeError, match=r"after the episode ended .*call reset\(\)"):
            call()
    env.reset(seed=1)  # and it plays on after reset
    assert env.agents == ["player_0", "player_1"]
    gym_env = yaniv_env.YanivGymEnv(num_players=2)
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        gym_env.step(0)


@pytest.mark.parametrize("opponents", ["nope", b"nope", 7, ["nope"]], ids=repr)
def test_an_opponent_that_is_no_agent_is_named(opponents):
    """Issue 18.18: opponents="nope" said "got 4" (a string is a sequence of four letters)."""
    with pytest.raises((ValueError, TypeError), match="an opponent must be an agent"):
        gymnasium.make(yaniv_env.GYM_ID, num_players=2, opponents=opponents)


@pytest.mark.parametrize(
    "rules, words",
    [(Rules(discarder_places_jokers=True), "discarder_places_jokers"),
     (Rules(jokers_in_sets=True, max_set_size=6), "pile draw sources")],
    ids=["joker placement", "six drawable cards"],
)
def test_rules_the_action_table_cannot_express_are_refused_by_name(rules, words):
    with pytest.raises(ValueError, match=words):
        yaniv_env.raw_env(num_players=2, rules=rules)
