"""Where our run's recipe departs from its reference row's: two recipes written out by hand, the list read off."""

from __future__ import annotations

import math

import pytest
from test_runs import run_config

from rnnbench.published import RECIPE, load_published
from rnnbench.results.departures import NO_DEPARTURE, NO_RECIPE, departure_text, departures, recipe_of

# Bengio et al. (2003)'s MLP1 as published.csv states it: Table 1's n = 5, h = 50, m = 60, direct connections;
# stochastic gradient ascent one word at a time, weight decay 10^-4 and no other regulariser.
MLP1 = {"n": 5, "hidden": 50, "embed_dim": 60, "direct": "yes", "optimizer": "sgd", "batch_size": 1,
        "dropout": 0.0, "weight_decay": 1e-4}  # fmt: skip
# Our Brown reference network: a 13-gram window (n - 1 = 12), H = 200, d = 100, no direct connections, Adam over
# batches of 256 windows, dropout 0.3, no weight decay.
OURS = {"n": 13, "hidden": 200, "embed_dim": 100, "direct": "no", "optimizer": "adam", "batch_size": 256,
        "dropout": 0.3, "weight_decay": 0.0}  # fmt: skip


def test_every_setting_that_differs_is_listed_in_the_recipes_order():
    assert departures(OURS, MLP1) == [
        "n - 1 = 12 against 4",
        "H = 200 against 50",
        "d = 100 against 60",
        "direct connections no against yes",
        "Adam against SGD",
        "256 examples per update against 1",
        "dropout 0.3 against none",
        "weight decay none against 0.0001",
    ]
    assert departure_text(OURS, MLP1) == "; ".join(departures(OURS, MLP1))


def test_a_shared_setting_is_no_departure_and_an_unstated_one_is_never_one():
    # MLP1's own recipe, but Adam: one departure
    assert departures({**MLP1, "optimizer": "adam"}, MLP1) == ["Adam against SGD"]
    assert departure_text(MLP1, MLP1) == NO_DEPARTURE
    # a paper that states only the model's order: nothing else can depart from it
    order_only = {column: None for column in RECIPE} | {"n": 5}
    assert departures(OURS, order_only) == ["n - 1 = 12 against 4"]
    assert departures({**OURS, "n": 5}, {**order_only, "dropout": math.nan}) == []
    # Mikolov et al.'s table states no setting at all: said so, never "none"
    assert departure_text(OURS, {column: None for column in RECIPE}) == NO_RECIPE


def test_our_recipe_is_read_from_config_json():
    ff = run_config(family="ff", corpus="brown", context=12, hidden=200, embed_dim=100, dropout=0.3,
                    optimizer="adam", lr=0.001, batch_size=256)  # fmt: skip
    assert recipe_of(ff) == OURS
    rnn = recipe_of(run_config(family="rnn", corpus="ptb", hidden=400, embed_dim=200, batch_size=20))
    assert (rnn["n"], rnn["direct"], rnn["hidden"], rnn["batch_size"]) == (None, None, 400, 20)  # no window


@pytest.mark.parametrize("model", ["MLP1", "MLP9"])
def test_the_published_table_states_what_the_hand_written_recipe_does(model):
    row = load_published().set_index(["corpus", "model"]).loc[("brown", model)].to_dict()
    expected = MLP1 if model == "MLP1" else {**MLP1, "hidden": 100, "embed_dim": 30, "direct": "no"}
    assert departures(expected, row) == [] and departures(OURS, row) == departures(OURS, expected)


def test_a_recipe_carried_beyond_another_lists_every_run_setting_it_changes():
    from rnnbench.results.departures import setting_departures

    # The Elman RNN trained on Mikolov's recipe (H = 400, dropout 0.3 with a fresh mask each step), and one carried
    # beyond it: twice as wide, dropout 0.5 with one mask a sequence, a quarter of U dropped, weight decay 10^-6.
    # The base was trained before the two dropout settings existed: its config.json has neither, and had the values
    # every earlier run had (ADDED_AFTER_IDS).
    base = run_config(family="rnn", corpus="ptb", hidden=400, embed_dim=200, dropout=0.3, seed=1)
    base = {key: value for key, value in base.items() if key not in ("dropout_mask", "recurrent_dropout")}
    modern = run_config(family="rnn", corpus="ptb", hidden=800, embed_dim=200, dropout=0.5, dropout_mask="sequence",
                        recurrent_dropout=0.25, weight_decay=1e-6, seed=2)  # fmt: skip
    assert setting_departures(modern, base) == (
        "H = 800 against 400; dropout 0.5 against 0.3; one dropout mask a sequence against one a step; dropout on U "
        "0.25 against none; weight decay 1e-06 against none"
    )
    # the row shipped: a full softmax whose matrix is the embedding table, so d = H (in config.json's order)
    tied = run_config(family="rnn", corpus="ptb", hidden=400, embed_dim=400, dropout=0.3, output="full",
                      tie_weights=True, seed=1)  # fmt: skip
    assert setting_departures(tied, base) == (
        "d = 400 against 200; tied embeddings against untied; a full softmax against an adaptive"
    )
    # the seed is no recipe; a setting without words of its own is named by its key's
    assert setting_departures({**base, "seed": 9}, base) == NO_DEPARTURE
    assert setting_departures({**base, "min_improvement": 1.001}, {**base, "min_improvement": 1.003}) == (
        "min improvement 1.001 against 1.003"
    )
