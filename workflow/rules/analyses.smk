# Analyses (config `analyses:`): measurements on untrained networks or on the runs of a training study.
# One job per analysis measures its points in turn (a point takes seconds; a job per point would cost more in
# start-up than it gains on a few cores). A study's runs are the study's own jobs' outputs: never retrained.

from rnnbench.analyses import FINAL

wildcard_constraints:
    analysis=r"[a-z][a-z0-9_]*",


def analysis_config(name):
    return _known("analysis", name, CFG.analyses)


def analysis_points(name):
    analysis_config(name)
    return CFG.analysis_points(name)


def point_model(point):
    """The weights file of a study run's point: its model.pt (final) or the snapshot after k epochs."""
    if point.run is None:
        return None
    if point.snapshot == FINAL:
        return paths.run_model(RESULTS_DIR, point.run.run_id)
    return paths.run_snapshot(RESULTS_DIR, point.run.run_id, int(point.snapshot))


def analysis_job_points(name):
    """The points as the job takes them: keys, where the weights come from, the corpus read."""
    measure = analysis_config(name).measure
    return [
        {
            "keys": dict(point.keys),
            "untrained": dict(point.untrained) if point.untrained is not None else None,
            "model": point_model(point),
            "corpus": point.corpus[0] if point.corpus else measure["corpus"],
            "corpus_options": dict(point.corpus[1]) if point.corpus else {},
        }
        for point in analysis_points(name)
    ]


def analysis_models(wildcards):
    """Each run's model.pt: it is written last, after every snapshot, so the run has finished."""
    runs = {p.run.run_id for p in analysis_points(wildcards.analysis) if p.run is not None}
    return [paths.run_model(RESULTS_DIR, run_id) for run_id in sorted(runs)]


def analysis_outputs(kind):
    """The decay job's outputs of one kind of analysis: its tables (with provenance) and its record."""
    outputs = {}
    for table in paths.ANALYSIS_TABLES[kind]:
        outputs[table] = report(
            paths.analysis_table(RESULTS_DIR, "{analysis}", table),
            caption=f"../report/analysis_{table}.rst",
            category="Analysis {analysis}",
            labels={"analysis": "{analysis}", "output": f"{table} table"},
        )
        outputs[f"{table}_provenance"] = paths.provenance(paths.analysis_table(RESULTS_DIR, "{analysis}", table))
    outputs["record"] = paths.analysis_record(RESULTS_DIR, "{analysis}")
    return outputs


DECAY_ANALYSES = [name for name, a in CFG.analyses.items() if a.kind == "gradient_decay"] or ["-"]
PASSAGE_ANALYSES = [name for name, a in CFG.analyses.items() if a.kind == "passage"] or ["-"]


rule decay_analysis:
    """A gradient-decay analysis: for each network, the gradient's norm against distance in one backward pass,
    the forward perturbation, and the measured rate beside the predicted ones."""
    input:
        models=analysis_models,
    output:
        **analysis_outputs("gradient_decay"),
    wildcard_constraints:
        analysis="|".join(DECAY_ANALYSES),
    params:
        record=lambda wc: analysis_config(wc.analysis).record(analysis_points(wc.analysis)),
        points=lambda wc: analysis_job_points(wc.analysis),
        data_dir=DATA_DIR,
        cache_dir=CFG.cache_dir,
        provenance=provenance_for("decay_analysis"),
    log:
        paths.log(RESULTS_DIR, "decay_analysis", "{analysis}"),
    benchmark:
        paths.analysis_benchmark(RESULTS_DIR, "{analysis}")
    threads: 1
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/decay_analysis.py"


use rule decay_analysis as passage_analysis with:
    output:
        **analysis_outputs("passage"),
    wildcard_constraints:
        analysis="|".join(PASSAGE_ANALYSES),
    log:
        paths.log(RESULTS_DIR, "passage_analysis", "{analysis}"),


rule analysis_figure:
    """A gradient-decay analysis's curves: norm against distance on a log axis, colour and panels from its record."""
    input:
        curves=paths.analysis_table(RESULTS_DIR, "{analysis}", "curves"),
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
    params:
        provenance=provenance_for("analysis_figure"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/analysis_figure.py"
