"""The published reference rows: data with sources, read and checked by rnnbench.published."""

from __future__ import annotations

import pandas as pd
import pytest

from rnnbench.published import COLUMNS, RECIPE, kneser_ney_rows, load_published, published_path, reference_rows


def test_packaged_table_gives_every_number_a_source():
    table = load_published()
    assert published_path().name == "published.csv" and published_path().parent.name == "published"
    assert set(table["corpus"]) == {"ptb", "brown"}
    for column in ("source", "cite_key", "table", "split", "checked_against"):
        assert (table[column].str.strip() != "").all(), column
    assert (table["test_ppl"] > 1).all()
    # where published, validation and test perplexity are within 25% of each other: a number entered in
    # the wrong column (a training perplexity, another row's value) would rarely be
    both = table.dropna(subset=["valid_ppl"])
    assert ((both["valid_ppl"] / both["test_ppl"]).between(0.8, 1.25)).all()


def test_one_reference_row_per_corpus_and_family():
    refs = reference_rows(load_published())
    assert sorted(zip(refs["corpus"], refs["reference_for"], strict=True)) == [
        ("brown", "ff"),
        ("brown", "ngram"),
        ("ptb", "ff"),
        ("ptb", "ngram"),
        ("ptb", "rnn"),
    ]
    assert (refs["reference_for"] == refs["family"]).all()


def test_each_corpus_is_also_measured_against_its_papers_kn5():
    # Mikolov et al.'s KN5 on PTB (141.2) and Bengio et al.'s modified Kneser-Ney back-off with n = 5 on Brown
    # (321, Table 1): the row every perplexity of that corpus is also a ratio to, and its order
    kn = kneser_ney_rows(load_published())
    assert {corpus: (row.model, row.test_ppl, row.n) for corpus, row in kn.items()} == {
        "ptb": ("KN5", 141.2, 5),
        "brown": ("KN5", 321.0, 5),
    }


def test_the_recipe_columns_hold_what_bengio_et_al_state_and_nothing_for_mikolov_et_al():
    table = load_published().set_index(["corpus", "model"])
    # Table 1, p. 1149: MLP1 is n = 5, h = 50, m = 60 with direct connections; every MLP trained by stochastic
    # gradient ascent one word at a time (p. 1143), with weight decay 10^-4 on Brown (p. 1148) and no other
    # regulariser (p. 1142)
    mlp1 = table.loc[("brown", "MLP1")]
    assert (mlp1["n"], mlp1["hidden"], mlp1["embed_dim"], mlp1["direct"]) == (5, 50, 60, "yes")
    assert (mlp1["optimizer"], mlp1["batch_size"], mlp1["dropout"], mlp1["weight_decay"]) == ("sgd", 1, 0.0, 1e-4)
    assert "p. 1143" in mlp1["checked_against"] and "p. 1148" in mlp1["checked_against"]
    # Mikolov et al.'s table names its rows and states no recipe: blank, and the row says so
    for model in ("Feed-forward NNLM", "RNN LM", "RNN LM, dynamic evaluation"):
        row = table.loc[("ptb", model)]
        assert all(pd.isna(row[c]) or row[c] == "" for c in RECIPE), model
        assert "states no recipe" in row["checked_against"], model


def test_each_corpus_has_one_split():
    table = load_published()
    for corpus, rows in table.groupby("corpus"):
        split_columns = ["split", "train_tokens", "valid_tokens", "test_tokens", "vocab_size"]
        assert len(rows[split_columns].astype(str).drop_duplicates()) == 1, corpus
    brown = table[table["corpus"] == "brown"].iloc[0]
    # Bengio et al.: 800,000 + 200,000 + 181,041 = 1,181,041 tokens, the stream the split text names
    total = brown["train_tokens"] + brown["valid_tokens"] + brown["test_tokens"]
    assert f"{total:,}" in brown["split"]


def _write(tmp_path, rows: list[dict]) -> str:
    path = tmp_path / "published.csv"
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(path, index=False)
    return str(path)


def _row(**changes) -> dict:
    row = {c: "" for c in COLUMNS}
    row.update(
        corpus="ptb",
        model="M",
        family="rnn",
        description="d",
        test_ppl="120",
        source="S",
        cite_key="s2000",
        table="T1",
        split="sp",
        checked_against="c",
    )
    row.update(changes)
    return row


def test_a_number_without_its_source_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"row 2 \(ptb 'B'\): column 'source' is empty"):
        load_published(_write(tmp_path, [_row(model="A"), _row(model="B", source=" ")]))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"test_ppl": "n/a"}, "'test_ppl' must be a number"),
        ({"test_ppl": "0.5"}, "'test_ppl' must be a number >= 1"),
        ({"test_ppl": ""}, "'test_ppl' is empty"),
        ({"vocab_size": "10000.5"}, "'vocab_size' must be an integer"),
        ({"family": "transformer"}, "family 'transformer' is not one of"),
        ({"reference_for": "ff"}, "reference_for 'ff' must be blank or the row's own family"),
        ({"family": "ff+ngram", "reference_for": "ff+ngram"}, "reference_for 'ff\\+ngram' must be blank"),
        ({"family": "ngram", "reference_for": "ngram"}, "a Kneser-Ney reference row needs its order n"),
        ({"hidden": "-1"}, "'hidden' must be an integer >= 0"),
        ({"dropout": "0.5x"}, "'dropout' must be a number"),
        ({"direct": "maybe"}, "'direct' must be blank or one of \\('yes', 'no'\\)"),
        ({"optimizer": "rmsprop"}, "'optimizer' must be blank or one of"),
        ({"cite_key": ""}, "column 'cite_key' is empty"),
        # "@Mikolov et al. 2011" would cite "Mikolov" and leave the rest as words
        ({"cite_key": "Mikolov et al. 2011"}, "cite_key 'Mikolov et al. 2011' is not a citation key"),
        ({"cite_key": "@mikolov2011"}, "cite_key '@mikolov2011' is not a citation key"),
    ],
)
def test_bad_values_are_named(tmp_path, change, message):
    with pytest.raises(ValueError, match=message):
        load_published(_write(tmp_path, [_row(**change)]))


def test_two_references_for_one_family_are_refused(tmp_path):
    rows = [_row(model="A", reference_for="rnn"), _row(model="B", reference_for="rnn")]
    with pytest.raises(ValueError, match=r"more than one reference row .*\('ptb', 'rnn'\)"):
        load_published(_write(tmp_path, rows))


def test_missing_column_is_named(tmp_path):
    path = tmp_path / "published.csv"
    pd.DataFrame([_row()]).drop(columns=["page"]).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"missing column\(s\) \['page'\]"):
        load_published(path)
