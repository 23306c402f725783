# Dynamic evaluation (config `comparison.dynamic_evaluation`): each run of the comparison's rnn studies scored
# on its test split again, learning as it reads (rnnbench.training.dynamic), the SGD rate chosen on the validation split.
DYNAMIC = CFG.comparison.dynamic_evaluation
DYNAMIC_RUNS = CFG.dynamic_run_ids()  # every run of the comparison's rnn studies, once; none without it
# The rule's runs as a pattern; with none, one that matches no run id (an empty pattern would match every one).
DYNAMIC_RUN_PATTERN = "|".join(DYNAMIC_RUNS) or "(?!)"


rule dynamic_evaluation:
    """One run's test split at batch 1, statically and under dynamic evaluation, with the rate grid scored on
    the validation split (runs/<run_id>/dynamic.json)."""
    input:
        model=paths.run_model(RESULTS_DIR, "{run_id}"),
        config=paths.run_config(RESULTS_DIR, "{run_id}"),
        metrics=paths.run_metrics(RESULTS_DIR, "{run_id}"),
    output:
        record=paths.run_dynamic(RESULTS_DIR, "{run_id}"),
    log:
        paths.log(RESULTS_DIR, "dynamic_evaluation", "{run_id}"),
    benchmark:
        paths.dynamic_benchmark(RESULTS_DIR, "{run_id}")
    wildcard_constraints:
        run_id=DYNAMIC_RUN_PATTERN,
    conda:
        "../envs/rnnbench.yaml"
    # Batch 1, one segment after another: a second thread has little to share.
    threads: 1
    resources:
        # A paper-scale run (H = 400, the whole of PTB's test split) takes minutes, not hours.
        mem_mb=2000,
        runtime=120,
    params:
        settings=DYNAMIC.record() if DYNAMIC else {},
    script:
        "../scripts/dynamic_evaluation.py"
