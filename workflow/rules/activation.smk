# The activation studies side by side (rnnbench.results.activation): every study with the activation_training role
# whose extra tables count silent units and steps to a common training loss (rnnbench.paths.activation_studies).
ACTIVATION_STUDIES = paths.activation_studies(CFG)


def activation_study_files(study):
    """The files of ``study`` the activation table reads, by name (rnnbench.results.activation.STUDY_FILES)."""
    return {
        "summary": paths.study_summary(RESULTS_DIR, study),
        "record": paths.study_record(RESULTS_DIR, study),
        "speed": paths.study_extra_table(RESULTS_DIR, study, "speed"),
        "units": paths.study_extra_table(RESULTS_DIR, study, "units"),
    }


rule activation_figure:
    """Per run of each activation study: its steps to the study's common training loss, the metric it ended at, its
    share of silent units, its outcome and its share of steps clipped (tables/activation.csv); and the figure of
    them, a row per study (PNG for HTML, PDF for print)."""
    input:
        [path for study in ACTIVATION_STUDIES for path in activation_study_files(study).values()],
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
        studies={study: activation_study_files(study) for study in ACTIVATION_STUDIES},
    script:
        "../scripts/activation_figure.py"
