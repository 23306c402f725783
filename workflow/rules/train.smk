rule train:
    """One training run: its resolved config, per-epoch and per-step records, metrics and best weights.

    An interrupted job leaves checkpoint.pt (not a declared output) behind; rerunning resumes from it.
    """
    input:
        corpus=lambda wc: paths.corpus_stats(R, RUNS[wc.run_id].corpus_key),
    output:
        metrics=f"{R}/runs/{{run_id}}/metrics.json",
        epochs=f"{R}/runs/{{run_id}}/epochs.csv",
        steps=f"{R}/runs/{{run_id}}/steps.csv",
        config=f"{R}/runs/{{run_id}}/config.json",
        model=f"{R}/runs/{{run_id}}/model.pt",
    params:
        # Without `threads`: more cores must not make Snakemake think the run's settings changed.
        run=lambda wc: RUNS[wc.run_id].settings(),
        data_dir=DATA_DIR,
        cache_dir=CFG.cache_dir,
    log:
        f"{R}/logs/train/{{run_id}}.log",
    benchmark:
        f"{R}/benchmarks/train/{{run_id}}.tsv"
    # torch's intra-op threads; Snakemake exports OMP/MKL_NUM_THREADS to the same number.
    threads: CFG.threads
    resources:
        mem_mb=6000,
        runtime=180,
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/train.py"
