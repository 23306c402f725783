import hashlib
import shutil
import time
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rnnbench.data import CorpusError, corpora, load_corpus, synthetic

SMALL_AGREEMENT = {"seed": 5, "train_sentences": 200, "valid_sentences": 40, "test_sentences": 40}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(folder: Path) -> list[str]:
    """Every file under folder (temp files included), as relative paths."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def copy_ptb(data_dir: Path, dest: Path) -> Path:
    (dest / "ptb").mkdir(parents=True)
    for split in ("train", "valid", "test"):
        shutil.copyfile(data_dir / "ptb" / f"ptb.{split}.txt", dest / "ptb" / f"ptb.{split}.txt")
    return dest


@pytest.fixture
def offline(monkeypatch):
    """No network, and no RNNBENCH_DATA: a load must download and the download fails."""

    def refuse(url, timeout=None):
        raise urllib.error.URLError("[Errno 101] Network is unreachable")

    monkeypatch.setattr(corpora, "urlopen", refuse)
    monkeypatch.delenv("RNNBENCH_DATA", raising=False)


# ---------------------------------------------------------------------------------------------- PTB


@pytest.mark.corpus
def test_ptb_counts_and_vocabulary(ptb):
    assert (ptb.train.size, ptb.valid.size, ptb.test.size) == (929_589, 73_760, 82_430)
    assert len(ptb.vocab) == 10_000 and ptb.vocab.unk_token == "<unk>"
    # by train frequency: the 50,770, <unk> 45,020, <eos> 42,068 (one per line), N 32,481
    assert ptb.vocab.itos[:4] == ("the", "<unk>", "<eos>", "N")
    assert np.bincount(ptb.train, minlength=4)[:4].tolist() == [50_770, 45_020, 42_068, 32_481]
    assert all(a.dtype == np.int64 for a in (ptb.train, ptb.valid, ptb.test))
    stats = ptb.statistics()
    assert stats["train_sentences"] == 42_068 and stats["valid_sentences"] == 3_370
    assert stats["test_sentences"] == 3_761 and stats["vocab_size"] == 10_000


@pytest.mark.corpus
def test_ptb_stream_decodes_to_the_file(ptb):
    assert ptb.vocab.decode(ptb.train[:26]) == [
        "aer",
        "banknote",
        "berlitz",
        "calloway",
        "centrust",
        "cluett",
        "fromstein",
        "gitano",
        "guterman",
        "hydro-quebec",
        "ipo",
        "kia",
        "memotec",
        "mlx",
        "nahb",
        "punts",
        "rake",
        "regatta",
        "rubens",
        "sim",
        "snack-food",
        "ssangyong",
        "swapo",
        "wachter",
        "<eos>",
        "pierre",
    ]
    assert ptb.vocab.decode(ptb.test[:7]) == ["no", "it", "was", "n't", "black", "monday", "<eos>"]
    assert ptb.vocab.decode(ptb.test[-1:]) == ["<eos>"]


@pytest.mark.corpus
def test_second_load_is_served_from_cache_fast(ptb, brown, data_dir, cache_dir):
    for corpus in (ptb, brown):
        start = time.perf_counter()
        again = load_corpus(corpus.name, data_dir=data_dir, cache_dir=cache_dir)
        elapsed = time.perf_counter() - start
        assert again.from_cache and elapsed < 0.5, elapsed
        assert again.vocab == corpus.vocab
        for split in ("train", "valid", "test"):
            np.testing.assert_array_equal(again.split(split), corpus.split(split))
    assert not [f for f in leftovers(cache_dir) if f.endswith((".tmp", ".part"))]


# ---------------------------------------------------------------------------------------------- Brown


@pytest.mark.corpus
def test_brown_split_and_vocabulary_as_measured(brown):
    # Bengio et al. (2003): 1,181,041 tokens, |V| = 16,383. NLTK's edition: 1,161,192 tokens and,
    # with words seen <= 3 times in the whole stream merged into <unk>, |V| = 17,905.
    assert (brown.train.size, brown.valid.size, brown.test.size) == (800_000, 200_000, 161_192)
    assert len(brown.vocab) == 17_905 and brown.vocab.unk_token == "<unk>"
    assert brown.vocab.itos[:4] == ("the", ",", "<unk>", ".")  # <unk> ranks by the count of the words it merges
    unk = brown.vocab.stoi["<unk>"]
    whole = np.concatenate([brown.train, brown.valid, brown.test])
    counts = np.bincount(whole, minlength=len(brown.vocab))
    assert counts[unk] == 39_383 + 8_720 + 7_079  # rare tokens of train, valid and test
    assert np.delete(counts, unk).min() == 4  # every kept word was seen more than 3 times in the stream
    train_counts = np.bincount(brown.train, minlength=len(brown.vocab))
    assert int((train_counts == 0).sum()) == 777  # kept for their count over the stream, never seen in train
    assert brown.vocab.decode(brown.train[:10]) == (
        ["The", "Fulton", "County", "Grand", "Jury", "said", "Friday", "an", "investigation", "of"]
    )
    assert brown.vocab.decode(brown.test[-5:]) == ["<unk>", "dress", "was", "<unk>", "."]
    stats = brown.statistics()
    assert stats["train_unk_rate"] == pytest.approx(39_383 / 800_000)
    assert stats["test_unk_rate"] == pytest.approx(7_079 / 161_192)


@pytest.mark.corpus
def test_brown_with_case_folded_has_a_vocabulary_the_size_of_bengios(data_dir, cache_dir):
    # Folded, NLTK's edition has 49,815 types (Bengio et al.: 47,578, +4.7%) and |V| = 16,690 (16,383, +1.9%)
    folded = load_corpus("brown", data_dir=data_dir, cache_dir=cache_dir, lowercase=True)
    words = pd.Series(corpora._brown_words(data_dir / "brown" / "brown.zip", corpora.SOURCES["brown"][0])).str.lower()
    assert words.nunique() == 49_815
    kept = words.value_counts()
    assert set(folded.vocab.itos) == {*kept.index[kept > 3], "<unk>"} and len(folded.vocab) == 16_690
    assert [folded.split(s).size for s in ("train", "valid", "test")] == [800_000, 200_000, 161_192]
    assert folded.vocab.decode(folded.train[:3]) == ["the", "fulton", "county"]
    unk = folded.vocab.stoi["<unk>"]
    assert [int((split == unk).sum()) for split in (folded.train, folded.valid, folded.test)] == [34_204, 7_671, 6_293]
    assert corpora.known_sizes("brown", {"lowercase": True}).vocab_size == 16_690
    with pytest.raises(CorpusError, match=r"lowercase must be true or false, found 'yes'"):
        corpora.known_sizes("brown", {"lowercase": "yes"})
    with pytest.raises(CorpusError, match=r"separators must be true or false, found 1"):
        corpora.known_sizes("brown", {"separators": 1})


@pytest.mark.corpus
def test_brown_with_separators_marks_every_paragraph_and_text(data_dir, cache_dir):
    # NLTK's edition has 15,667 paragraphs (blank-line blocks) in 500 texts: 1,161,192 + 16,167 = 1,177,359 tokens
    # (Bengio et al.: 1,181,041), so the test split, all after the first 1,000,000, has 177,359 (theirs 181,041)
    marked = load_corpus("brown", data_dir=data_dir, cache_dir=cache_dir, lowercase=True, separators=True)
    assert [marked.split(s).size for s in ("train", "valid", "test")] == [800_000, 200_000, 177_359]
    assert len(marked.vocab) == 16_692  # the folded vocabulary and the two marks
    whole = np.concatenate([marked.train, marked.valid, marked.test])
    counts = {mark: int((whole == marked.vocab.stoi[mark]).sum()) for mark in ("<p>", "<text>")}
    assert counts == {"<p>": 15_667, "<text>": 500}
    # the first paragraph is the first sentence; the last text ends with its paragraph's mark, then its own
    first = marked.vocab.decode(marked.train[:26])
    assert first[:3] == ["the", "fulton", "county"] and first[-2:] == [".", "<p>"] and "<p>" not in first[:-1]
    assert marked.vocab.decode(marked.test[-3:]) == [".", "<p>", "<text>"]
    assert corpora.known_sizes("brown", {"lowercase": True, "separators": True}) == corpora.KnownSizes(
        16_692, {"train": 800_000, "valid": 200_000, "test": 177_359}, False
    )


@pytest.mark.corpus
def test_brown_raw_tokens_types_and_slashes(data_dir):
    remote = corpora.SOURCES["brown"][0]
    words = corpora._brown_words(data_dir / "brown" / "brown.zip", remote)
    assert len(words) == 1_161_192 and len(set(words)) == 56_057
    assert words[:3] == ["The", "Fulton", "County"]
    # split on the last '/': fractions keep their slash
    assert {"1/2", "4-7/8", "builder/active"} <= set(words)
    whole = pd.Series(words).value_counts()
    assert int((whole > 3).sum()) == 17_904  # words kept by the rare-word rule over the whole stream: |V| = 17,905
    assert int((pd.Series(words[:800_000]).value_counts() > 3).sum()) == 14_113  # in train alone: |V| would be 14,114


@pytest.mark.corpus
def test_brown_other_copy_needs_expected_sha256(data_dir, brown, tmp_path):
    # same documents, stored uncompressed: other bytes, other digest
    (tmp_path / "brown").mkdir()
    copy = tmp_path / "brown" / "brown.zip"
    with zipfile.ZipFile(data_dir / "brown" / "brown.zip") as src, zipfile.ZipFile(copy, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
    digest = sha256(copy)
    with pytest.raises(CorpusError) as err:
        load_corpus("brown", data_dir=tmp_path, cache_dir=tmp_path / "cache")
    message = str(err.value)
    assert str(copy) in message and "checksum mismatch" in message
    assert corpora.SOURCES["brown"][0].sha256 in message and digest in message
    assert f"expected_sha256='{digest}'" in message
    accepted = load_corpus("brown", data_dir=tmp_path, cache_dir=tmp_path / "cache", expected_sha256=digest)
    assert not accepted.from_cache
    np.testing.assert_array_equal(accepted.test, brown.test)
    assert accepted.vocab == brown.vocab


def test_brown_member_not_utf8(tmp_path):
    (tmp_path / "brown").mkdir()
    path = tmp_path / "brown" / "brown.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(500):
            name = f"brown/c{'abcdefghijklmnopqr'[i // 28]}{i % 28 + 1:02d}"
            z.writestr(name, b"\n\tThe/at caf\xe9/nn ./.\n" if i == 3 else b"\n\tThe/at dog/nn ./.\n")
    with pytest.raises(CorpusError) as err:
        load_corpus("brown", data_dir=tmp_path, cache_dir=tmp_path / "cache", expected_sha256=sha256(path))
    message = str(err.value)
    assert "member brown/ca04" in message and "not UTF-8" in message and "0xe9" in message
    assert "fresh copy" in message
    assert not (tmp_path / "cache").exists()


@pytest.mark.corpus
def test_brown_truncated(data_dir, tmp_path):
    (tmp_path / "brown").mkdir()
    path = tmp_path / "brown" / "brown.zip"
    path.write_bytes((data_dir / "brown" / "brown.zip").read_bytes()[:1_000_000])
    with pytest.raises(CorpusError, match=r"truncated: expected 3,294,349 bytes, found 1,000,000"):
        load_corpus("brown", data_dir=tmp_path, cache_dir=tmp_path / "cache")
    # accepted by digest, the damage shows when the zip is read
    with pytest.raises(CorpusError, match=r"brown.zip: truncated or damaged zip archive"):
        load_corpus("brown", data_dir=tmp_path, cache_dir=tmp_path / "cache", expected_sha256=sha256(path))
    assert not (tmp_path / "cache").exists()


# ---------------------------------------------------------------------------------------------- errors


@pytest.mark.corpus
def test_ptb_truncated(data_dir, tmp_path):
    folder = copy_ptb(data_dir, tmp_path / "data")
    train = folder / "ptb" / "ptb.train.txt"
    train.write_bytes(train.read_bytes()[:1000])
    with pytest.raises(CorpusError) as err:
        load_corpus("ptb", data_dir=folder, cache_dir=tmp_path / "cache")
    message = str(err.value)
    assert str(train) in message and "truncated: expected 5,101,618 bytes, found 1,000" in message
    assert "fcea919f6cf83f35" in message and "fresh copy from https://raw.githubusercontent.com" in message


@pytest.mark.corpus
def test_ptb_not_utf8(data_dir, tmp_path):
    folder = copy_ptb(data_dir, tmp_path / "data")
    valid = folder / "ptb" / "ptb.valid.txt"
    valid.write_bytes(valid.read_bytes().replace(b" consumers ", b" consum\xe9rs ", 1))
    with pytest.raises(CorpusError) as err:
        load_corpus("ptb", data_dir=folder, cache_dir=tmp_path / "cache")
    message = str(err.value)
    assert str(valid) in message and "not UTF-8" in message and "0xe9" in message
    assert "c9fe6985fe0d4ccb" in message and sha256(valid) in message


@pytest.mark.corpus
def test_ptb_checksum_mismatch(data_dir, tmp_path):
    folder = copy_ptb(data_dir, tmp_path / "data")
    test = folder / "ptb" / "ptb.test.txt"
    test.write_bytes(test.read_bytes().replace(b" monday ", b" friday ", 1))  # same size, other bytes
    with pytest.raises(CorpusError) as err:
        load_corpus("ptb", data_dir=folder, cache_dir=tmp_path / "cache")
    message = str(err.value)
    assert f"{test}: checksum mismatch" in message
    assert f"expected sha256 {corpora.SOURCES['ptb'][2].sha256}, found {sha256(test)}" in message
    assert not (tmp_path / "cache").exists()


def test_missing_file_in_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNBENCH_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(CorpusError) as err:
        load_corpus("ptb", cache_dir=tmp_path / "cache")
    message = str(err.value)
    assert str(tmp_path / "nowhere" / "ptb" / "ptb.train.txt") in message
    assert "found no such file" in message and "RNNBENCH_DATA" in message


def test_missing_file_offline(tmp_path, offline):
    with pytest.raises(CorpusError) as err:
        load_corpus("brown", cache_dir=tmp_path / "cache")
    message = str(err.value)
    assert "brown.zip" in message and str(tmp_path / "cache" / "downloads" / "brown" / "brown.zip") in message
    assert corpora.SOURCES["brown"][0].url in message and "Network is unreachable" in message
    assert "RNNBENCH_DATA" in message
    assert leftovers(tmp_path / "cache") == []  # no partial download


@pytest.mark.corpus
def test_download_from_file_url(data_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("RNNBENCH_DATA", raising=False)
    mirrored = tuple(
        corpora.RemoteFile(f.filename, (data_dir / "ptb" / f.filename).as_uri(), f.sha256, f.size, f.text)
        for f in corpora.SOURCES["ptb"]
    )
    monkeypatch.setitem(corpora.SOURCES, "ptb", mirrored)
    cache = tmp_path / "cache"
    corpus = load_corpus("ptb", cache_dir=cache)
    assert not corpus.from_cache and corpus.train.size == 929_589
    downloads = cache / "downloads" / "ptb"
    assert sorted(p.name for p in downloads.iterdir()) == ["ptb.test.txt", "ptb.train.txt", "ptb.valid.txt"]
    assert sha256(downloads / "ptb.valid.txt") == corpora.SOURCES["ptb"][1].sha256
    assert load_corpus("ptb", cache_dir=cache).from_cache


@pytest.mark.corpus
def test_download_of_a_damaged_copy_leaves_nothing(data_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("RNNBENCH_DATA", raising=False)
    short = tmp_path / "mirror" / "ptb.train.txt"
    short.parent.mkdir()
    short.write_bytes((data_dir / "ptb" / "ptb.train.txt").read_bytes()[:4096])
    train = corpora.SOURCES["ptb"][0]
    damaged = (
        corpora.RemoteFile(train.filename, short.as_uri(), train.sha256, train.size, train.text),
        *corpora.SOURCES["ptb"][1:],
    )
    monkeypatch.setitem(corpora.SOURCES, "ptb", damaged)
    with pytest.raises(CorpusError, match=r"downloaded from file:.*truncated: expected 5,101,618 bytes, found 4,096"):
        load_corpus("ptb", cache_dir=tmp_path / "cache")
    assert leftovers(tmp_path / "cache") == []


def test_unknown_corpus_and_options(tmp_path):
    with pytest.raises(CorpusError, match=r"unknown corpus 'ptbb': expected one of agreement, brown, ptb"):
        load_corpus("ptbb", cache_dir=tmp_path)
    with pytest.raises(CorpusError, match=r"'ptb' got unknown option\(s\) seed; it takes: no options"):
        load_corpus("ptb", cache_dir=tmp_path, seed=1)
    with pytest.raises(CorpusError, match=r"'agreement' got unknown option\(s\) max_dist; it takes: attractor_prob"):
        load_corpus("agreement", cache_dir=tmp_path, max_dist=5)
    with pytest.raises(
        CorpusError,
        match=r"corpus 'agreement': bad option: agreement.min_distance: 0 is out of range; allowed: \{'minimum': 1\}",
    ):
        load_corpus("agreement", cache_dir=tmp_path, min_distance=0)
    with pytest.raises(CorpusError, match=r"expected_sha256 must be 64 hex digits, found 'abc'"):
        load_corpus("brown", cache_dir=tmp_path, expected_sha256="abc")
    assert leftovers(tmp_path) == []


# ---------------------------------------------------------------------------------------------- agreement and cache


def test_agreement_probes_decode_to_agreeing_verbs(tmp_path):
    corpus = load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    singular = {sg for sg, _ in synthetic.NOUNS}
    other_form = {sg: pl for sg, pl, _ in synthetic.AGREEING_VERBS} | {pl: sg for sg, pl, _ in synthetic.AGREEING_VERBS}
    for split in ("train", "valid", "test"):
        stream, probes = corpus.split(split), corpus.probes[split]
        assert list(probes.columns[:6]) == ["position", "head_position", "distance", "correct_id", "wrong_id", "number"]
        assert len(probes) == len(corpus.sentence_starts[split]) == SMALL_AGREEMENT[f"{split}_sentences"]
        np.testing.assert_array_equal(stream[probes["position"]], probes["correct_id"])
        np.testing.assert_array_equal(probes["position"] - probes["head_position"], probes["distance"])
        for row in probes.itertuples():
            head, verb = corpus.vocab.decode([stream[row.head_position], row.correct_id])
            assert row.number == ("sg" if head in singular else "pl")
            assert corpus.vocab.itos[row.wrong_id] == other_form[verb]
    assert corpus.vocab.unk_token is None and corpus.vocab.decode(corpus.train[-1:]) == ["<eos>"]
    # every lexicon word has an id (wrong forms included), most frequent first
    assert set(corpus.vocab.itos) == set(synthetic.lexicon())
    counts = np.bincount(corpus.train, minlength=len(corpus.vocab))
    assert np.all(np.diff(counts) <= 0)


def test_agreement_cache_roundtrip_and_keyed_by_options(tmp_path):
    fresh = load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    cached = load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    assert not fresh.from_cache and cached.from_cache
    assert cached.vocab == fresh.vocab
    for split in ("train", "valid", "test"):
        np.testing.assert_array_equal(cached.split(split), fresh.split(split))
        np.testing.assert_array_equal(cached.sentence_starts[split], fresh.sentence_starts[split])
        pd.testing.assert_frame_equal(cached.probes[split], fresh.probes[split])
    assert cached.statistics() == fresh.statistics()
    other = load_corpus("agreement", cache_dir=tmp_path, **{**SMALL_AGREEMENT, "seed": 6})
    assert not other.from_cache and not np.array_equal(other.train[:100], fresh.train[:100])
    names = leftovers(tmp_path)
    assert len(names) == 4 and all(n.startswith("agreement-") for n in names)
    assert {n.split(".", 1)[1] for n in names} == {"npz", "vocab.json"}


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNBENCH_CACHE", str(tmp_path / "env-cache"))
    load_corpus("agreement", **SMALL_AGREEMENT)
    assert len(leftovers(tmp_path / "env-cache")) == 2


def test_the_cache_setting_wins_over_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNBENCH_CACHE", str(tmp_path / "env-cache"))
    load_corpus("agreement", cache_dir=tmp_path / "given", **SMALL_AGREEMENT)
    assert len(leftovers(tmp_path / "given")) == 2 and not (tmp_path / "env-cache").exists()


def test_a_cache_folder_that_is_a_file_is_named_before_the_corpus_is_read(tmp_path, monkeypatch):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    monkeypatch.setitem(corpora._BUILDERS, "agreement", lambda *args: pytest.fail("the corpus was read"))
    with pytest.raises(CorpusError) as caught:
        load_corpus("agreement", cache_dir=a_file, **SMALL_AGREEMENT)
    assert str(caught.value).startswith(
        f"agreement: the cache folder {a_file} (given by cache_dir) is a file, not a folder, and it holds no prepared "
        "agreement corpus with these options. Fix: point cache_dir at a folder rnnbench can write"
    )


def test_a_read_only_cache_that_holds_the_corpus_serves_it(tmp_path, monkeypatch):
    from rnnbench.config import locations

    load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    monkeypatch.setattr(locations.os, "access", lambda path, mode: False)  # as a read-only mount would say
    assert load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT).from_cache
    with pytest.raises(CorpusError, match=f"cannot be written: {tmp_path} is read-only for this user"):
        load_corpus("agreement", cache_dir=tmp_path, **{**SMALL_AGREEMENT, "seed": 9})


def test_failed_cache_write_leaves_nothing(tmp_path, monkeypatch):
    import os

    real_replace = os.replace

    def replace_then_fail(src, dst):
        if str(dst).endswith(".npz"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_then_fail)
    with pytest.raises(OSError, match="No space left"):
        load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    assert leftovers(tmp_path) == []


def test_damaged_cache_entry_is_rebuilt(tmp_path):
    load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    npz = next(tmp_path.glob("*.npz"))
    npz.write_bytes(npz.read_bytes()[:100])
    again = load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    assert not again.from_cache
    assert load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT).from_cache


def test_default_agreement_statistics(agreement):
    stats = agreement.statistics()
    assert (stats["train_sentences"], stats["valid_sentences"], stats["test_sentences"]) == (20_000, 2_000, 2_000)
    assert stats["train_probes"] == 20_000 and 10 < stats["train_mean_distance"] < 11  # uniform 1..20: 10.5
    assert 200 <= stats["vocab_size"] <= 500 and stats["train_unk_rate"] == 0.0
    assert set(agreement.probes["test"]["distance"]) == set(range(1, 21))


@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_empty_or_truncated_cache_file_is_rebuilt_naming_it(tmp_path, caplog, damage):
    load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    npz = next(tmp_path.glob("*.npz"))
    data = npz.read_bytes()
    npz.write_bytes(b"" if damage == "empty" else data[: len(data) // 2])  # `truncate -s 0` / a cut copy
    again = load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    assert not again.from_cache and str(npz) in caplog.text and "rebuilding" in caplog.text
    assert load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT).from_cache


def test_cached_vocabulary_that_does_not_match_the_arrays_is_refused_and_rebuilt(tmp_path, caplog):
    fresh = load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    vocab_json = next(tmp_path.glob("*.vocab.json"))
    shorter = fresh.vocab.itos[:10]  # ids 10 and beyond now name no word
    vocab_json.write_text(corpora.Vocab(shorter).to_json(), encoding="utf-8")
    again = load_corpus("agreement", cache_dir=tmp_path, **SMALL_AGREEMENT)
    assert not again.from_cache and again.vocab == fresh.vocab
    assert str(vocab_json) in caplog.text and "the vocabulary has 10 words" in caplog.text


@pytest.mark.parametrize("where", ["data_dir", "downloads"])
def test_a_directory_where_a_corpus_file_should_be(tmp_path, offline, where):
    folder = tmp_path / "data" if where == "data_dir" else tmp_path / "cache" / "downloads"
    (folder / "ptb" / "ptb.train.txt").mkdir(parents=True)
    with pytest.raises(CorpusError, match=r"ptb\.train\.txt: expected a file at .*, found a directory"):
        load_corpus("ptb", data_dir=tmp_path / "data" if where == "data_dir" else None, cache_dir=tmp_path / "cache")


def test_known_sizes_match_the_corpora(tmp_path):
    # what a configuration is checked against before any job: the sizes the corpora have when read
    options = {**SMALL_AGREEMENT, "max_distance": 7}
    known = corpora.known_sizes("agreement", options)
    corpus = load_corpus("agreement", cache_dir=tmp_path, **options)
    assert known.vocab_size == len(corpus.vocab) == len(synthetic.lexicon())
    for split in ("train", "valid", "test"):
        assert corpus.split(split).size <= known.max_tokens[split]
        lengths = np.diff(np.append(corpus.sentence_starts[split], corpus.split(split).size))
        assert lengths.max() <= options["max_distance"] + synthetic.MAX_TOKENS_BEYOND_DISTANCE
    assert corpora.known_sizes("ptb", {}) == corpora.KnownSizes(
        10_000, {"train": 929_589, "valid": 73_760, "test": 82_430}, False
    )
    assert corpora.known_sizes("brown", {}).vocab_size == 17_905  # test_brown_split_and_vocabulary_as_measured
    assert corpora.known_sizes("brown", {"expected_sha256": "0" * 64}).vocab_size is None  # another copy: unknown
    with pytest.raises(CorpusError, match="corpus 'ptb' got unknown option"):
        corpora.known_sizes("ptb", {"seed": 1})
