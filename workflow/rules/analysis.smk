rule study_summary:
    """Tidy table of one study: one row per run and metric."""
    input:
        study_metric_files,
    output:
        paths.study_summary(R, "{study}"),
        paths.provenance(paths.study_summary(R, "{study}")),
        paths.study_json(R, "{study}"),
    params:
        points=lambda wc: [point for point, _ in study_points(wc.study)],
        runs=lambda wc: [cfg.settings() for _, cfg in study_points(wc.study)],
        about=lambda wc: study_about(wc.study),
        provenance=lambda wc: provenance_for("study_summary"),
    log:
        f"{R}/logs/study_summary/{{study}}.log",
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/study_summary.py"


rule benchmark_table:
    """Wall time and peak memory of every training job (Snakemake's benchmark records)."""
    input:
        expand(f"{R}/benchmarks/train/{{run_id}}.tsv", run_id=sorted(RUNS)),
    output:
        paths.table(R, "benchmarks"),
        paths.provenance(paths.table(R, "benchmarks")),
    params:
        run_ids=sorted(RUNS),
        provenance=provenance_for("benchmark_table"),
    log:
        f"{R}/logs/benchmark_table/benchmarks.log",
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/benchmark_table.py"


rule worked_table:
    """One of the chapter's worked examples or parameter tables (no training)."""
    output:
        paths.table(R, "{name}"),
        paths.provenance(paths.table(R, "{name}")),
    wildcard_constraints:
        name="|".join(WORKED_TABLES) or "no-worked-tables",
    params:
        provenance=provenance_for("worked_table"),
    log:
        f"{R}/logs/worked_table/{{name}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/worked_table.py"
