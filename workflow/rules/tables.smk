rule worked_table:
    """One of the chapter's worked examples, parameter tables or gradient checks (no training)."""
    output:
        table=report(
            paths.table(RESULTS_DIR, "{name}"),
            caption="../report/worked_table.rst",
            category="Tables",
            subcategory="Worked examples",
            labels={"table": "{name}"},
        ),
        provenance=paths.provenance(paths.table(RESULTS_DIR, "{name}")),
    log:
        paths.log(RESULTS_DIR, "worked_table", "{name}"),
    wildcard_constraints:
        name="|".join(WORKED_TABLES) or "no-worked-tables",
    conda:
        "../envs/rnnbench.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    script:
        "../scripts/worked_table.py"


rule corpus_table:
    """Statistics of every prepared corpus, one row per corpus and statistic."""
    input:
        stats=[paths.corpus_stats(RESULTS_DIR, key) for key in sorted(CORPORA)],
    output:
        table=report(
            paths.table(RESULTS_DIR, "corpora"),
            caption="../report/corpus_table.rst",
            category="Tables",
            subcategory="Corpora",
            labels={"table": "corpora"},
        ),
        provenance=paths.provenance(paths.table(RESULTS_DIR, "corpora")),
    log:
        paths.log(RESULTS_DIR, "corpus_table", "corpora"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        corpus_keys=sorted(CORPORA),
    script:
        "../scripts/corpus_table.py"


rule benchmark_table:
    """Wall time of every training job (Snakemake's benchmark records), CPU time and peak memory of its run
    (the run's own count, metrics.json)."""
    input:
        benchmarks=[paths.train_benchmark(RESULTS_DIR, run_id) for run_id in sorted(RUNS)],
        metrics=[paths.run_metrics(RESULTS_DIR, run_id) for run_id in sorted(RUNS)],
    output:
        table=report(
            paths.table(RESULTS_DIR, "benchmarks"),
            caption="../report/benchmark_table.rst",
            category="Tables",
            subcategory="Benchmarks",
            labels={"table": "benchmarks"},
        ),
        provenance=paths.provenance(paths.table(RESULTS_DIR, "benchmarks")),
    log:
        paths.log(RESULTS_DIR, "benchmark_table", "benchmarks"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        run_ids=sorted(RUNS),
    script:
        "../scripts/benchmark_table.py"


rule baseline_tables:
    """Count-based baselines of every prepared corpus, on its full splits: unigram and interpolated modified
    Kneser-Ney perplexities, the discounts of each order, and the agreement probe's chance and nearest-noun
    heuristic per head-verb distance."""
    input:
        stats=[paths.corpus_stats(RESULTS_DIR, key) for key in sorted(CORPORA)],
    output:
        baselines=report(
            paths.table(RESULTS_DIR, "baselines"),
            caption="../report/baseline_table.rst",
            category="Tables",
            subcategory="Baselines",
            labels={"table": "baselines"},
        ),
        kn_discounts=report(
            paths.table(RESULTS_DIR, "kn_discounts"),
            caption="../report/kn_discounts_table.rst",
            category="Tables",
            subcategory="Baselines",
            labels={"table": "kn_discounts"},
        ),
        agreement_baselines=report(
            paths.table(RESULTS_DIR, "agreement_baselines"),
            caption="../report/agreement_baselines_table.rst",
            category="Tables",
            subcategory="Baselines",
            labels={"table": "agreement_baselines"},
        ),
        provenance_baselines=paths.provenance(paths.table(RESULTS_DIR, "baselines")),
        provenance_kn_discounts=paths.provenance(paths.table(RESULTS_DIR, "kn_discounts")),
        provenance_agreement_baselines=paths.provenance(paths.table(RESULTS_DIR, "agreement_baselines")),
    log:
        paths.log(RESULTS_DIR, "baseline_tables", "baselines"),
    conda:
        "../envs/rnnbench.yaml"
    threads: 1
    resources:
        mem_mb=3000,  # PTB's and Brown's n-gram tables up to order 5: a few hundred MB each
        runtime=15,  # minutes; each corpus takes seconds on one core
    params:
        corpora={
            key: {"corpus": corpus_run(key).corpus, "options": dict(corpus_run(key).corpus_options)}
            for key in sorted(CORPORA)
        },
        order=CFG.tables["kn_order"],
    script:
        "../scripts/baseline_tables.py"


rule findings_table:
    """Each empirical claim of the seeds: the evidence its role names in the config, its statistic, its one-line
    rule and the verdict computed from the results (rnnbench.findings.policy); and every part of every claim."""
    input:
        evidence=paths.findings_inputs(CFG, WORKED_TABLES),
    output:
        table=report(
            paths.table(RESULTS_DIR, paths.FINDINGS_TABLE),
            caption="../report/findings_table.rst",
            category="Tables",
            subcategory="Findings",
            labels={"table": paths.FINDINGS_TABLE},
        ),
        parts=paths.table(RESULTS_DIR, paths.FINDINGS_PARTS_TABLE),
        provenance=paths.provenance(paths.table(RESULTS_DIR, paths.FINDINGS_TABLE)),
        provenance_parts=paths.provenance(paths.table(RESULTS_DIR, paths.FINDINGS_PARTS_TABLE)),
    log:
        paths.log(RESULTS_DIR, "findings_table", paths.FINDINGS_TABLE),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        # a function of the job, as Snakemake's lint asks of a path prefix of its inputs
        results=lambda wc: RESULTS_DIR,
        roles=FINDINGS_ROLES.record(),
    script:
        "../scripts/findings_table.py"
