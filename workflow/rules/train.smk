rule train:
    """One training run: its resolved config, per-epoch and per-step records, metrics and best weights.

    An interrupted job leaves checkpoint.pt (not a declared output) behind; rerunning resumes from it.
    """
    input:
        # ancient: a corpus record made again (deleted by hand) holds the same verified corpus, so the runs that
        # read it stand; without it, its new time would retrain each of them.
        corpus=lambda wc: ancient(paths.corpus_stats(RESULTS_DIR, run_config(wc.run_id).corpus_key)),
        # A run whose threshold is a multiple of a measured norm (clip_times_median) reads the median of its
        # reference run, trained first (rnnbench.config.runs.RunConfig.clip_reference); none for any other run.
        clip_reference=lambda wc: clip_reference_metrics(wc.run_id),
    output:
        metrics=paths.run_metrics(RESULTS_DIR, "{run_id}"),
        epochs=paths.run_epochs(RESULTS_DIR, "{run_id}"),
        steps=paths.run_steps(RESULTS_DIR, "{run_id}"),
        config=paths.run_config(RESULTS_DIR, "{run_id}"),
        model=paths.run_model(RESULTS_DIR, "{run_id}"),
    log:
        paths.log(RESULTS_DIR, "train", "{run_id}"),
    benchmark:
        paths.train_benchmark(RESULTS_DIR, "{run_id}")
    conda:
        "../envs/rnnbench.yaml"
    # torch's intra-op threads; Snakemake exports OMP/MKL_NUM_THREADS to the same number.
    threads: CFG.threads
    resources:
        # One of the machine's training slots (TRAINING_SLOTS, common.smk): at most one run per core.
        training_slots=1,
        # Sized for config/paper.yaml on a cluster (a paper-scale run takes up to 12 h); a local run is
        # limited by these only when started with --resources. Memory: the default runs peak at 430-470 MB
        # (max_rss in tables/benchmarks.csv); 4 GB leaves room for paper-scale models while letting a node
        # run one training job per core instead of one per 16 GB.
        mem_mb=4000,
        runtime=720,
    params:
        # The run's settings only (a changed param reruns the job; so would a newer scripts/train.py, so that shim
        # changes only when it must): not `threads`, since more cores must not make Snakemake think the run's
        # settings changed, nor the data and cache folders, which the job resolves (locations.job_folders).
        run=lambda wc: run_config(wc.run_id).settings(),
    script:
        "../scripts/train.py"
