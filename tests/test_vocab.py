import os

import numpy as np
import pytest

from rnnbench.data.vocab import Vocab


def test_ids_by_descending_frequency_ties_alphabetical():
    # counts: the 3, cat 2, a 2, sat 1, mat 1, on 1
    words = ["the", "cat", "sat", "on", "the", "mat", "a", "cat", "a", "the"]
    vocab = Vocab.build(words)
    assert vocab.itos == ("the", "a", "cat", "mat", "on", "sat")
    assert vocab.stoi["the"] == 0 and vocab.stoi["a"] == 1 and vocab.stoi["sat"] == 5
    assert len(vocab) == 6


def test_rare_words_merge_into_unk_which_ranks_by_summed_count():
    # min_count 2: sat, on, mat (1 each) -> <unk> with count 3, ranked with "the" (3): '<' sorts before 't'
    words = ["the", "cat", "sat", "on", "the", "mat", "a", "cat", "a", "the"]
    vocab = Vocab.build(words, min_count=2, unk_token="<unk>")
    assert vocab.itos == ("<unk>", "the", "a", "cat")
    assert vocab.encode(["the", "mat", "dog", "cat"]).tolist() == [1, 0, 0, 3]


def test_encode_decode_roundtrip_and_dtype():
    vocab = Vocab(("<eos>", "b", "a"))
    ids = vocab.encode(["a", "b", "<eos>", "a"])
    assert ids.dtype == np.int64 and ids.tolist() == [2, 1, 0, 2]
    assert vocab.decode(ids) == ["a", "b", "<eos>", "a"]
    assert vocab.decode(np.array([[0, 1], [2, 0]])) == ["<eos>", "b", "a", "<eos>"]
    assert vocab.encode([]).shape == (0,)


def test_unknown_word_without_unk_token_raises():
    vocab = Vocab(("a", "b"))
    with pytest.raises(KeyError, match="'c' is not in the vocabulary"):
        vocab.encode(["a", "c"])


def test_extra_words_come_last_with_count_zero():
    vocab = Vocab.build(["b", "b", "a"], extra=["z", "c", "b"])
    assert vocab.itos == ("b", "a", "c", "z")


def test_invalid_vocabularies_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        Vocab(("a", "b", "a"))
    with pytest.raises(ValueError, match="not in the vocabulary"):
        Vocab(("a",), unk_token="<unk>")
    with pytest.raises(ValueError, match="needs an unk_token"):
        Vocab.build(["a"], min_count=2)
    with pytest.raises(ValueError, match="already occurs"):
        Vocab.build(["<unk>", "a"], min_count=2, unk_token="<unk>")


def test_frozen_and_stoi_read_only():
    vocab = Vocab(("a", "b"))
    with pytest.raises(AttributeError):
        vocab.itos = ("c",)
    with pytest.raises(TypeError):
        vocab.stoi["c"] = 2


def test_save_load_roundtrip(tmp_path):
    vocab = Vocab(("<unk>", "ünïcode", "a/b"), unk_token="<unk>")
    path = tmp_path / "sub" / "vocab.json"
    vocab.save(path)
    assert Vocab.load(path) == vocab
    assert Vocab.load(path).unk_token == "<unk>"
    assert [p.name for p in path.parent.iterdir()] == ["vocab.json"]  # no temp file left
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # as open() would make it, not mkstemp's 0600
