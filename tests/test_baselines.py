"""Count-based baselines: unigram and modified Kneser-Ney worked by hand on a toy text, the agreement heuristics
on hand-made sentences, the tables, and the KN5 on PTB against Mikolov et al. (2011)."""

from __future__ import annotations

import json
import math
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rnnbench import jobs, paths
from rnnbench.baselines.agreement import agreement_baselines, nearest_noun, noun_numbers
from rnnbench.baselines.ngram import (
    FALLBACK_DISCOUNTS,
    DiscountError,
    KneserNey,
    Unigram,
    discounts,
    with_sentence_starts,
)
from rnnbench.baselines.tables import baseline_tables
from rnnbench.book import results as res
from rnnbench.data.corpora import load_corpus
from rnnbench.data.prepared import Corpus
from rnnbench.data.synthetic import NOUNS
from rnnbench.data.vocab import Vocab
from rnnbench.published import load_published

# --------------------------------------------------------------------------------------------------------------
# The toy text, worked by hand
#
#   the cat sat <eos> the cat <eos> dog sat <eos> sat <eos>          12 tokens, 4 sentences
#   read as <s> the cat sat <eos> <s> the cat <eos> <s> dog sat <eos> <s> sat <eos>
#
# Bigrams (raw counts, the top order of a bigram model), 12 in all:
#   <s> the 2   the cat 2   cat sat 1   sat <eos> 3   cat <eos> 1   <s> dog 1   dog sat 1   <s> sat 1
#   count-of-counts n1..n4 = 5, 2, 1, 0
#   Y = 5 / (5 + 2*2) = 5/9;  D1 = 1 - 2 Y 2/5 = 5/9;  D2 = 2 - 3 Y 1/2 = 7/6;  D3+ = 3 - 4 Y 0/1 = 3
# Unigrams (continuation counts N1+(. w): how many distinct words come before w, <s> included):
#   the {<s>} 1   cat {the} 1   dog {<s>} 1   sat {cat, dog, <s>} 3   <eos> {sat, cat} 2      total 8
#   count-of-counts n1..n4 = 3, 1, 1, 0
#   Y = 3 / (3 + 2*1) = 3/5;  D1 = 1 - 2 Y 1/3 = 3/5;  D2 = 2 - 3 Y 1/1 = 1/5;  D3+ = 3 - 4 Y 0/1 = 3
#   the mass held back, D1*3 + D2*1 + D3+*1 = 9/5 + 1/5 + 3 = 5, is spread evenly over the 5 words:
#   p1(w) = (max(N1+(. w) - D, 0) + 5/5) / 8
#   p1(the) = p1(cat) = p1(dog) = (1 - 3/5 + 1) / 8 = 7/40;  p1(sat) = (3 - 3 + 1) / 8 = 1/8;
#   p1(<eos>) = (2 - 1/5 + 1) / 8 = 7/20                                        (sum: 21/40 + 5/40 + 14/40 = 1)
# Bigram probabilities, p(w | h) = (max(c(hw) - D, 0) + (D1 N1(h.) + D2 N2(h.) + D3+ N3+(h.)) p1(w)) / c(h.):
#   h = cat:  c(cat .) = 2, two bigrams seen once, held back 2 D1 = 10/9
#             p(sat | cat) = (1 - 5/9 + 10/9 * 1/8) / 2 = 7/24;  p(dog | cat) = (10/9 * 7/40) / 2 = 7/72
#   h = <s>:  c(<s> .) = 4 (the 2, dog 1, sat 1), held back 2 D1 + D2 = 10/9 + 7/6 = 41/18
#             p(the | <s>) = (2 - 7/6 + 41/18 * 7/40) / 4 = 887/2880
#   h = sat:  one bigram, seen 3 times, gives up all of it (D3+ = 3): p(w | sat) = p1(w)

VOCAB = ("<eos>", "cat", "dog", "sat", "the")
TOY = "the cat sat <eos> the cat <eos> dog sat <eos> sat <eos>"
EOS_ID = VOCAB.index("<eos>")


def ids(text: str) -> np.ndarray:
    return np.array([VOCAB.index(w) for w in text.split()], dtype=np.int64)


def toy_model(order: int = 2, **kwargs) -> KneserNey:
    return KneserNey.fit(ids(TOY), len(VOCAB), order, eos_id=EOS_ID, **kwargs)


def p(model: KneserNey, history: str, word: str) -> float:
    return float(model.distribution(ids(history))[VOCAB.index(word)])


def test_sentence_starts_go_before_the_first_token_and_after_every_eos_but_the_last():
    assert with_sentence_starts(ids("the cat <eos> sat <eos>"), EOS_ID, 9).tolist() == [9, 4, 1, 0, 9, 3, 0]
    assert with_sentence_starts(ids("the cat"), None, 9).tolist() == [9, 4, 1]  # no <eos>: one sentence


def test_discounts_from_count_of_counts_by_hand():
    assert discounts(5, 2, 1, 0) == pytest.approx((5 / 9, 7 / 6, 3.0))
    assert discounts(3, 1, 1, 0) == pytest.approx((3 / 5, 1 / 5, 3.0))
    # PTB-like counts: Y = 100 / 160; D1 = 1 - 2Y 30/100, D2 = 2 - 3Y 15/30, D3+ = 3 - 4Y 10/15
    y = 100 / 160
    assert discounts(100, 30, 15, 10) == pytest.approx((1 - 2 * y * 0.3, 2 - 3 * y * 0.5, 3 - 4 * y * 10 / 15))


def test_toy_counts_count_of_counts_and_discounts():
    unigrams, bigrams = toy_model().orders
    assert dict(zip(VOCAB, unigrams.counts.tolist(), strict=True)) == {
        "<eos>": 2,
        "cat": 1,
        "dog": 1,
        "sat": 3,
        "the": 1,
    }
    assert unigrams.count_of_counts == (3, 1, 1, 0)
    assert unigrams.discounts == pytest.approx((3 / 5, 1 / 5, 3.0))
    assert unigrams.totals.tolist() == [8.0] and unigrams.backoff.tolist() == pytest.approx([5.0])
    assert sorted(bigrams.counts.tolist()) == [1, 1, 1, 1, 1, 2, 2, 3]
    assert bigrams.count_of_counts == (5, 2, 1, 0)
    assert bigrams.discounts == pytest.approx((5 / 9, 7 / 6, 3.0))
    assert all(level.estimated for level in toy_model().orders)


def test_toy_probabilities_by_hand():
    model = toy_model()
    for word, expected in {
        "the": F(7, 40),
        "cat": F(7, 40),
        "dog": F(7, 40),
        "sat": F(1, 8),
        "<eos>": F(7, 20),
    }.items():
        assert p(model, "sat", word) == pytest.approx(float(expected))  # D3+ = 3: "sat" falls back whole
    assert p(model, "cat", "sat") == pytest.approx(7 / 24)
    assert p(model, "cat", "dog") == pytest.approx(7 / 72)  # never seen after "cat": the interpolated share only
    assert p(model, "", "the") == pytest.approx(887 / 2880)  # the sentence start <s> is the context


def test_score_predicts_every_token_from_the_sentence_start():
    # "the cat <eos>": p(the | <s>) = 887/2880, p(cat | the) = (2 - 7/6 + 7/6 * 7/40) / 2 = 249/480,
    # p(<eos> | cat) = (1 - 5/9 + 10/9 * 7/20) / 2 = 5/12
    score = toy_model().score(ids("the cat <eos>"))
    assert score.n_tokens == 3
    assert score.nll_sum == pytest.approx(-math.log(887 / 2880 * 249 / 480 * 5 / 12))
    assert score.perplexity == pytest.approx((887 / 2880 * 249 / 480 * 5 / 12) ** (-1 / 3))


def test_lower_orders_keep_raw_counts_for_ngrams_that_begin_with_the_sentence_start():
    # In a trigram model the bigrams are continuation counts (distinct words before them), except <s> x,
    # which nothing precedes:  <s> the 2 (raw)  <s> dog 1 (raw)  <s> sat 1 (raw)  the cat {<s>} 1
    # cat sat {the} 1  cat <eos> {the} 1  dog sat {<s>} 1  sat <eos> {cat, dog, <s>} 3
    model = toy_model(3, fallback=FALLBACK_DISCOUNTS)
    bigrams = model.orders[1]
    radix = len(VOCAB) + 1
    counts = {
        (int(k) // radix, int(k) % radix): int(c)
        for k, c in zip(bigrams.keys.tolist(), bigrams.counts.tolist(), strict=True)
    }
    s = model.bos_id
    the, cat, dog, sat, eos = (VOCAB.index(w) for w in ("the", "cat", "dog", "sat", "<eos>"))
    assert counts == {
        (s, the): 2,
        (s, dog): 1,
        (s, sat): 1,
        (the, cat): 1,
        (cat, sat): 1,
        (cat, eos): 1,
        (dog, sat): 1,
        (sat, eos): 3,
    }
    assert bigrams.count_of_counts == (6, 1, 1, 0)


def test_an_order_without_discounts_is_an_error_unless_a_fallback_is_given():
    # In the toy's trigram model the bigrams' count-of-counts are 6, 1, 1, 0 (above): Y = 6/8 and
    # D2 = 2 - 3 Y 1/1 = -1/4 < 0; the trigrams are seen once (6 of them) or twice (<s> the cat): n3 = 0.
    with pytest.raises(
        DiscountError, match=r"order 2: discounts .* = \(0\.75, -0\.25, 3\.0\) from n1\.\.n4 = 6, 1, 1, 0"
    ):
        toy_model(3)
    unigrams, bigrams, trigrams = toy_model(3, fallback=FALLBACK_DISCOUNTS).orders
    assert unigrams.estimated and unigrams.discounts == pytest.approx((3 / 5, 1 / 5, 3.0))  # as in the bigram model
    assert (bigrams.discounts, bigrams.estimated) == (FALLBACK_DISCOUNTS, False)
    assert (trigrams.discounts, trigrams.estimated, trigrams.count_of_counts) == (
        FALLBACK_DISCOUNTS,
        False,
        (6, 1, 0, 0),
    )
    with pytest.raises(DiscountError, match=r"order 3: .* n1\.\.n4 = 6, 1, 0, 0"):
        discounts(*trigrams.count_of_counts, order=3)


@pytest.mark.parametrize("bad", [(0, 2, 1, 0), (5, 0, 1, 0), (5, 2, 0, 0)])
def test_discounts_need_ngrams_seen_once_twice_and_three_times(bad):
    with pytest.raises(DiscountError, match="n1, n2, n3 > 0"):
        discounts(*bad, order=2)


def test_discounts_outside_their_range_are_refused():
    # n3 far above n2: D2 = 2 - 3 (1/3) 100/1 < 0
    with pytest.raises(DiscountError, match=r"must lie in \[0, k\]"):
        discounts(1, 1, 100, 1, order=4)


def random_text(n_tokens: int, vocab_size: int, seed: int) -> np.ndarray:
    """Zipf-like words with an <eos> (id 0) about every 8 tokens: enough repetition for every order's discounts."""
    rng = np.random.default_rng(seed)
    weights = 1 / np.arange(1, vocab_size)
    words = rng.choice(np.arange(1, vocab_size), size=n_tokens, p=weights / weights.sum())
    words[rng.random(n_tokens) < 1 / 8] = 0
    return words


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_every_context_distribution_sums_to_one(order):
    vocab_size = 30
    train = random_text(5000, vocab_size, seed=0)
    model = KneserNey.fit(train, vocab_size + 2, order, eos_id=0, fallback=FALLBACK_DISCOUNTS)  # 2 words unseen
    rng = np.random.default_rng(1)
    histories = [[], [1], [vocab_size + 1], [1, 2, 3, 4, 5, 6]]  # the sentence start, seen, unseen, long
    histories += [rng.integers(1, vocab_size + 2, size=rng.integers(1, 6)).tolist() for _ in range(30)]
    starts = np.flatnonzero(train == 0) + 1
    histories += [train[s : s + k].tolist() for s, k in zip(starts[:20], rng.integers(1, 5, size=20), strict=True)]
    for history in histories:
        if 0 in history:
            continue
        dist = model.distribution(history)
        assert dist.shape == (vocab_size + 2,) and (dist > 0).all()
        assert dist.sum() == pytest.approx(1.0, abs=1e-12), history


def test_a_history_holds_no_end_of_sentence():
    with pytest.raises(ValueError, match="<eos>"):
        toy_model().distribution(ids("cat <eos>"))


def test_ids_outside_the_vocabulary_are_refused():
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 5\), found \[0, 7\]"):
        toy_model().score(np.array([0, 7]))


def test_higher_order_fits_its_own_training_text_better():
    train = random_text(5000, 30, seed=0)
    ppl = [
        KneserNey.fit(train, 30, n, eos_id=0, fallback=FALLBACK_DISCOUNTS).score(train).perplexity for n in (1, 2, 3)
    ]
    assert ppl[0] > ppl[1] > ppl[2]


# --------------------------------------------------------------------------------------------------------------
# Unigram


def test_unigram_perplexity_by_hand():
    # train "the cat the sat", 4 tokens over 5 words, add-one: (c + 1) / (4 + 5) = 1/9, 2/9, 1/9, 2/9, 3/9;
    # test "the cat": ppl = (3/9 * 2/9)^(-1/2) = sqrt(81 / 6)
    model = Unigram.fit(ids("the cat the sat"), len(VOCAB))
    assert model.probabilities * 9 == pytest.approx([1, 2, 1, 2, 3])
    score = model.score(ids("the cat"))
    assert score.n_tokens == 2
    assert score.perplexity == pytest.approx(math.sqrt(81 / 6))


def test_unigram_scores_a_word_never_seen_in_training_with_its_added_count():
    # "dog" never occurs in train: p = 1/9, counted like every other token; "the dog": (3/9 * 1/9)^(-1/2) = sqrt 27
    score = Unigram.fit(ids("the cat the sat"), len(VOCAB)).score(ids("the dog"))
    assert score.n_tokens == 2
    assert score.perplexity == pytest.approx(math.sqrt(27))


# --------------------------------------------------------------------------------------------------------------
# Agreement heuristics

SENTENCES = [
    # words, head position, verb position, number: the head's
    ("the author near the tables clearly is old <eos>", 1, 6, "sg"),  # nearest noun "tables" (pl): wrong
    ("the books that the teacher admired are new <eos>", 1, 6, "pl"),  # nearest "teacher" (sg): wrong
    ("the key is red <eos>", 1, 2, "sg"),  # no noun between: the head itself, right
    ("my dogs with the cats are calm <eos>", 1, 5, "pl"),  # nearest "cats", the head's number: right
    ("the man with the women near the child was happy <eos>", 1, 8, "sg"),  # nearest "child" (sg): right
]


def hand_made() -> tuple[np.ndarray, pd.DataFrame, Vocab]:
    words, rows, offset = [], [], 0
    for text, head, verb, number in SENTENCES:
        tokens = text.split()
        rows.append(
            {"position": offset + verb, "head_position": offset + head, "distance": verb - head, "number": number}
        )
        words += tokens
        offset += len(tokens)
    vocab = Vocab.build(words)
    probes = pd.DataFrame(rows)
    return vocab.encode(words), probes, vocab


def test_noun_numbers_come_from_the_lexicon():
    vocab = Vocab(("the", "author", "authors", "children", "is"))
    assert noun_numbers(vocab).tolist() == [-1, 0, 1, 1, -1]
    singular, plural = ({pair[i] for pair in NOUNS} for i in (0, 1))
    assert not singular & plural  # every noun form names one number


def test_nearest_noun_on_hand_made_sentences():
    stream, probes, vocab = hand_made()
    assert nearest_noun(stream, probes, noun_numbers(vocab)).tolist() == ["pl", "sg", "sg", "pl", "sg"]


def test_agreement_baselines_per_distance():
    stream, probes, vocab = hand_made()
    table = agreement_baselines(stream, probes, vocab)
    assert list(table.columns) == ["distance", "heuristic", "accuracy", "n"]
    nearest = table[table["heuristic"] == "nearest_noun"].set_index("distance")
    # distance 5: the author ... is (wrong), the books ... are (wrong); 1: the key is; 4: my dogs ... are; 7: right
    assert nearest["accuracy"].to_dict() == {1: 1.0, 4: 1.0, 5: 0.0, 7: 1.0}
    assert nearest["n"].to_dict() == {1: 1, 4: 1, 5: 2, 7: 1}
    assert (table.loc[table["heuristic"] == "chance", "accuracy"] == 0.5).all()


def test_a_head_that_is_not_a_noun_is_an_error():
    stream, probes, vocab = hand_made()
    probes.loc[0, "head_position"] = 0  # "the"
    with pytest.raises(ValueError, match="probe 0: the word at head_position 0 is not a noun"):
        nearest_noun(stream, probes, noun_numbers(vocab))


def test_nearest_noun_on_the_generated_corpus_follows_the_attractors(cache_dir):
    # attractor_prob 0.25: where a filler noun stands between head and verb the heuristic is right about 3/4 of
    # the time; at distances 1-3 no filler holds a noun (a piece with one is at least 3 tokens, plus the verb).
    corpus = load_corpus(
        "agreement",
        cache_dir=cache_dir,
        train_sentences=200,
        valid_sentences=50,
        test_sentences=3000,
        attractor_prob=0.25,
        max_distance=12,
    )
    probes = corpus.probes["test"]
    heads = noun_numbers(corpus.vocab)[corpus.test[probes["head_position"]]]
    assert (np.array(["sg", "pl"])[heads] == probes["number"]).all()  # the head is a noun of the probe's number
    table = agreement_baselines(corpus.test, probes, corpus.vocab)
    nearest = table[table["heuristic"] == "nearest_noun"].set_index("distance")
    assert (nearest.loc[[1, 2, 3], "accuracy"] == 1.0).all()
    far = nearest.loc[8:]
    assert 0.68 < (far["accuracy"] * far["n"]).sum() / far["n"].sum() < 0.85


# --------------------------------------------------------------------------------------------------------------
# Tables and the job


def toy_corpus(name: str, seed: int) -> Corpus:
    vocab = Vocab(("<eos>", "<unk>", *(f"w{i}" for i in range(1, 30))), unk_token="<unk>")
    return Corpus(name, vocab, *(random_text(n, 31, seed + i) for i, n in enumerate((4000, 500, 600))))


def test_baseline_tables_are_tidy_with_one_row_per_corpus_model_and_split(cache_dir):
    agreement = load_corpus(
        "agreement", cache_dir=cache_dir, train_sentences=300, valid_sentences=50, test_sentences=80
    )
    tables = baseline_tables({"toy-0000": toy_corpus("ptb", 0), "agreement-0000": agreement}, order=3)
    assert set(tables) == set(paths.BASELINE_TABLES)
    ppl = tables["baselines"]
    assert list(ppl[["corpus_key", "model", "split"]].itertuples(index=False, name=None)) == [
        (key, model, split)
        for key in ("agreement-0000", "toy-0000")
        for model in ("unigram", "kn3")
        for split in ("valid", "test")
    ]
    # the agreement corpus has structure to learn (the toy text is independent words: nothing beyond unigrams)
    agree_ppl = ppl[ppl["corpus_key"] == "agreement-0000"].set_index(["model", "split"])["perplexity"]
    assert agree_ppl["kn3", "test"] < agree_ppl["unigram", "test"]
    toy_test = ppl[(ppl["corpus_key"] == "toy-0000") & (ppl["split"] == "test")]
    assert (toy_test["n_tokens"] == 600).all()
    disc = tables["kn_discounts"]
    assert disc.groupby("corpus_key")["ngram_order"].apply(list).to_dict() == {
        "agreement-0000": [1, 2, 3],
        "toy-0000": [1, 2, 3],
    }
    agree = tables["agreement_baselines"]
    assert set(agree["corpus_key"]) == {"agreement-0000"} and set(agree["split"]) == {"test"}
    assert agree.groupby("heuristic")["n"].sum().to_dict() == {"chance": 80, "nearest_noun": 80}


def test_baseline_job_writes_each_table_with_its_provenance(tmp_path, cache_dir):
    options = {"train_sentences": 300, "valid_sentences": 50, "test_sentences": 80}
    stats = tmp_path / "corpora" / "agreement-1234abcd.json"
    stats.parent.mkdir()
    stats.write_text("{}")
    outs = {name: paths.table(str(tmp_path), name) for name in paths.BASELINE_TABLES}
    jobs.baseline_tables(
        {"agreement-1234abcd": {"corpus": "agreement", "options": options}},
        [str(stats)],
        outs,
        order=4,
        data_dir=None,
        cache_dir=str(cache_dir),
        provenance_files={name: paths.provenance(out) for name, out in outs.items()},
        provenance={"config": {}, "config_files": [], "command": "pytest", "checkout": str(tmp_path)},
    )
    read = res.baselines(tmp_path)
    assert set(read["model"]) == {"unigram", "kn4"}
    assert len(res.agreement_baselines(tmp_path)) > 0
    for out in outs.values():
        record = json.loads(Path(paths.provenance(out)).read_text(encoding="utf-8"))
        assert record["producer"] == "rnnbench.baselines.tables.baseline_tables" and record["inputs"] == [str(stats)]


# --------------------------------------------------------------------------------------------------------------
# The published number it checks the corpus pipeline against


def test_kn5_on_ptb_is_within_three_percent_of_mikolov(ptb):
    published = load_published()
    mikolov = float(published.loc[(published["corpus"] == "ptb") & (published["model"] == "KN5"), "test_ppl"].iloc[0])
    model = KneserNey.fit(ptb.train, len(ptb.vocab), 5, eos_id=ptb.vocab.stoi["<eos>"])  # no fallback: all estimated
    ours = model.score(ptb.test).perplexity
    assert abs(ours / mikolov - 1) < 0.03, (ours, mikolov)
    unigram = Unigram.fit(ptb.train, len(ptb.vocab)).score(ptb.test)
    assert unigram.n_tokens == ptb.test.size
    assert unigram.perplexity > 4 * ours
