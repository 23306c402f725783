rule prepare_corpus:
    """Download or read, verify, tokenise and cache one corpus once, before any run reads it."""
    output:
        f"{R}/corpora/{{corpus_key}}.json",
    params:
        corpus=lambda wc: CORPORA[wc.corpus_key].corpus,
        options=lambda wc: dict(CORPORA[wc.corpus_key].corpus_options),
        data_dir=DATA_DIR,
        cache_dir=CFG.cache_dir,
    log:
        f"{R}/logs/prepare_corpus/{{corpus_key}}.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/prepare_corpus.py"


rule corpus_table:
    """Statistics of every prepared corpus, one row per corpus and statistic."""
    input:
        expand(f"{R}/corpora/{{corpus_key}}.json", corpus_key=sorted(CORPORA)),
    output:
        paths.table(R, "corpora"),
        paths.provenance(paths.table(R, "corpora")),
    params:
        corpus_keys=sorted(CORPORA),
        provenance=provenance_for("corpus_table"),
    log:
        f"{R}/logs/corpus_table/corpora.log",
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/corpus_table.py"
