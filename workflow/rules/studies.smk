rule study_summary:
    """A study's tidy table (one row per run and metric) and its record (study.json): what it varies,
    fixes and measures, read by its figure and by the book."""
    input:
        metrics=study_metric_files,
    output:
        table=report(
            paths.study_summary(RESULTS_DIR, "{study}"),
            caption="../report/study_summary.rst",
            category="Study {study}",
            labels={"study": "{study}", "output": "summary table"},
        ),
        record=paths.study_record(RESULTS_DIR, "{study}"),
        provenance=paths.provenance(paths.study_summary(RESULTS_DIR, "{study}")),
    params:
        record=lambda wc: study_record(CFG, wc.study),
        points=lambda wc: [point for point, _ in study_points(wc.study)],
        runs=lambda wc: [cfg.settings() for _, cfg in study_points(wc.study)],
        provenance=provenance_for("study_summary"),
    log:
        paths.log(RESULTS_DIR, "study_summary", "{study}"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/study_summary.py"


rule study_figure:
    """The study's metric against its first varied setting, seeds as spread (PNG for HTML, PDF for print)."""
    input:
        table=paths.study_summary(RESULTS_DIR, "{study}"),
        record=paths.study_record(RESULTS_DIR, "{study}"),
    output:
        png=report(
            paths.study_figure(RESULTS_DIR, "{study}", "png"),
            caption="../report/study_figure.rst",
            category="Study {study}",
            labels={"study": "{study}", "output": "figure"},
        ),
        pdf=paths.study_figure(RESULTS_DIR, "{study}", "pdf"),
        provenance=paths.provenance(paths.study_figure(RESULTS_DIR, "{study}", "png")),  # one record, both formats
    log:
        paths.log(RESULTS_DIR, "study_figure", "{study}"),
    params:
        provenance=provenance_for("study_figure"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/study_figure.py"
