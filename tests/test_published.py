"""The published reference rows: data with sources, read and checked by rnnbench.published."""

from __future__ import annotations

import pandas as pd
import pytest

from rnnbench.published import COLUMNS, load_published, published_path, reference_rows


def test_packaged_table_gives_every_number_a_source():
    table = load_published()
    assert published_path().name == "published.csv" and published_path().parent.name == "published"
    assert set(table["corpus"]) == {"ptb", "brown"}
    for column in ("source", "table", "split", "checked_against"):
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
        ("ptb", "ff"),
        ("ptb", "rnn"),
    ]
    assert (refs["reference_for"] == refs["family"]).all()


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
