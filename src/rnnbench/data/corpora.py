"""Corpora: find or download, verify, read, encode, cache.

    load_corpus("ptb")        Mikolov's Penn Treebank: 10k words, one <eos> per line
    load_corpus("brown")      NLTK's Brown corpus, split and rare-word-merged as Bengio et al. (2003)
    load_corpus("agreement")  synthetic number agreement at distance k (see synthetic.py), no download

Source files come from `data_dir` (argument, else env RNNBENCH_DATA; layout `<data_dir>/<corpus>/<file>`),
or, with neither set, are downloaded into `<cache_dir>/downloads/<corpus>/`. Every source file is checked
against its sha256 before it is read. The encoded corpus is cached as `<cache_dir>/<corpus>-<key>.npz`
plus `.vocab.json`, where the key hashes the corpus name, its options and the digests of its sources,
so any change of input gives a new cache entry and never a stale one; a cached corpus loads without
its source files (the entry itself: prepared.py). `known_sizes` tells a configuration, before any job,
what vocabulary and split sizes a corpus will have.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import re
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from rnnbench.config import locations
from rnnbench.data import synthetic
from rnnbench.data.corpus_facts import (  # re-exported: the corpora's facts are part of this module's interface
    BROWN_DOCUMENT,
    BROWN_DOCUMENTS,
    BROWN_PARAGRAPH_MARK,
    BROWN_RARE_MAX,
    BROWN_TEXT_MARK,
    BROWN_TRAIN,
    BROWN_VALID,
    OPTIONS,  # noqa: F401  (re-exported, as the comment above says)
    PREPARATION,
    PTB_TOKENS,
    PTB_URL,
    PTB_VOCAB_SIZE,
    SOURCES,
    CorpusError,
    KnownSizes,  # noqa: F401
    RemoteFile,
    brown_sizes,
    known_sizes,  # noqa: F401
    resolve_options,
)
from rnnbench.data.prepared import PROBE_COLUMNS, Corpus, read_cache, write_cache
from rnnbench.data.synthetic import EOS, SPLITS
from rnnbench.data.vocab import Vocab
from rnnbench.io import atomic_path

log = logging.getLogger(__name__)

UNK = "<unk>"
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")  # a blank line ends a paragraph of NLTK's Brown
CACHE_FORMAT = 1  # bump when the cache layout changes

# tests replace this (monkeypatch) to simulate a closed network
urlopen = urllib.request.urlopen


# ---------------------------------------------------------------------------------------------- public


def load_corpus(
    name: str, *, data_dir: str | os.PathLike | None = None, cache_dir: str | os.PathLike | None = None, **options
) -> Corpus:
    """Load a corpus by name, from the cache when an identical one was built before.

    data_dir: None -> env RNNBENCH_DATA -> download to <cache_dir>/downloads.
    cache_dir: None -> env RNNBENCH_CACHE -> ./data/cache (rnnbench.config.locations: one rule for both).
    options: agreement: seed, train_sentences, valid_sentences, test_sentences, min_distance,
    max_distance, attractor_prob; brown: expected_sha256 (accept a copy of brown.zip other than the
    reference one), lowercase (fold case before counting), separators (paragraph and text marks); ptb: none.
    """
    options = resolve_options(name, options)
    folder, named = locations.resolve("cache_dir", cache_dir, "cache_dir")
    cache_dir = Path(folder)
    stem = cache_entry(name, options, cache_dir)
    cached = read_cache(stem, name)
    if cached is not None:
        return cached
    if problem := locations.unwritable(cache_dir):  # before the corpus is read, not when its cache entry is written
        raise CorpusError(
            f"{name}: the cache folder {cache_dir} (given by {named}) {problem}, and it holds no prepared {name} "
            f"corpus with these options. Fix: point {named} at a folder rnnbench can write, or at one that holds it."
        )
    corpus = _BUILDERS[name](options, data_dir, cache_dir)
    write_cache(stem, corpus)
    return corpus


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def download(remote: RemoteFile, dest: Path, expected_sha256: str | None = None, *, accept_hint: bool = False) -> None:
    """Fetch remote.url to dest, verifying its sha256; dest appears only complete and verified."""
    expected = expected_sha256 or remote.sha256
    with atomic_path(dest, suffix=".part") as tmp:
        log.info("downloading %s -> %s", remote.url, dest)
        try:
            with urlopen(remote.url, timeout=60) as response, open(tmp, "wb") as out:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
            raise CorpusError(
                f"{remote.filename}: expected a local copy at {dest}, found none, and downloading it "
                f"from {remote.url} failed ({err}). Fix: connect to the internet and retry, or download "
                f"{remote.filename} yourself and point RNNBENCH_DATA (or data_dir=) at the folder that "
                f"holds {dest.parent.name}/{remote.filename}."
            ) from err
        _verify(
            tmp,
            remote,
            expected,
            shown_as=f"{remote.filename} downloaded from {remote.url}",
            fix=f"retry; if it fails again, {remote.url} serves another copy than the one expected",
            accept_hint=accept_hint,
        )


# ---------------------------------------------------------------------------------------------- options


def cache_entry(name: str, options: dict, cache_dir: str | os.PathLike) -> Path:
    """The stem of the cache entry of corpus ``name`` with ``options`` (resolved, as `resolve_options` gives
    them): ``<stem>.npz`` and ``<stem>.vocab.json`` (prepared.py)."""
    return Path(cache_dir) / f"{name}-{_cache_key(name, options)}"


def _cache_key(name: str, options: dict) -> str:
    if name == "agreement":
        sources = {"grammar": synthetic.grammar_digest()}
    elif name == "brown":
        sources = {"brown.zip": options["expected_sha256"]}
    else:
        sources = {f.filename: f.sha256 for f in SOURCES[name]}
    blob = json.dumps(
        {
            "format": CACHE_FORMAT,
            "name": name,
            "preparation": PREPARATION[name],
            "options": options,
            "sources": sources,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------- files


def _locate(
    corpus: str, remote: RemoteFile, data_dir, cache_dir: Path, expected: str, *, accept_hint: bool = False
) -> Path:
    """Path of a verified copy of `remote`: from the data folder, or downloaded into the cache."""
    data_dir, origin = locations.resolve("data_dir", data_dir, "data_dir")
    if data_dir is not None:
        path = Path(data_dir) / corpus / remote.filename
        if path.is_dir():
            raise CorpusError(
                f"{remote.filename}: expected a file at {path} (the data folder given by {origin}), "
                f"found a directory. Fix: put the file {remote.filename} there in its place."
            )
        if not path.is_file():
            raise CorpusError(
                f"{remote.filename}: expected it at {path} (the data folder given by {origin}), found no such "
                f"file. Fix: put the file there (public copy: {remote.url}), point {origin} at the folder that "
                f"holds {corpus}/{remote.filename}, or leave RNNBENCH_DATA unset to download it into "
                f"{cache_dir / 'downloads'}."
            )
        _verify(
            path,
            remote,
            expected,
            shown_as=str(path),
            accept_hint=accept_hint,
            fix=f"replace it with a fresh copy from {remote.url}",
        )
        return path
    path = cache_dir / "downloads" / corpus / remote.filename
    if path.is_dir():
        raise CorpusError(
            f"{remote.filename}: expected a file at {path} (a downloaded copy), found a directory. "
            f"Fix: remove the directory {path} and load again to download the file."
        )
    if path.is_file():
        _verify(
            path,
            remote,
            expected,
            shown_as=str(path),
            accept_hint=accept_hint,
            fix=f"delete {path} and load again to re-download it from {remote.url}",
        )
    else:
        download(remote, path, expected, accept_hint=accept_hint)
    return path


def _verify(
    path: Path, remote: RemoteFile, expected: str, *, shown_as: str, fix: str, accept_hint: bool = False
) -> None:
    """Raise CorpusError unless sha256(path) == expected; say why (truncated, not UTF-8, other copy)."""
    found = file_sha256(path)
    if found == expected:
        return
    digests = f"expected sha256 {expected}, found {found}"
    size = path.stat().st_size
    if expected == remote.sha256 and remote.size is not None and size < remote.size:
        raise CorpusError(
            f"{shown_as}: file is truncated: expected {remote.size:,} bytes, found {size:,} ({digests}). Fix: {fix}."
        )
    if remote.text and (problem := _utf8_problem(path.read_bytes())):
        raise CorpusError(
            f"{shown_as}: {problem} ({digests}). The file was probably re-encoded or damaged. Fix: {fix}."
        )
    accept = f", or, if you trust this copy, accept it explicitly with expected_sha256='{found}'" if accept_hint else ""
    raise CorpusError(f"{shown_as}: checksum mismatch: {digests} ({size:,} bytes). Fix: {fix}{accept}.")


def _utf8_problem(data: bytes) -> str | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not UTF-8 text: expected UTF-8, found byte 0x{data[err.start]:02x} at offset {err.start}"
    return None


def _decode_utf8(data: bytes, shown_as: str, fix: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorpusError(f"{shown_as}: {_utf8_problem(data)}. Fix: {fix}.") from None


# ---------------------------------------------------------------------------------------------- builders


def _build_ptb(options: dict, data_dir, cache_dir: Path) -> Corpus:
    words = {}
    for split, remote in zip(SPLITS, SOURCES["ptb"], strict=True):
        path = _locate("ptb", remote, data_dir, cache_dir, remote.sha256)
        text = _decode_utf8(path.read_bytes(), str(path), f"replace it with a fresh copy from {remote.url}")
        words[split] = _ptb_words(text)
        if len(words[split]) != PTB_TOKENS[split]:
            raise CorpusError(
                f"{path}: expected {PTB_TOKENS[split]:,} tokens (one {EOS} per line), found "
                f"{len(words[split]):,}. Fix: replace it with a fresh copy from {remote.url}."
            )
    # PTB already maps rare words to <unk>; every valid/test word occurs in train
    vocab = Vocab.build(words["train"], unk_token=UNK)
    if len(vocab) != PTB_VOCAB_SIZE:  # configurations are checked against this size before any job
        raise CorpusError(
            f"ptb.train.txt: expected a vocabulary of {PTB_VOCAB_SIZE:,} words with {EOS}, "
            f"found {len(vocab):,}. Fix: replace the PTB files with fresh copies from {PTB_URL}."
        )
    return Corpus("ptb", vocab, *(vocab.encode(words[s]) for s in SPLITS))


def _ptb_words(text: str) -> list[str]:
    """Mikolov's convention (and word_language_model's): the words of each line, then <eos>."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    words: list[str] = []
    for line in lines:
        words += line.split()
        words.append(EOS)
    return words


def _build_brown(options: dict, data_dir, cache_dir: Path) -> Corpus:
    """Brown the way Bengio et al. (2003) prepared it, from NLTK's tagged edition.

    One stream of the 500 documents in document order (ca01 ... cr09), tags stripped, case kept (their
    types distinguish upper and lower case); the first 800,000 tokens train, the next 200,000 valid, the
    rest test. Words seen <= 3 times in the whole stream become <unk>: their rare-word rule, with
    frequencies counted over the whole corpus, as their |V| shows they were (16,383 is more words than
    the training split alone has above 3 occurrences in either edition).

    The numbers differ from the paper's, because the editions differ. Bengio et al.: 1,181,041
    tokens, 47,578 types, |V| = 16,383 after merging rare words; they counted the marks separating
    texts and paragraphs as words, which NLTK's edition does not have, and its tokenization is not
    theirs. NLTK's edition (reference brown.zip): 1,161,192 tokens, 56,057 types, and |V| = 17,905 with
    <unk> (it would be 14,114 if rare words were counted in the training split only).

    Option separators writes a mark after each paragraph and each text, as they did: 1,177,359 tokens against
    their 1,181,041 (-0.3%; without the marks -1.7%), and a test split of 177,359 against their 181,041.

    Option lowercase folds case before counting. Their text keeps case, but NLTK's edition has 18% more
    types than theirs; folded, it has 49,815 types (+4.7%) and |V| = 16,690 (+1.9%), close enough for
    perplexities to be set against theirs (rnnbench.results.beside_published.VOCAB_TOLERANCE), which the case-kept
    split is not.
    tests/test_corpora.py pins these measured sizes.
    """
    reference = SOURCES["brown"][0]
    expected = options["expected_sha256"]
    path = _locate("brown", reference, data_dir, cache_dir, expected, accept_hint=True)
    words = _brown_words(path, reference, separators=options["separators"])
    if options["lowercase"]:
        words = [word.lower() for word in words]
    sizes = brown_sizes(options)
    tokens, types, vocab_size = sizes["tokens"], sizes["types"], sizes["vocab_size"]
    if expected == reference.sha256 and (len(words) != tokens or len(set(words)) != types):
        raise CorpusError(
            f"{path}: expected {tokens:,} tokens and {types:,} types, found "
            f"{len(words):,} and {len(set(words)):,}. Fix: replace it with a fresh copy."
        )
    if len(words) <= BROWN_TRAIN + BROWN_VALID:
        raise CorpusError(
            f"{path}: expected more than {BROWN_TRAIN + BROWN_VALID:,} tokens to split "
            f"{BROWN_TRAIN:,}/{BROWN_VALID:,}/rest, found {len(words):,}. Fix: use a complete "
            f"copy of NLTK's brown.zip ({reference.url})."
        )
    train, valid, test = (
        words[:BROWN_TRAIN],
        words[BROWN_TRAIN : BROWN_TRAIN + BROWN_VALID],
        words[BROWN_TRAIN + BROWN_VALID :],
    )
    vocab = Vocab.build(words, min_count=BROWN_RARE_MAX + 1, unk_token=UNK)
    if expected == reference.sha256 and len(vocab) != vocab_size:  # configurations are checked against it
        raise CorpusError(
            f"{path}: expected a vocabulary of {vocab_size:,} words with {UNK}, found "
            f"{len(vocab):,}. Fix: replace it with a fresh copy."
        )
    return Corpus("brown", vocab, vocab.encode(train), vocab.encode(valid), vocab.encode(test))


def _brown_words(path: Path, remote: RemoteFile, *, separators: bool = False) -> list[str]:
    """Words of brown/c[a-r]NN in document order; `word/tag` split at the last '/' (words like 1/2 keep theirs).

    separators: a paragraph mark after each paragraph (a block of lines between blank lines, as NLTK's
    reader reads them) and a text mark after each document.
    """
    fix = f"replace it with a fresh copy from {remote.url}"
    words: list[str] = []
    try:
        with zipfile.ZipFile(path) as archive:
            documents = sorted(n for n in archive.namelist() if BROWN_DOCUMENT.fullmatch(n))
            if len(documents) != BROWN_DOCUMENTS:
                raise CorpusError(
                    f"{path}: expected {BROWN_DOCUMENTS} documents brown/c[a-r]NN, found {len(documents)}. Fix: {fix}."
                )
            for member in documents:
                text = _decode_utf8(archive.read(member), f"{path} member {member}", fix)
                for paragraph in PARAGRAPH_BREAK.split(text):
                    items = paragraph.split()
                    for item in items:
                        word, slash, tag = item.rpartition("/")
                        if not (slash and word and tag):
                            raise CorpusError(f"{path} member {member}: expected word/tag, found {item!r}. Fix: {fix}.")
                        words.append(word)
                    if separators and items:
                        words.append(BROWN_PARAGRAPH_MARK)
                if separators:
                    words.append(BROWN_TEXT_MARK)
    except (zipfile.BadZipFile, zlib.error, EOFError) as err:
        raise CorpusError(
            f"{path}: truncated or damaged zip archive: expected a readable zip, found "
            f"'{err}' ({path.stat().st_size:,} bytes). Fix: {fix}."
        ) from err
    return words


def _build_agreement(options: dict, data_dir, cache_dir: Path) -> Corpus:
    texts = synthetic.generate(synthetic.AgreementConfig(**options))
    vocab = Vocab.build(texts["train"].tokens, extra=synthetic.lexicon())
    streams = {s: vocab.encode(texts[s].tokens) for s in SPLITS}
    probes = {}
    for split in SPLITS:
        rows = texts[split].probes
        probes[split] = pd.DataFrame(
            {
                "position": np.array([p.position for p in rows], dtype=np.int64),
                "head_position": np.array([p.head_position for p in rows], dtype=np.int64),
                "distance": np.array([p.distance for p in rows], dtype=np.int64),
                "correct_id": vocab.encode([p.correct for p in rows]),
                "wrong_id": vocab.encode([p.wrong for p in rows]),
                "number": [p.number for p in rows],
                "attractors": np.array([p.attractors for p in rows], dtype=np.int64),
            },
            columns=list(PROBE_COLUMNS),
        )
    starts = {s: texts[s].sentence_starts for s in SPLITS}
    return Corpus("agreement", vocab, *(streams[s] for s in SPLITS), sentence_starts=starts, probes=probes)


_BUILDERS: dict[str, Callable[[dict, object, Path], Corpus]] = {
    "ptb": _build_ptb,
    "brown": _build_brown,
    "agreement": _build_agreement,
}
