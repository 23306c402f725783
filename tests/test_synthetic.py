from collections import Counter

import numpy as np
import pytest

from rnnbench.data import synthetic
from rnnbench.data.synthetic import AgreementConfig, generate, max_tokens

SMALL = AgreementConfig(seed=7, train_sentences=300, valid_sentences=50, test_sentences=50)
SINGULAR = {sg for sg, _ in synthetic.NOUNS}
PLURAL = {pl for _, pl in synthetic.NOUNS}
VERB_FORMS = {sg: ("sg", pl) for sg, pl, _ in synthetic.AGREEING_VERBS} | {
    pl: ("pl", sg) for sg, pl, _ in synthetic.AGREEING_VERBS
}


def test_word_classes_are_disjoint_and_a_few_hundred_words():
    classes = {
        "sg nouns": list(SINGULAR),
        "pl nouns": list(PLURAL),
        "verbs": list(VERB_FORMS),
        "adjectives": synthetic.ADJECTIVES,
        "transitive": synthetic.TRANSITIVE_PAST,
        "intransitive": synthetic.INTRANSITIVE_PAST,
        "prepositions": synthetic.PREPOSITIONS,
        "adverbs": synthetic.ADVERBS,
        "determiners": set(synthetic.DETERMINERS),
        "function": synthetic.FUNCTION_WORDS,
    }
    seen = Counter(w for words in classes.values() for w in set(words))
    assert [w for w, n in seen.items() if n > 1] == []
    assert 200 <= len(synthetic.lexicon()) <= 500
    assert len(SINGULAR) == len(PLURAL) == len(synthetic.NOUNS)


def test_same_seed_same_corpus_other_seed_other_corpus():
    a, b = generate(SMALL), generate(SMALL)
    other = generate(AgreementConfig(seed=8, train_sentences=300, valid_sentences=50, test_sentences=50))
    for split in synthetic.SPLITS:
        assert a[split].tokens == b[split].tokens
        assert a[split].probes == b[split].probes
        np.testing.assert_array_equal(a[split].sentence_starts, b[split].sentence_starts)
    assert a["train"].tokens != other["train"].tokens


def test_splits_are_independent_streams():
    # changing the test size must not change train
    bigger_test = AgreementConfig(seed=7, train_sentences=300, valid_sentences=50, test_sentences=80)
    small, bigger = generate(SMALL), generate(bigger_test)
    assert small["train"].tokens == bigger["train"].tokens
    assert small["test"].tokens == bigger["test"].tokens[: len(small["test"].tokens)]
    assert small["valid"].tokens[:50] != small["train"].tokens[:50]


def test_every_recorded_verb_agrees_with_its_head():
    for text in generate(SMALL).values():
        tokens = text.tokens
        assert len(text.probes) == len(text.sentence_starts)
        for probe, start in zip(text.probes, text.sentence_starts, strict=True):
            head, verb = tokens[probe.head_position], tokens[probe.position]
            assert probe.head_position > start
            assert probe.position - probe.head_position == probe.distance
            assert head in (SINGULAR if probe.number == "sg" else PLURAL)
            number, other_form = VERB_FORMS[verb]
            assert (verb, number) == (probe.correct, probe.number)
            assert probe.wrong == other_form
            # the probed verb is the only number-marked verb of its sentence
            end = tokens.index("<eos>", start)
            assert [w for w in tokens[start : end + 1] if w in VERB_FORMS] == [verb]


def test_distances_cover_the_configured_range_uniformly():
    cfg = AgreementConfig(
        seed=1, train_sentences=4000, valid_sentences=1, test_sentences=1, min_distance=3, max_distance=6
    )
    distances = Counter(p.distance for p in generate(cfg)["train"].probes)
    assert sorted(distances) == [3, 4, 5, 6]
    assert all(900 <= n <= 1100 for n in distances.values())  # 1000 expected each


def test_short_distances_and_filler_contents():
    cfg = AgreementConfig(
        seed=3, train_sentences=200, valid_sentences=1, test_sentences=1, min_distance=1, max_distance=2
    )
    text = generate(cfg)["train"]
    for probe in text.probes:
        between = text.tokens[probe.head_position + 1 : probe.position]
        assert len(between) == probe.distance - 1
        if probe.distance == 1:
            assert between == []
        else:  # one filler token can only be an adverb: "the book clearly was short"
            assert between[0] in synthetic.ADVERBS


def test_attractors_are_counted_and_common():
    text = generate(
        AgreementConfig(
            seed=2, train_sentences=500, valid_sentences=1, test_sentences=1, min_distance=10, max_distance=20
        )
    )["train"]
    total = 0
    for probe in text.probes:
        between = text.tokens[probe.head_position + 1 : probe.position]
        opposite = PLURAL if probe.number == "sg" else SINGULAR
        assert probe.attractors == sum(w in opposite for w in between)
        total += probe.attractors
    assert total / len(text.probes) > 1.0  # distances 10..20 hold about two filler nouns, 3/4 opposite


def test_sentences_start_where_recorded_and_end_with_eos():
    text = generate(SMALL)["valid"]
    starts = text.sentence_starts
    assert starts.dtype == np.int64 and starts[0] == 0
    assert text.tokens[-1] == "<eos>"
    assert all(text.tokens[s - 1] == "<eos>" for s in starts[1:])
    assert text.tokens.count("<eos>") == len(starts)
    assert all(text.tokens[s] in synthetic.DETERMINERS for s in starts)


@pytest.mark.parametrize(
    "bad",
    [
        {"min_distance": 0},
        {"max_distance": 0},
        {"train_sentences": 0},
        {"attractor_prob": 1.5},
        {"seed": "x"},
    ],
)
def test_bad_config_rejected(bad):
    with pytest.raises(ValueError):
        AgreementConfig(**bad)


def test_options_are_checked_against_the_schema_once():
    # ranges and types live in the config schema; the generator reads them from there
    with pytest.raises(
        ValueError, match=r"agreement.attractor_prob: 1.5 is out of range; allowed: \{'minimum': 0, 'maximum': 1\}"
    ):
        AgreementConfig(attractor_prob=1.5)
    with pytest.raises(ValueError, match=r"agreement.train_sentences: 'many' has the wrong type"):
        AgreementConfig(train_sentences="many")
    with pytest.raises(ValueError, match=r"max_distance must be >= min_distance \(9\), got 3"):
        AgreementConfig(min_distance=9, max_distance=3)
    whole = AgreementConfig(max_distance=12.0, attractor_prob=1)
    assert whole == AgreementConfig(max_distance=12, attractor_prob=1.0) and isinstance(whole.max_distance, int)


def test_long_distances_are_generated_without_deep_recursion():
    # a first call at distance r used to recurse about r levels: max_distance 1000 hit Python's recursion limit
    cfg = AgreementConfig(train_sentences=3, valid_sentences=1, test_sentences=1, min_distance=1000, max_distance=1000)
    train = generate(cfg)["train"]
    assert [probe.distance for probe in train.probes] == [1000, 1000, 1000]
    assert len(train.tokens) <= max_tokens(3, cfg)
