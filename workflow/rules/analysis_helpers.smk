# Helpers of analyses.smk only: an analysis's points, weights files and outputs, derived from the config (CFG).
from rnnbench.config.analyses import FINAL


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


def analysis_figure_table(wildcards):
    """The table an analysis's figure is drawn from (paths.ANALYSIS_FIGURES): curves.csv, or a probe's probe.csv."""
    table = paths.ANALYSIS_FIGURES[analysis_config(wildcards.analysis).kind]
    return paths.analysis_table(RESULTS_DIR, wildcards.analysis, table)


DECAY_ANALYSES = [name for name, a in CFG.analyses.items() if a.kind == "gradient_decay"] or ["-"]
PASSAGE_ANALYSES = [name for name, a in CFG.analyses.items() if a.kind == "passage"] or ["-"]
PROBE_ANALYSES = [name for name, a in CFG.analyses.items() if a.kind == "probe"] or ["-"]
FIGURE_ANALYSES = [name for name, a in CFG.analyses.items() if a.kind in paths.ANALYSIS_FIGURES] or ["-"]
