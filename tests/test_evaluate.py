"""Evaluation: perplexity arithmetic, a uniform model scores exactly |V|, and the agreement probe."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from rnnbench.data import load_corpus, synthetic
from rnnbench.models import ModelConfig, build_model
from rnnbench.training.evaluate import (
    Likelihood,
    perplexity,
    sentence_agreement,
    sentence_likelihood,
    stream_likelihood,
    window_agreement,
    window_likelihood,
)

torch.set_num_threads(1)

V = 7
SMALL_AGREEMENT = {"seed": 3, "train_sentences": 50, "valid_sentences": 20, "test_sentences": 120}


@pytest.fixture(scope="module")
def corpus(cache_dir):
    return load_corpus("agreement", cache_dir=cache_dir, **SMALL_AGREEMENT)


def uniform_model(family, vocab_size=V, **options):
    """A real model whose output layer is zeroed: logits 0 for every word, so p(w) = 1/|V| everywhere."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(family, vocab_size, embed_dim=4, hidden=5, output="full", **options)).double()
    with torch.no_grad():
        model.output.V.zero_()
        model.output.b_y.zero_()
    return model


# --- Likelihood arithmetic -------------------------------------------------------------------------------


def test_perplexity_is_exp_of_the_mean_nll():
    # two tokens, each with p = 1/10: NLL sum = 2 ln 10, mean ln 10, perplexity e^{ln 10} = 10
    lik = Likelihood(nll_sum=2 * math.log(10), n_tokens=2)
    assert lik.mean_nll == pytest.approx(math.log(10))
    assert lik.perplexity == pytest.approx(10.0)
    # p = 1/2 and p = 1/8: NLL sum = ln 2 + ln 8 = ln 16, perplexity = 16^{1/2} = 4 (the geometric mean of 2 and 8)
    assert Likelihood(math.log(2) + math.log(8), 2).perplexity == pytest.approx(4.0)
    assert math.isnan(Likelihood(0.0, 0).perplexity) and math.isnan(Likelihood(0.0, 0).mean_nll)


def test_perplexity_saturates_instead_of_overflowing():
    assert perplexity(0.0) == 1.0
    assert perplexity(math.log(10)) == pytest.approx(10.0)
    assert perplexity(709.0) == pytest.approx(math.exp(709.0))
    assert perplexity(1000.0) == math.inf  # math.exp(1000) raises OverflowError
    assert math.isnan(perplexity(math.nan))


# --- a uniform model scores exactly |V| ------------------------------------------------------------------


def stream(n, seed=0):
    return np.random.default_rng(seed).integers(0, V, n).astype(np.int64)


@pytest.mark.parametrize("family", ["rnn", "lstm"])
def test_uniform_recurrent_model_has_perplexity_v_on_a_stream(family):
    tokens = stream(41)
    lik = stream_likelihood(uniform_model(family), tokens, batch_size=4, bptt=3)
    # batchify: T = 41 // 4 = 10 rows; the last row is only a target, so (10 - 1) * 4 = 36 predictions,
    # each -log(1/7) = ln 7: NLL sum 36 ln 7, perplexity 7
    assert lik.n_tokens == 36
    assert lik.nll_sum == pytest.approx(36 * math.log(V), rel=1e-12)
    assert lik.perplexity == pytest.approx(V, rel=1e-12)


def test_uniform_feed_forward_model_has_perplexity_v_on_a_stream():
    tokens = stream(41)
    lik = window_likelihood(uniform_model("ff", context=2), tokens, context=2)
    # every token with 2 tokens before it is predicted: 41 - 2 = 39
    assert lik.n_tokens == 39
    assert lik.perplexity == pytest.approx(V, rel=1e-12)


def test_uniform_model_has_perplexity_v_on_sentences():
    eos = 0
    tokens = np.array([3, 4, eos, 5, eos, 1, 2, 6, eos], dtype=np.int64)  # sentences of 3, 2 and 4 tokens
    lik = sentence_likelihood(uniform_model("rnn"), tokens, np.array([0, 3, 5]), batch_size=2)
    # every token of every sentence is a target (the first from <eos>), padding is not: 3 + 2 + 4 = 9
    assert lik.n_tokens == 9
    assert lik.nll_sum == pytest.approx(9 * math.log(V), rel=1e-12)
    assert lik.perplexity == pytest.approx(V, rel=1e-12)


def test_evaluation_puts_the_model_in_eval_mode_and_takes_no_gradients():
    torch.manual_seed(0)
    model = build_model(ModelConfig("rnn", V, embed_dim=4, hidden=5, output="full", dropout=0.5)).double()
    model.train()
    tokens = stream(41)
    first = stream_likelihood(model, tokens, batch_size=4, bptt=3)
    second = stream_likelihood(model, tokens, batch_size=4, bptt=3)
    assert not model.training
    assert first == second  # dropout is off: no noise between two evaluations
    assert all(p.grad is None for p in model.parameters())


def test_stream_evaluation_carries_the_state_across_segments():
    # the same stream read in segments of 3 or in one segment gives the same likelihood: the state is carried
    torch.manual_seed(0)
    model = build_model(ModelConfig("rnn", V, embed_dim=4, hidden=5, output="full")).double()
    tokens = stream(41)
    short = stream_likelihood(model, tokens, batch_size=4, bptt=3)
    whole = stream_likelihood(model, tokens, batch_size=4, bptt=100)
    assert short.n_tokens == whole.n_tokens and short.nll_sum == pytest.approx(whole.nll_sum, rel=1e-12)


def test_a_stream_is_scored_column_by_column_and_the_columns_add_up():
    tokens = stream(41)
    lik = stream_likelihood(uniform_model("rnn"), tokens, batch_size=4, bptt=3, by_column=True)
    # T = 10 rows per column, 9 predictions each, every one -log(1/7): each column 9 ln 7, perplexity 7
    assert [c.n_tokens for c in lik.columns] == [9, 9, 9, 9]
    for column in lik.columns:
        assert column.nll_sum == pytest.approx(9 * math.log(V), rel=1e-12)
        assert column.perplexity == pytest.approx(V, rel=1e-12)
    assert sum(c.nll_sum for c in lik.columns) == pytest.approx(lik.nll_sum, rel=1e-12)


@pytest.mark.parametrize("family", ["rnn", "lstm"])
def test_a_column_read_among_others_scores_as_it_does_alone(family):
    # Column b of batchify holds tokens b T .. b T + T - 1 and is read from h_0 = 0: the same as that slice read
    # alone, in one column. The other columns share the recurrence's batch, never its state.
    torch.manual_seed(0)
    model = build_model(ModelConfig(family, V, embed_dim=4, hidden=5, output="full")).double()
    tokens = stream(41)
    together = stream_likelihood(model, tokens, batch_size=4, bptt=3, by_column=True)
    assert together.nll_sum == pytest.approx(stream_likelihood(model, tokens, batch_size=4, bptt=3).nll_sum, rel=1e-12)
    for b, column in enumerate(together.columns):
        alone = stream_likelihood(model, tokens[b * 10 : (b + 1) * 10], batch_size=1, bptt=3)
        assert alone.n_tokens == column.n_tokens == 9
        assert column.nll_sum == pytest.approx(alone.nll_sum, rel=1e-12)
    assert len({round(c.nll_sum, 9) for c in together.columns}) == 4  # a real model: four different columns


# --- the agreement probe ---------------------------------------------------------------------------------


def agreement(model, corpus, family):
    """The probe as each way of reading runs it: recurrent models per sentence, the feed-forward model per window."""
    if family == "ff":
        return window_agreement(model, corpus, "test", context=3)
    return sentence_agreement(model, corpus, "test", batch_size=16)


class SingularPreferring(nn.Module):
    """Prefers every singular verb form by one nat over everything else, whatever it reads."""

    def __init__(self, vocab_size: int, singular_ids: list[int]):
        super().__init__()
        logits = torch.zeros(vocab_size, dtype=torch.float64)
        logits[singular_ids] = 1.0
        self.log_probs = torch.log_softmax(logits, dim=-1)  # (V,)

    def forward(self, tokens, state=None):
        # recurrent: (T, B) -> (T, B, V); feed-forward: (N, context) -> (N, V)
        leading = tokens.shape if self.recurrent else tokens.shape[:1]
        return self.log_probs.expand(*leading, -1), state


def singular_ids(probes: pd.DataFrame) -> list[int]:
    singular = probes["number"] == "sg"
    return sorted(set(probes.loc[singular, "correct_id"]) | set(probes.loc[~singular, "wrong_id"]))


@pytest.mark.parametrize("family", ["rnn", "ff"])
def test_agreement_probe_on_a_model_that_always_says_singular(corpus, family):
    probes = corpus.probes["test"]
    model = SingularPreferring(len(corpus.vocab), singular_ids(probes))
    model.recurrent = family == "rnn"
    table = agreement(model, corpus, family)
    # log p(correct) - log p(wrong) = +1 for a singular head, -1 for a plural one: the accuracy at each
    # distance is the share of singular heads there
    expected = probes.assign(sg=probes["number"] == "sg").groupby("distance")["sg"].agg(["size", "mean"])
    assert table["distance"].tolist() == expected.index.tolist()
    assert table["n"].tolist() == expected["size"].tolist()
    assert table["accuracy"].tolist() == pytest.approx(expected["mean"].tolist())
    assert (table["split"] == "test").all()


class NearestNounCopier(nn.Module):
    """Reads only the last token: after a singular noun it prefers singular verbs, after a plural noun plural
    verbs (by one nat); after anything else it has no preference."""

    def __init__(self, vocab, recurrent: bool):
        super().__init__()
        self.recurrent = recurrent
        logits = torch.zeros(len(vocab), len(vocab), dtype=torch.float64)  # (previous token, next token)
        for number in (0, 1):  # 0: singular, 1: plural
            verbs = [vocab.stoi[v[number]] for v in synthetic.AGREEING_VERBS if v[number] in vocab.stoi]
            for noun in synthetic.NOUNS:
                if noun[number] in vocab.stoi:
                    logits[vocab.stoi[noun[number]], verbs] = 1.0
        self.table = torch.log_softmax(logits, dim=-1)  # (V, V)

    def forward(self, tokens, state=None):
        last = tokens if self.recurrent else tokens[:, -1]  # (T, B) or (N,)
        return self.table[last], state  # (T, B, V) or (N, V)


def test_agreement_probe_reads_the_verb_position_in_both_paths(corpus):
    # at distance k = 1 the head noun is the token right before the verb, so a model that copies the number
    # of the previous token is right on every such probe; the ff window and the recurrent reading must agree
    # on which token that is at every distance
    tables = {
        family: agreement(NearestNounCopier(corpus.vocab, family == "rnn"), corpus, family) for family in ("rnn", "ff")
    }
    pd.testing.assert_frame_equal(tables["rnn"], tables["ff"])
    at_one = tables["rnn"].set_index("distance").loc[1]
    assert at_one["n"] >= 1 and at_one["accuracy"] == 1.0
    assert tables["rnn"]["accuracy"].min() < 1.0  # further away, the previous token is often not a noun


@pytest.mark.parametrize("family", ["rnn", "lstm", "ff"])
def test_agreement_probe_on_a_real_model(corpus, family):
    torch.manual_seed(0)
    model = build_model(ModelConfig(family, len(corpus.vocab), embed_dim=4, hidden=8, context=3, output="full"))
    table = agreement(model, corpus, family)
    probes = corpus.probes["test"]
    assert list(table.columns) == ["distance", "n", "accuracy", "split"]
    assert table["distance"].tolist() == sorted(probes["distance"].unique())  # one row per distance
    assert table["n"].sum() == len(probes) == SMALL_AGREEMENT["test_sentences"]  # one probe per sentence
    assert table["accuracy"].between(0.0, 1.0).all()


def test_agreement_probe_needs_a_corpus_with_probes(corpus):
    from dataclasses import replace

    no_probes = replace(corpus, name="ptb", probes=None, sentence_starts=None)
    for family in ("rnn", "ff"):
        with pytest.raises(ValueError, match="no agreement probes"):
            agreement(uniform_model(family, len(corpus.vocab)), no_probes, family)
