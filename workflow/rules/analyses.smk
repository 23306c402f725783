# Analyses (config `analyses:`): measurements on untrained networks or on the runs of a training study, each of
# a kind (gradient_decay, passage, probe) with its own tables, and a figure for the kinds of paths.ANALYSIS_FIGURES.
# One job per analysis measures its points in turn (a point takes seconds; a job per point would cost more in
# start-up than it gains on a few cores). A study's runs are the study's own jobs' outputs: never retrained.


include: "analysis_helpers.smk"  # points, weights files and outputs of each analysis


rule decay_analysis:
    """A gradient-decay analysis: for each network, the gradient's norm against distance in one backward pass,
    the forward perturbation, and the measured rate beside its bounds and the eigenvalue story's rate."""
    input:
        models=analysis_models,
    output:
        **analysis_outputs("gradient_decay"),
    log:
        paths.log(RESULTS_DIR, "decay_analysis", "{analysis}"),
    benchmark:
        paths.analysis_benchmark(RESULTS_DIR, "{analysis}")
    wildcard_constraints:
        analysis="|".join(DECAY_ANALYSES),
    conda:
        "../envs/rnnbench.yaml"
    threads: 1
    params:
        record=lambda wc: analysis_config(wc.analysis).record(analysis_points(wc.analysis)),
        points=lambda wc: analysis_job_points(wc.analysis),
    script:
        "../scripts/decay_analysis.py"


use rule decay_analysis as passage_analysis with:
    output:
        **analysis_outputs("passage"),
    log:
        paths.log(RESULTS_DIR, "passage_analysis", "{analysis}"),
    wildcard_constraints:
        analysis="|".join(PASSAGE_ANALYSES),


use rule decay_analysis as probe_analysis with:
    output:
        **analysis_outputs("probe"),
    log:
        paths.log(RESULTS_DIR, "probe_analysis", "{analysis}"),
    wildcard_constraints:
        analysis="|".join(PROBE_ANALYSES),


rule analysis_figure:
    """An analysis's figure from its table: a gradient-decay analysis's norm against distance on a log axis, colour
    and panels from its record; a probe's accuracy against distance beside the gradient crossing that distance."""
    input:
        table=analysis_figure_table,
        record=paths.analysis_record(RESULTS_DIR, "{analysis}"),
    output:
        png=report(
            paths.analysis_figure(RESULTS_DIR, "{analysis}", "png"),
            caption="../report/analysis_figure.rst",
            category="Analysis {analysis}",
            labels={"analysis": "{analysis}", "output": "figure"},
        ),
        pdf=paths.analysis_figure(RESULTS_DIR, "{analysis}", "pdf"),
        provenance=paths.provenance(paths.analysis_figure(RESULTS_DIR, "{analysis}", "png")),
    log:
        paths.log(RESULTS_DIR, "analysis_figure", "{analysis}"),
    wildcard_constraints:
        analysis="|".join(FIGURE_ANALYSES),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/analysis_figure.py"
