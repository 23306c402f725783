rule prepare_corpus:
    """Download or read, verify, tokenise and cache one corpus once, before any run reads it."""
    output:
        stats=paths.corpus_stats(RESULTS_DIR, "{corpus_key}"),
    log:
        paths.log(RESULTS_DIR, "prepare_corpus", "{corpus_key}"),
    conda:
        "../envs/rnnbench.yaml"
    threads: 1
    resources:
        mem_mb=8000,  # Brown's zip and PTB's text held whole while tokenised
        runtime=30,
    params:
        corpus=lambda wc: corpus_run(wc.corpus_key).corpus,
        options=lambda wc: dict(corpus_run(wc.corpus_key).corpus_options),
    script:
        "../scripts/prepare_corpus.py"
