# The activation studies side by side (rnnbench.results.activation): every study with the activation_training role
# whose extra tables count silent units and steps to a common training loss (rnnbench.paths.activation_studies), each
# read from its files by name (rnnbench.paths.activation_study_files).
ACTIVATION_STUDIES = paths.activation_studies(CFG)


rule activation_figure:
    """Per run of each activation study: its steps to the study's common training loss, the metric it ended at, its
    share of silent units, its outcome and its share of steps clipped (tables/activation.csv); and the figure of
    them, a row per study (PNG for HTML, PDF for print)."""
    input:
        [path for study in ACTIVATION_STUDIES for path in paths.activation_study_files(RESULTS_DIR, study).values()],
    output:
        table=report(
            paths.table(RESULTS_DIR, paths.ACTIVATION),
            caption="../report/activation_figure.rst",
            category="Which activation",
            labels={"table": "activation"},
        ),
        png=report(
            paths.book_figure(RESULTS_DIR, paths.ACTIVATION, "png"),
            caption="../report/activation_figure.rst",
            category="Which activation",
            labels={"figure": "activation"},
        ),
        pdf=paths.book_figure(RESULTS_DIR, paths.ACTIVATION, "pdf"),
        table_provenance=paths.provenance(paths.table(RESULTS_DIR, paths.ACTIVATION)),
        figure_provenance=paths.provenance(paths.book_figure(RESULTS_DIR, paths.ACTIVATION, "png")),
    log:
        paths.log(RESULTS_DIR, "activation_figure", "activation"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        studies={study: paths.activation_study_files(RESULTS_DIR, study) for study in ACTIVATION_STUDIES},
    script:
        "../scripts/activation_figure.py"
