"""The `agreement` corpus: subject-verb number agreement across k words, generated from a seed.

    the old book that the committee rejected near the tables was short <eos>
            ^^^^                                             ^^^
            head (sg)                                        k = 8 words after the head: singular

Every sentence has one head noun (singular or plural) and one verb that must agree with it, exactly
`k` tokens later (k uniform in [min_distance, max_distance]). The words in between are filler:
relative clauses, prepositional phrases and adjectives, whose nouns are "attractors" of the opposite
number with probability `attractor_prob`; a model that copies the number of the nearest noun fails.
The only number-marked verb in a sentence is the probed one (embedded clauses use past tense, which
English does not mark for number), and determiners are number-neutral, so the head noun's form is
the only evidence. Generation is pure Python from `random.Random`, so a seed gives the same corpus
on every platform.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field
from functools import cache

import numpy as np

EOS = "<eos>"
SPLITS = ("train", "valid", "test")
GENERATOR_VERSION = 1  # bump when the grammar changes, so cached corpora are rebuilt

# (singular, plural); animate nouns can be the subject of a transitive verb
ANIMATE_NOUNS = (
    ("author", "authors"),
    ("teacher", "teachers"),
    ("student", "students"),
    ("doctor", "doctors"),
    ("lawyer", "lawyers"),
    ("senator", "senators"),
    ("farmer", "farmers"),
    ("painter", "painters"),
    ("writer", "writers"),
    ("editor", "editors"),
    ("officer", "officers"),
    ("driver", "drivers"),
    ("player", "players"),
    ("singer", "singers"),
    ("pilot", "pilots"),
    ("nurse", "nurses"),
    ("judge", "judges"),
    ("king", "kings"),
    ("queen", "queens"),
    ("soldier", "soldiers"),
    ("artist", "artists"),
    ("engineer", "engineers"),
    ("scientist", "scientists"),
    ("neighbor", "neighbors"),
    ("customer", "customers"),
    ("guest", "guests"),
    ("friend", "friends"),
    ("manager", "managers"),
    ("committee", "committees"),
    ("child", "children"),
    ("man", "men"),
    ("woman", "women"),
    ("dog", "dogs"),
    ("cat", "cats"),
    ("horse", "horses"),
    ("baker", "bakers"),
    ("visitor", "visitors"),
    ("minister", "ministers"),
    ("pupil", "pupils"),
    ("clerk", "clerks"),
)
INANIMATE_NOUNS = (
    ("book", "books"),
    ("letter", "letters"),
    ("report", "reports"),
    ("key", "keys"),
    ("table", "tables"),
    ("chair", "chairs"),
    ("picture", "pictures"),
    ("house", "houses"),
    ("car", "cars"),
    ("road", "roads"),
    ("bridge", "bridges"),
    ("window", "windows"),
    ("door", "doors"),
    ("garden", "gardens"),
    ("river", "rivers"),
    ("village", "villages"),
    ("city", "cities"),
    ("company", "companies"),
    ("story", "stories"),
    ("box", "boxes"),
    ("dish", "dishes"),
    ("church", "churches"),
    ("song", "songs"),
    ("plan", "plans"),
    ("idea", "ideas"),
    ("machine", "machines"),
    ("computer", "computers"),
    ("phone", "phones"),
    ("bottle", "bottles"),
    ("cake", "cakes"),
    ("map", "maps"),
    ("ship", "ships"),
    ("tree", "trees"),
    ("lamp", "lamps"),
    ("shelf", "shelves"),
    ("knife", "knives"),
    ("photograph", "photographs"),
    ("painting", "paintings"),
    ("museum", "museums"),
    ("school", "schools"),
)
NOUNS = ANIMATE_NOUNS + INANIMATE_NOUNS

# (singular, plural, what follows the verb)
AGREEING_VERBS = (
    ("is", "are", "adj"),
    ("was", "were", "adj"),
    ("has", "have", "been adj"),
    ("seems", "seem", "adj"),
    ("looks", "look", "adj"),
    ("remains", "remain", "adj"),
    ("appears", "appear", "adj"),
    ("becomes", "become", "adj"),
    ("feels", "feel", "adj"),
    ("stays", "stay", "adj"),
    ("sounds", "sound", "adj"),
)
ADJECTIVES = (
    "old",
    "new",
    "young",
    "small",
    "large",
    "red",
    "blue",
    "green",
    "long",
    "short",
    "tall",
    "quiet",
    "famous",
    "busy",
    "happy",
    "angry",
    "strange",
    "simple",
    "heavy",
    "bright",
    "dark",
    "clever",
    "careful",
    "honest",
    "poor",
    "rich",
    "modern",
    "ancient",
    "broken",
    "empty",
    "expensive",
    "cheap",
    "beautiful",
    "quick",
    "slow",
    "warm",
    "cold",
    "friendly",
    "nervous",
    "popular",
    "tired",
    "calm",
)
# past tense: English marks no number on it, so embedded clauses carry no agreement cue
TRANSITIVE_PAST = (
    "rejected",
    "admired",
    "praised",
    "visited",
    "liked",
    "described",
    "found",
    "saw",
    "met",
    "helped",
    "followed",
    "noticed",
    "painted",
    "moved",
    "sold",
    "bought",
    "built",
    "cleaned",
    "ignored",
    "mentioned",
    "remembered",
    "watched",
    "wrote",
    "chose",
    "carried",
    "checked",
    "opened",
    "repaired",
    "studied",
    "reviewed",
    "feared",
    "trusted",
    "owned",
    "needed",
    "wanted",
)
INTRANSITIVE_PAST = (
    "arrived",
    "failed",
    "vanished",
    "waited",
    "left",
    "fell",
    "laughed",
    "slept",
    "returned",
    "smiled",
    "changed",
    "disappeared",
    "survived",
    "stopped",
    "shouted",
)
PREPOSITIONS = (
    "near",
    "behind",
    "beside",
    "with",
    "without",
    "from",
    "of",
    "for",
    "under",
    "above",
    "beyond",
    "like",
    "about",
    "inside",
    "outside",
    "against",
)
ADVERBS = (
    "clearly",
    "apparently",
    "certainly",
    "probably",
    "really",
    "still",
    "surely",
    "usually",
    "often",
    "also",
    "truly",
    "perhaps",
    "indeed",
)
DETERMINERS = ("the", "the", "the", "my", "our", "their", "his", "her", "your")  # number-neutral; "the" 3x as often
FUNCTION_WORDS = ("that", "been")


def lexicon() -> tuple[str, ...]:
    """Every word the generator can emit, sorted."""
    words = {
        EOS,
        *FUNCTION_WORDS,
        *ADJECTIVES,
        *TRANSITIVE_PAST,
        *INTRANSITIVE_PAST,
        *PREPOSITIONS,
        *ADVERBS,
        *DETERMINERS,
    }
    words.update(w for pair in NOUNS for w in pair)
    words.update(w for sg, pl, _ in AGREEING_VERBS for w in (sg, pl))
    return tuple(sorted(words))


@cache
def grammar_digest() -> str:
    """sha256 of the word lists and generator version: part of the cache key."""
    tables = [
        GENERATOR_VERSION,
        NOUNS,
        ANIMATE_NOUNS,
        AGREEING_VERBS,
        ADJECTIVES,
        TRANSITIVE_PAST,
        INTRANSITIVE_PAST,
        PREPOSITIONS,
        ADVERBS,
        DETERMINERS,
        FUNCTION_WORDS,
    ]
    return hashlib.sha256(json.dumps(tables).encode()).hexdigest()


@dataclass(frozen=True)
class AgreementConfig:
    seed: int = 0
    train_sentences: int = 20_000
    valid_sentences: int = 2_000
    test_sentences: int = 2_000
    min_distance: int = 1  # k = verb position - head position
    max_distance: int = 20
    attractor_prob: float = 0.75  # chance that a filler noun has the head's opposite number

    def __post_init__(self) -> None:
        from rnnbench.config.schema import checked_corpus_options  # the schema holds each option's type and range

        for name, value in checked_corpus_options(asdict(self), where="agreement").items():
            object.__setattr__(self, name, value)  # 20.0 -> 20, 1 -> 1.0 (a whole number is the same option)
        if self.max_distance < self.min_distance:
            raise ValueError(f"max_distance must be >= min_distance ({self.min_distance}), got {self.max_distance}")


# A sentence is its noun phrase (2-3 tokens: determiner, maybe an adjective, the head), k - 1 filler tokens,
# the verb, maybe "been", an adjective and <eos>: k + 4 to k + 6 tokens.
MAX_TOKENS_BEYOND_DISTANCE = 6


def max_tokens(sentences: int, cfg: AgreementConfig) -> int:
    """At most this many tokens in a split of `sentences` sentences (known without generating it)."""
    return sentences * (cfg.max_distance + MAX_TOKENS_BEYOND_DISTANCE)


@dataclass(frozen=True)
class Probe:
    """One dependent verb, positions relative to the split's token stream."""

    position: int
    head_position: int
    distance: int
    correct: str
    wrong: str
    number: str  # "sg" | "pl"
    attractors: int  # filler nouns of the opposite number between head and verb


@dataclass(frozen=True)
class SplitText:
    tokens: list[str]
    sentence_starts: np.ndarray  # (n_sentences,) int64
    probes: list[Probe] = field(repr=False)


# Filler pieces: (name, fixed length without adjectives, holds a noun that can take adjectives)
_PIECES = (
    ("pp", 3, True),  # near the [adj]* tables
    ("orc", 4, True),  # that the [adj]* committee rejected
    ("src", 4, True),  # that praised the [adj]* authors   (right after an animate head only)
    ("irc", 2, False),  # that arrived                      (right after the head only)
)
_MAX_ADJ = 2
# which piece may follow which (None = right after the head), so that every clause reads as English
_NEXT = {
    None: ("pp", "orc", "src", "irc"),
    "pp": ("pp", "orc"),
    "orc": ("pp", "orc"),
    "src": ("pp", "orc"),
    "irc": ("pp",),
}


@cache
def _choices(r: int, prev: str | None, animate: bool) -> tuple[tuple[str, int], ...]:
    """(piece, adjectives) pairs that can follow `prev`, fit in r tokens and leave a fillable rest."""
    return tuple(
        (name, n_adj)
        for name, base, takes_adj in _PIECES
        if name in _NEXT[prev] and (name != "src" or animate)
        for n_adj in range(_MAX_ADJ + 1 if takes_adj else 1)
        if base + n_adj <= r and _feasible(r - base - n_adj, name, animate)
    )


@cache
def _feasible(r: int, prev: str | None, animate: bool) -> bool:
    """Can exactly r filler tokens (no adverb) follow `prev`?"""
    return r == 0 or bool(_choices(r, prev, animate))


def _fill_tables(max_distance: int) -> None:
    """Fill the caches of `_feasible` and `_choices` from r = 0 up: each call then finds every shorter rest already
    cached and recurses one level, where a first call at r would recurse about r levels (Python's limit: 1,000)."""
    for r in range(max_distance + 1):
        for prev in (None, *_NEXT):
            for animate in (False, True):
                _feasible(r, prev, animate)


class _Generator:
    def __init__(self, cfg: AgreementConfig, split: str):
        self.cfg = cfg
        _fill_tables(cfg.max_distance)
        # one independent stream per split: changing the test size leaves train unchanged
        self.rng = random.Random(f"agreement/{cfg.seed}/{split}")

    def noun_phrase(self, number: int, n_adj: int, animate: bool | None = None) -> list[str]:
        pool = NOUNS if animate is None else (ANIMATE_NOUNS if animate else INANIMATE_NOUNS)
        rng = self.rng
        return [rng.choice(DETERMINERS), *rng.sample(ADJECTIVES, n_adj), rng.choice(pool)[number]]

    def filler(self, r: int, head_number: int, head_animate: bool) -> tuple[list[str], int]:
        """Exactly r tokens of filler; returns (tokens, number of opposite-number nouns in it)."""
        rng, words, attractors = self.rng, [], 0
        prev = None
        adv = r >= 1 and rng.random() < 0.25 and _feasible(r - 1, prev, head_animate)
        if not adv and not _feasible(r, prev, head_animate):
            adv = True  # r == 1 is only reachable with the adverb
        if adv:
            r -= 1  # one adverb, right before the verb: "... clearly was short"
        while r > 0:
            name, n_adj = rng.choice(_choices(r, prev, head_animate))
            prev = name
            if name == "irc":
                words += ["that", rng.choice(INTRANSITIVE_PAST)]
                r -= 2
                continue
            number = 1 - head_number if rng.random() < self.cfg.attractor_prob else head_number
            attractors += number != head_number
            if name == "pp":
                piece = [rng.choice(PREPOSITIONS), *self.noun_phrase(number, n_adj)]
            elif name == "orc":
                piece = ["that", *self.noun_phrase(number, n_adj, animate=True), rng.choice(TRANSITIVE_PAST)]
            else:
                piece = ["that", rng.choice(TRANSITIVE_PAST), *self.noun_phrase(number, n_adj)]
            words += piece
            r -= len(piece)
        if adv:
            words.append(rng.choice(ADVERBS))
        return words, attractors

    def sentence(self, offset: int) -> tuple[list[str], Probe]:
        rng, cfg = self.rng, self.cfg
        number = rng.randrange(2)  # 0 = singular, 1 = plural
        animate = rng.random() < 0.5
        k = rng.randint(cfg.min_distance, cfg.max_distance)
        words = self.noun_phrase(number, 1 if rng.random() < 0.3 else 0, animate)
        head = len(words) - 1
        filler, attractors = self.filler(k - 1, number, animate)
        sg, pl, rest = rng.choice(AGREEING_VERBS)
        verb, wrong = (sg, pl) if number == 0 else (pl, sg)
        words += filler + [verb]
        words += ["been"] if rest == "been adj" else []
        words += [rng.choice(ADJECTIVES), EOS]
        probe = Probe(
            position=offset + head + k,
            head_position=offset + head,
            distance=k,
            correct=verb,
            wrong=wrong,
            number=("sg", "pl")[number],
            attractors=attractors,
        )
        return words, probe

    def split(self, n_sentences: int) -> SplitText:
        tokens, starts, probes = [], [], []
        for _ in range(n_sentences):
            starts.append(len(tokens))
            words, probe = self.sentence(len(tokens))
            tokens += words
            probes.append(probe)
        return SplitText(tokens, np.asarray(starts, dtype=np.int64), probes)


def generate(cfg: AgreementConfig = AgreementConfig()) -> dict[str, SplitText]:
    """Token streams, sentence starts and probes for train, valid and test."""
    counts = {"train": cfg.train_sentences, "valid": cfg.valid_sentences, "test": cfg.test_sentences}
    return {split: _Generator(cfg, split).split(counts[split]) for split in SPLITS}
