rule study_summary:
    """A study's tidy table (one row per run and metric) and its record (study.json): what it varies,
    fixes and measures, read by its figure and by the book; each run's outcome judged against its corpus's
    unigram baseline (rnnbench.results.outcome)."""
    input:
        metrics=study_metric_files,
        # a language-model study's runs are judged against their corpus's unigram model; agreement runs
        # against chance, which needs no table
        baselines=lambda wc: (
            [] if CFG.studies[wc.study].corpus == "agreement" else [paths.table(RESULTS_DIR, "baselines")]
        ),
    output:
        table=report(
            paths.study_summary(RESULTS_DIR, "{study}"),
            caption="../report/study_summary.rst",
            category="Study {study}",
            labels={"study": "{study}", "output": "summary table"},
        ),
        record=paths.study_record(RESULTS_DIR, "{study}"),
        provenance=paths.provenance(paths.study_summary(RESULTS_DIR, "{study}")),
    log:
        paths.log(RESULTS_DIR, "study_summary", "{study}"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        record=lambda wc: study_record(CFG, wc.study),
        points=lambda wc: [point for point, _ in study_points(wc.study)],
        runs=lambda wc: [cfg.settings() for _, cfg in study_points(wc.study)],
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
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/study_figure.py"


rule study_extra_table:
    """Beyond the summary: accuracy per head-verb distance over the seeds that learned (agreement studies,
    "distance"), the gradient norm step by step of the first seed's runs (studies that vary clipping,
    "trace"), every run's validation perplexity epoch by epoch (language-model studies, "learning"), or
    accuracy on the probes a cut within sentences separates from their head and on the others (agreement studies
    with sentence segments, "cuts"), each run's accuracy within reach of each truncation length and beyond it, beside
    full-sentence BPTT's on the same probes (agreement studies that vary bptt, "reach"), the hidden units that pass no
    gradient on the validation split (Elman studies that vary the activation, "units"), or the clipped steps whose
    update was measured, with how far clipping turned it (studies that vary clipping with Adam, "update"); each run's
    outcome read from the study's summary."""
    input:
        # each run's outcome, decided once by rule study_summary; the summary reads every run's metrics.json,
        # which the training job writes with agreement.csv
        summary=paths.study_summary(RESULTS_DIR, "{study}"),
        # the runs' steps.csv (trace, update) or epochs.csv (learning), which the training job declares; a run's
        # agreement.csv (distance) is written with its metrics.json, which the summary reads
        run_records=lambda wc: (
            [paths.EXTRA_TABLES[wc.kind](RESULTS_DIR, cfg.run_id) for _, cfg in study_points(wc.study)]
            if wc.kind in ("trace", "learning", "update")
            else []
        ),
        # "cuts" and "reach" score each run's probes again from its weights, "units" reads its validation split through them, on
        # its corpus (ancient: as rule train reads it)
        models=lambda wc: (
            [paths.run_model(RESULTS_DIR, cfg.run_id) for _, cfg in study_points(wc.study)]
            if wc.kind in paths.MODEL_EXTRAS
            else []
        ),
        corpora=lambda wc: (
            [
                ancient(paths.corpus_stats(RESULTS_DIR, key))
                for key in sorted({cfg.corpus_key for _, cfg in study_points(wc.study)})
            ]
            if wc.kind in paths.MODEL_EXTRAS
            else []
        ),
    output:
        table=report(
            paths.study_extra_table(RESULTS_DIR, "{study}", "{kind}"),
            caption="../report/study_extra_table.rst",
            category="Study {study}",
            labels={"study": "{study}", "output": "{kind} table"},
        ),
        provenance=paths.provenance(paths.study_extra_table(RESULTS_DIR, "{study}", "{kind}")),
    log:
        paths.log(RESULTS_DIR, "study_extra_table", "{study}-{kind}"),
    wildcard_constraints:
        kind="|".join(paths.EXTRA_TABLES),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        record=lambda wc: study_record(CFG, wc.study),
        points=lambda wc: [point for point, _ in study_points(wc.study)],
        run_files=lambda wc: {
            cfg.run_id: paths.EXTRA_TABLES[wc.kind](RESULTS_DIR, cfg.run_id) for _, cfg in study_points(wc.study)
        },
    script:
        "../scripts/study_extra_table.py"


rule study_extra_figure:
    """A figure of a study's extra table: the distance x setting heatmap, accuracy-against-distance curves,
    the norm trace (log y), accuracy within a gradient block and across a cut, per cut length, or the cosine of
    each measured clipped update."""
    input:
        table=lambda wc: paths.study_extra_table(RESULTS_DIR, wc.study, paths.EXTRA_FIGURES[wc.name][0]),
        record=paths.study_record(RESULTS_DIR, "{study}"),
    output:
        png=report(
            paths.study_extra_figure(RESULTS_DIR, "{study}", "{name}", "png"),
            caption="../report/study_extra_figure.rst",
            category="Study {study}",
            labels={"study": "{study}", "output": "{name}"},
        ),
        pdf=paths.study_extra_figure(RESULTS_DIR, "{study}", "{name}", "pdf"),
        provenance=paths.provenance(paths.study_extra_figure(RESULTS_DIR, "{study}", "{name}", "png")),
    log:
        paths.log(RESULTS_DIR, "study_extra_figure", "{study}-{name}"),
    wildcard_constraints:
        name="|".join(paths.EXTRA_FIGURES),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/study_extra_figure.py"


rule clipping_figure:
    """Whether clipping stopped divergence and what it cost: per learning rate, each multiple of the median norm
    and no clipping, the seeds that diverged, the metric of the others and the share of steps each setting clipped;
    drawn from the clipping studies whose thresholds are multiples of a measured norm."""
    input:
        summaries=[paths.study_summary(RESULTS_DIR, s) for s in paths.clipping_figure_studies(CFG)],
        records=[paths.study_record(RESULTS_DIR, s) for s in paths.clipping_figure_studies(CFG)],
    output:
        png=report(
            paths.book_figure(RESULTS_DIR, paths.CLIPPING_FIGURE, "png"),
            caption="../report/clipping_figure.rst",
            category="Clipping",
            labels={"figure": "clipping outcomes"},
        ),
        pdf=paths.book_figure(RESULTS_DIR, paths.CLIPPING_FIGURE, "pdf"),
        provenance=paths.provenance(paths.book_figure(RESULTS_DIR, paths.CLIPPING_FIGURE, "png")),
    log:
        paths.log(RESULTS_DIR, "clipping_figure", "clipping"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/clipping_figure.py"
