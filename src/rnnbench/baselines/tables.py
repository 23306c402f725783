"""The baselines' tables for one prepared corpus: perplexities, Kneser-Ney discounts, agreement heuristics.

    perplexity      corpus_key, corpus, model, order, split, perplexity, n_tokens
    discounts       corpus_key, corpus, model, order, ngram_order, ngrams, n1..n4, D1, D2, D3plus, estimated
    agreement       corpus_key, split, distance, heuristic, accuracy, n   (corpora with agreement probes)

Both models are estimated on the whole training split and score the whole validation and test splits,
whatever slice of them a run reads; model is "unigram" (add-one) or "kn<order>" (e.g. kn5). Both give every
word of the vocabulary a probability: n_tokens is every predicted token of the split, as for a network.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

import pandas as pd

from rnnbench.baselines.agreement import agreement_baselines
from rnnbench.baselines.ngram import FALLBACK_DISCOUNTS, KneserNey, Unigram
from rnnbench.data.prepared import Corpus
from rnnbench.data.synthetic import EOS

log = logging.getLogger(__name__)

SCORED_SPLITS = ("valid", "test")
PERPLEXITY_COLUMNS = ("corpus_key", "corpus", "model", "order", "split", "perplexity", "n_tokens")
DISCOUNT_COLUMNS = (
    *("corpus_key", "corpus", "model", "order", "ngram_order", "ngrams"),
    *("n1", "n2", "n3", "n4", "D1", "D2", "D3plus", "estimated"),
)
AGREEMENT_SPLIT = "test"  # the split whose probes the runs' agreement.csv report
AGREEMENT_COLUMNS = ("corpus_key", "split", "distance", "heuristic", "accuracy", "n")


def kn_name(order: int) -> str:
    return f"kn{order}"


def perplexity_tables(corpus_key: str, corpus: Corpus, order: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(perplexities, discounts) of the unigram and the order-``order`` Kneser-Ney model on ``corpus``."""
    size = len(corpus.vocab)
    started = time.perf_counter()
    unigram = Unigram.fit(corpus.train, size)
    kn = KneserNey.fit(corpus.train, size, order, eos_id=corpus.vocab.stoi.get(EOS), fallback=FALLBACK_DISCOUNTS)
    rows = []
    for name, model, n in (("unigram", unigram, 1), (kn_name(order), kn, order)):
        for split in SCORED_SPLITS:
            score = model.score(corpus.split(split))
            rows.append(
                {
                    "corpus_key": corpus_key,
                    "corpus": corpus.name,
                    "model": name,
                    "order": n,
                    "split": split,
                    "perplexity": score.perplexity,
                    "n_tokens": score.n_tokens,
                }
            )
    log.info(
        "%s: unigram and %s on %s training tokens in %.1f s",
        corpus_key,
        kn_name(order),
        corpus.train.size,
        time.perf_counter() - started,
    )
    discounts = [
        {
            "corpus_key": corpus_key,
            "corpus": corpus.name,
            "model": kn_name(order),
            "order": order,
            "ngram_order": level.order,
            "ngrams": int(level.keys.size),
            **dict(zip(("n1", "n2", "n3", "n4"), level.count_of_counts, strict=True)),
            **dict(zip(("D1", "D2", "D3plus"), level.discounts, strict=True)),
            "estimated": level.estimated,
        }
        for level in kn.orders
    ]
    return (
        pd.DataFrame(rows, columns=list(PERPLEXITY_COLUMNS)),
        pd.DataFrame(discounts, columns=list(DISCOUNT_COLUMNS)),
    )


def agreement_table(corpus_key: str, corpus: Corpus) -> pd.DataFrame:
    """Chance and the nearest-noun heuristic per head-verb distance (empty for a corpus without probes)."""
    if corpus.probes is None:
        return pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
    table = agreement_baselines(corpus.split(AGREEMENT_SPLIT), corpus.probes[AGREEMENT_SPLIT], corpus.vocab)
    table.insert(0, "split", AGREEMENT_SPLIT)
    table.insert(0, "corpus_key", corpus_key)
    return table[list(AGREEMENT_COLUMNS)]


def baseline_tables(corpora: Mapping[str, Corpus], order: int) -> dict[str, pd.DataFrame]:
    """Every corpus's baselines, one table per name of rnnbench.paths.BASELINE_TABLES, corpus keys sorted."""
    perplexities, discounts, agreement = [], [], []
    for key in sorted(corpora):
        ppl, disc = perplexity_tables(key, corpora[key], order)
        perplexities.append(ppl)
        discounts.append(disc)
        agreement.append(agreement_table(key, corpora[key]))
    frames = {
        "baselines": (perplexities, PERPLEXITY_COLUMNS),
        "kn_discounts": (discounts, DISCOUNT_COLUMNS),
        "agreement_baselines": (agreement, AGREEMENT_COLUMNS),
    }
    return {
        name: pd.concat(parts, ignore_index=True) if any(len(p) for p in parts) else pd.DataFrame(columns=list(columns))
        for name, (parts, columns) in frames.items()
    }
