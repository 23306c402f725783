"""How a run reads its data: the mode is chosen from the settings once, and each mode's step count is
the number of batches it yields."""

import math

import pytest
import torch
from test_train import SMALL_AGREEMENT, tiny

from rnnbench.data import load_corpus
from rnnbench.models import ModelConfig, build_model
from rnnbench.training.reading import SentenceCutReading, SentenceReading, StreamReading, WindowReading, reading_for


@pytest.fixture(scope="module")
def corpus(cache_dir):
    return load_corpus("agreement", cache_dir=cache_dir, **SMALL_AGREEMENT)


@pytest.mark.parametrize(
    "settings, kind",
    [
        ({"bptt": 10}, StreamReading),
        ({"bptt": 0}, SentenceReading),
        ({"bptt": 0, "segments": "sentence"}, SentenceReading),  # nothing to cut
        ({"bptt": 5, "segments": "sentence"}, SentenceCutReading),
        ({"family": "lstm", "bptt": 5, "segments": "sentence"}, SentenceCutReading),
        ({"family": "lstm", "bptt": 0}, SentenceReading),
        ({"family": "ff", "context": 3}, WindowReading),
        ({"family": "ff", "context": 3, "bptt": 0}, WindowReading),  # bptt means nothing to windows
    ],
)
def test_the_settings_choose_the_reading(settings, kind, corpus):
    assert type(reading_for(tiny(**settings), corpus)) is kind


@pytest.mark.parametrize(
    "settings",
    [{"bptt": 10}, {"bptt": 0}, {"bptt": 3, "segments": "sentence"}, {"family": "ff", "context": 3, "batch_size": 32}],
)
def test_steps_per_epoch_is_the_number_of_batches(settings, corpus):
    reading = reading_for(tiny(max_steps_per_epoch=None, **settings), corpus)
    assert reading.steps_per_epoch() == sum(1 for _ in reading.batches(epoch=0))
    capped = reading_for(tiny(max_steps_per_epoch=3, **settings), corpus)
    assert capped.steps_per_epoch() == 3


def test_stream_steps_hand_worked(corpus):
    # 3000 training tokens cut at a sentence boundary; B = 8 columns of T = len // 8 rows; T - 1 input rows
    # in segments of bptt 10
    reading = reading_for(tiny(max_steps_per_epoch=None), corpus)
    rows = len(reading.train) // 8
    assert reading.steps_per_epoch() == math.ceil((rows - 1) / 10)


def test_only_the_stream_carries_its_state(corpus):
    for settings, carried in (({"bptt": 10}, True), ({"bptt": 0}, False), ({"family": "ff", "context": 3}, False)):
        cfg = tiny(**settings)
        reading = reading_for(cfg, corpus)
        model = build_model(ModelConfig.from_run(cfg, len(corpus.vocab)))
        first = reading.first_state(model)
        assert (first is not None) == carried
        w = torch.ones((), requires_grad=True)
        state = reading.next_state(torch.zeros(8, 16) * w)
        assert (state is not None and not state.requires_grad) if carried else state is None


def test_sentence_cuts_read_the_batches_of_full_sentence_bptt(corpus):
    # the same sentences in the same shuffled order, each from h_0 = 0; only the batches' cut_every differs
    full, cut = reading_for(tiny(bptt=0), corpus), reading_for(tiny(bptt=3, segments="sentence"), corpus)
    assert full.steps_per_epoch() == cut.steps_per_epoch()
    for epoch in (0, 1):
        pairs = list(zip(full.batches(epoch), cut.batches(epoch), strict=True))
        assert all(torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets) for a, b in pairs)
        assert {a.cut_every for a, _ in pairs} == {None} and {b.cut_every for _, b in pairs} == {3}
    assert cut.first_state(None) is None and cut.next_state("anything") is None
