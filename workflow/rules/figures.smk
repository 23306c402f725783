rule study_figure:
    """The study's metric against its varied settings, seeds as spread (PNG for HTML, PDF for print)."""
    input:
        summary=paths.study_summary(R, "{study}"),
        study=paths.study_json(R, "{study}"),
    output:
        [paths.study_figure(R, "{study}", fmt) for fmt in paths.FIGURE_FORMATS],
        paths.provenance(paths.study_figure(R, "{study}", "png")),  # one record for both formats
    params:
        provenance=provenance_for("study_figure"),
    log:
        f"{R}/logs/study_figure/{{study}}.log",
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/study_figure.py"
