rule study_figure:
    """The study's metric against its first varied setting, seeds as spread (PNG for HTML, PDF for print)."""
    input:
        paths.study_summary(R, "{study}"),
    output:
        [paths.study_figure(R, "{study}", fmt) for fmt in paths.FIGURE_FORMATS],
        paths.provenance(paths.study_figure(R, "{study}", "png")),  # one record for both formats
    params:
        x=lambda wc: CFG.studies[wc.study].x,
        hue=lambda wc: list(CFG.studies[wc.study].vary)[1] if len(CFG.studies[wc.study].vary) > 1 else None,
        metric=lambda wc: CFG.studies[wc.study].metric,
        title=lambda wc: CFG.studies[wc.study].description or wc.study,
        provenance=provenance_for("study_figure"),
    log:
        f"{R}/logs/study_figure/{{study}}.log",
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/study_figure.py"
