import numpy as np
import pytest
import torch

from rnnbench.data.batching import IGNORE_INDEX, batchify, bptt_segments, ngram_windows, sentence_batches


def test_batchify_stream_0_to_9_two_columns():
    data = batchify(np.arange(10), 2)
    assert data.dtype == torch.int64 and data.shape == (5, 2)
    assert data.tolist() == [[0, 5], [1, 6], [2, 7], [3, 8], [4, 9]]


def test_batchify_drops_the_tail_and_matches_the_docstring_diagram():
    # a..x = 0..23, B = 4: columns a-f, g-l, m-r, s-x; two extra tokens are trimmed
    data = batchify(torch.arange(26), 4)
    assert data.tolist() == [
        [0, 6, 12, 18],
        [1, 7, 13, 19],
        [2, 8, 14, 20],
        [3, 9, 15, 21],
        [4, 10, 16, 22],
        [5, 11, 17, 23],
    ]
    assert data.is_contiguous()


def test_batchify_rejects_too_short_streams():
    with pytest.raises(ValueError, match="shorter than batch_size"):
        batchify(np.arange(3), 4)
    with pytest.raises(ValueError):
        batchify(np.arange(3), 0)


def test_bptt_segments_targets_shifted_last_segment_shorter():
    data = batchify(np.arange(12), 2)  # columns 0..5 and 6..11, T = 6
    segments = list(bptt_segments(data, 2))
    assert [(x.tolist(), y.tolist()) for x, y in segments] == [
        ([[0, 6], [1, 7]], [[1, 7], [2, 8]]),
        ([[2, 8], [3, 9]], [[3, 9], [4, 10]]),
        ([[4, 10]], [[5, 11]]),
    ]


def test_bptt_segments_cover_every_target_exactly_once():
    data = batchify(np.arange(70), 7)  # T = 10
    targets = torch.cat([y for _, y in bptt_segments(data, 4)])
    assert targets.tolist() == data[1:].tolist()
    assert [x.size(0) for x, _ in bptt_segments(data, 4)] == [4, 4, 1]
    assert [x.size(0) for x, _ in bptt_segments(data, 9)] == [9]
    assert [x.size(0) for x, _ in bptt_segments(data, 100)] == [9]


def test_ngram_windows_hand_worked():
    contexts, targets = ngram_windows(np.array([10, 11, 12, 13, 14, 15]), 2)
    assert contexts.tolist() == [[10, 11], [11, 12], [12, 13], [13, 14]]
    assert targets.tolist() == [12, 13, 14, 15]


def test_ngram_windows_are_a_view_of_the_stream():
    stream = np.arange(8, dtype=np.int64)
    contexts, targets = ngram_windows(stream, 3)
    assert contexts.shape == (5, 3) and contexts.stride() == (1, 1)
    stream[4] = 99  # the same memory: no copy was made
    assert contexts[:, 0].tolist() == [0, 1, 2, 3, 99] and targets[1].item() == 99
    assert contexts[2].tolist() == [2, 3, 99]


def test_ngram_windows_context_zero_and_errors():
    contexts, targets = ngram_windows(np.arange(3), 0)
    assert contexts.shape == (3, 0) and targets.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="no target"):
        ngram_windows(np.arange(3), 3)


# "the dog ran <eos> a cat <eos> big <eos>" as ids, <eos> = 0; sentences start at 0, 4, 7
STREAM = np.array([5, 6, 7, 0, 8, 9, 0, 4, 0])
STARTS = np.array([0, 4, 7])


def test_sentence_batches_hand_worked():
    batches = sentence_batches(STREAM, STARTS, 2)
    assert len(batches) == 2
    inputs, targets, positions = batches[0]
    assert inputs.tolist() == [[0, 0], [5, 8], [6, 9], [7, 0]]
    assert targets.tolist() == [[5, 8], [6, 9], [7, 0], [0, -100]]
    assert positions.tolist() == [[0, 4], [1, 5], [2, 6], [3, -1]]
    inputs, targets, positions = batches[1]  # the last batch holds one sentence, padded to its own length
    assert inputs.tolist() == [[0], [4]]
    assert targets.tolist() == [[4], [0]]
    assert positions.tolist() == [[7], [8]]
    assert all(t.dtype == torch.int64 for b in batches for t in b)


def test_sentence_batches_targets_equal_stream_at_positions():
    batches = sentence_batches(STREAM, STARTS, 3, shuffle_seed=0)
    for _, targets, positions in batches:
        real = positions >= 0
        assert torch.equal(targets[real], torch.as_tensor(STREAM)[positions[real]])
        assert torch.all(targets[~real] == IGNORE_INDEX)
    covered = torch.cat([p[p >= 0] for _, _, p in batches]).sort().values
    assert covered.tolist() == list(range(len(STREAM)))


def test_sentence_batches_shuffle_is_seeded():
    stream = np.array([1, 0] * 10)  # ten one-word sentences
    starts = np.arange(0, 20, 2)

    def first(seed):
        return [p[0].tolist() for _, _, p in sentence_batches(stream, starts, 4, shuffle_seed=seed)]

    assert first(3) == first(3)
    assert first(3) != first(4)
    assert first(None) == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]


def test_sentence_batches_rejects_sentences_without_eos():
    with pytest.raises(ValueError, match="must end with"):
        sentence_batches(np.array([5, 6, 0, 7, 8, 0]), np.array([0, 1]), 2)
    with pytest.raises(ValueError, match="increasing"):
        sentence_batches(STREAM, np.array([0, 4, 4]), 2)
