"""The results layout's names."""

from rnnbench import paths


def test_a_corpus_key_is_the_corpus_and_eight_hex_digits_of_its_options():
    # sha1(b"{}") = bf21a9e8fbc5...: a corpus read with its default options
    assert paths.corpus_key("ptb", {}) == "ptb-bf21a9e8"
    # the options' order does not matter; their values do
    assert paths.corpus_key("agreement", {"a": 1, "b": 2}) == paths.corpus_key("agreement", {"b": 2, "a": 1})
    assert paths.corpus_key("agreement", {"a": 1}) != paths.corpus_key("agreement", {"a": 2})
