"""Analytic parameter counts, worked by hand on the chapter's numbers (|V| = 10,000, d = 100, H = 500)."""

import pytest

from rnnbench.params import (
    adaptive_softmax_shapes,
    count,
    crossover_context,
    ff_lm_shapes,
    ff_minus_rnn,
    lstm_lm_shapes,
    rnn_lm_shapes,
)

V, D, H = 10_000, 100, 500


def test_rnn_shapes_chapter_numbers():
    shapes = rnn_lm_shapes(V, D, H)
    assert shapes == {
        "embedding": (10_000, 100),  # 1,000,000
        "W": (500, 100),  #     50,000
        "U": (500, 500),  #    250,000
        "b_h": (500,),  #        500
        "V": (10_000, 500),  # 5,000,000
        "b_y": (10_000,),  #     10,000
    }
    assert count(shapes) == 1_000_000 + 50_000 + 250_000 + 500 + 5_000_000 + 10_000 == 6_310_500


def test_ff_shapes_grow_with_context():
    # n-1 = 3: W_h is (500, 3*100) = 150,000.
    shapes = ff_lm_shapes(V, D, context=3, hidden=H)
    assert shapes == {
        "embedding": (10_000, 100),
        "W_h": (500, 300),
        "b_h": (500,),
        "V": (10_000, 500),
        "b_y": (10_000,),
    }
    assert count(shapes) == 1_000_000 + 150_000 + 500 + 5_000_000 + 10_000 == 6_160_500
    # Each extra context word adds d*H = 50,000 and nothing else.
    assert count(ff_lm_shapes(V, D, 4, H)) - count(shapes) == 50_000


def test_ff_direct_and_no_hidden():
    direct = ff_lm_shapes(V, D, 3, H, direct=True)
    assert direct["W_direct"] == (10_000, 300)  # 3,000,000
    assert count(direct) == 6_160_500 + 3_000_000
    # hidden = 0: the softmax reads the 300-long concatenation directly.
    bare = ff_lm_shapes(V, D, 3, 0)
    assert bare == {"embedding": (10_000, 100), "V": (10_000, 300), "b_y": (10_000,)}
    assert count(bare) == 1_000_000 + 3_000_000 + 10_000 == 4_010_000
    with pytest.raises(ValueError, match="direct"):
        ff_lm_shapes(V, D, 3, 0, direct=True)


def test_lstm_shapes():
    shapes = lstm_lm_shapes(V, D, H)
    assert shapes["W"] == (2000, 100) and shapes["U"] == (2000, 500) and shapes["b"] == (2000,)
    assert count(shapes) == 1_000_000 + 200_000 + 1_000_000 + 2_000 + 5_000_000 + 10_000 == 7_212_000


def test_adaptive_softmax_shapes_ptb_sized():
    # H = 200, cutoffs (2000, 6000), div 4: tail widths 200 // 4 = 50 and 200 // 16 = 12.
    shapes = adaptive_softmax_shapes(200, V, (2000, 6000), 4.0)
    assert shapes == {
        "out.head": (2002, 200),  # 2000 shortlist words + 2 cluster entries: 400,400
        "out.head_bias": (2002,),  #   2,002
        "out.tail.0.proj": (50, 200),  #  10,000
        "out.tail.0.out": (4000, 50),  # 200,000
        "out.tail.1.proj": (12, 200),  #   2,400
        "out.tail.1.out": (4000, 12),  #  48,000
    }
    assert count(shapes) == 662_802
    # against a full softmax of 200 * 10,000 + 10,000 = 2,010,000
    assert count(rnn_lm_shapes(V, 200, 200, cutoffs=(2000, 6000))) == 2_000_000 + 40_000 + 40_000 + 200 + 662_802
    with pytest.raises(ValueError, match="cutoffs"):
        adaptive_softmax_shapes(200, V, (6000, 2000))
    with pytest.raises(ValueError, match="cutoffs"):
        adaptive_softmax_shapes(200, V, (2000, 10_000))


def test_crossover_chapter_numbers():
    # FF - RNN = (n-1)*d*H - d*H - H^2 = 50,000 (n-1) - 300,000.
    rnn = count(rnn_lm_shapes(V, D, H))
    ff = {k: count(ff_lm_shapes(V, D, k, H)) for k in (3, 5, 6, 7)}
    assert ff[3] - rnn == -150_000  # the chapter: at a context of three the FF model is smaller
    assert ff[5] - rnn == -50_000  # still smaller at five
    assert ff[6] - rnn == 0  # an exact tie at n-1 = 1 + H/d = 6
    assert ff[7] - rnn == 50_000  # strictly larger from n-1 = 7
    assert [ff_minus_rnn(k, D, H) for k in (3, 5, 6, 7)] == [-150_000, -50_000, 0, 50_000]
    assert crossover_context(D, H) == 7
    # The chapter's "five" is the tie of W_h against U alone: 5 * 100 * 500 == 500 ** 2.
    assert 5 * D * H == H * H


@pytest.mark.parametrize("d, h", [(100, 500), (100, 200), (128, 200), (200, 200), (300, 100), (64, 1000)])
def test_crossover_matches_brute_force(d, h):
    vocab = 777  # |V| cancels: any value gives the same answer
    rnn = count(rnn_lm_shapes(vocab, d, h))
    first = next(k for k in range(1, 1000) if count(ff_lm_shapes(vocab, d, k, h)) > rnn)
    assert crossover_context(d, h) == first


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="hidden"):
        rnn_lm_shapes(V, D, 0)
    with pytest.raises(ValueError, match="context"):
        ff_lm_shapes(V, D, 0, H)
