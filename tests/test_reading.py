"""How a run reads its data: the mode is chosen from the settings once, and each mode's step count is
the number of batches it yields."""

import math

import pytest
import torch
from test_train import SMALL_AGREEMENT, tiny

from rnnbench.data import load_corpus
from rnnbench.models import ModelConfig, build_model
from rnnbench.reading import SentenceReading, StreamReading, WindowReading, reading_for


@pytest.fixture(scope="module")
def corpus(cache_dir):
    return load_corpus("agreement", cache_dir=cache_dir, **SMALL_AGREEMENT)


@pytest.mark.parametrize(
    "settings, kind",
    [
        ({"bptt": 10}, StreamReading),
        ({"bptt": 0}, SentenceReading),
        ({"family": "lstm", "bptt": 0}, SentenceReading),
        ({"family": "ff", "context": 3}, WindowReading),
        ({"family": "ff", "context": 3, "bptt": 0}, WindowReading),  # bptt means nothing to windows
    ],
)
def test_the_settings_choose_the_reading(settings, kind, corpus):
    assert type(reading_for(tiny(**settings), corpus)) is kind


@pytest.mark.parametrize("settings", [{"bptt": 10}, {"bptt": 0}, {"family": "ff", "context": 3, "batch_size": 32}])
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
