# Our runs beside the published rows (src/rnnbench/published/published.csv) and perplexity against
# parameter count. Which runs take part is the config's `comparison` block (corpus -> family -> studies).
from rnnbench.metrics import CORPUS_LABELS

COMPARISON = CFG.comparison
COMPARISON_RUNS = {}  # run_id -> the comparison's studies it serves, each run once
for _study in COMPARISON.study_names():
    for _, _cfg in study_points(_study):
        COMPARISON_RUNS.setdefault(_cfg.run_id, []).append(_study)
COMPARISON_CORPORA = sorted({run_config(run_id).corpus_key for run_id in COMPARISON_RUNS})
# The paper-scale reference results kept in the repository (rnnbench.results.reference), beside this config's runs. The
# folder is named relative to the working directory, as every other input is: its files are inputs, and a set of
# input paths that changes reruns the job, so an absolute path would rerun it whenever the checkout moves.
REFERENCE_DIR = (
    os.path.relpath(os.path.join(workflow.basedir, COMPARISON.reference))
    if COMPARISON and COMPARISON.reference is not None
    else None
)


rule comparison:
    """Published rows and ours side by side (sources, splits, status, ratio to the reference row, each
    perplexity's ratio to the Kneser-Ney model of its own corpus and split, our departures from the paper's recipe);
    test perplexity against parameter count with the analytic crossover; the RNN against each
    feed-forward run at matched parameter count and at matched training time; every run's learning curve, and
    the families' ranking after each epoch.
    The reference runs stand beside them, each checked against the config files it names."""
    input:
        configs=[paths.run_config(RESULTS_DIR, run_id) for run_id in COMPARISON_RUNS],
        metrics=[paths.run_metrics(RESULTS_DIR, run_id) for run_id in COMPARISON_RUNS],
        epochs=[paths.run_epochs(RESULTS_DIR, run_id) for run_id in COMPARISON_RUNS],
        reference=reference_files(REFERENCE_DIR) if REFERENCE_DIR else [],
        dynamic=paths.dynamic_outputs(CFG),
        benchmarks=[paths.train_benchmark(RESULTS_DIR, run_id) for run_id in COMPARISON_RUNS],
        corpora=[paths.corpus_stats(RESULTS_DIR, key) for key in COMPARISON_CORPORA],
        baselines=paths.table(RESULTS_DIR, "baselines"),  # our Kneser-Ney models: every ratio to a KN5 of ours
    output:
        comparison=report(
            paths.table(RESULTS_DIR, "comparison"),
            caption="../report/comparison_table.rst",
            category="Against the published numbers",
            labels={"table": "comparison"},
        ),
        crossover=report(
            paths.table(RESULTS_DIR, "crossover"),
            caption="../report/crossover_table.rst",
            category="Against the published numbers",
            labels={"table": "crossover"},
        ),
        matched_parameters=report(
            paths.table(RESULTS_DIR, "matched_parameters"),
            caption="../report/matched_table.rst",
            category="Against the published numbers",
            labels={"table": "matched_parameters"},
        ),
        matched_time=report(
            paths.table(RESULTS_DIR, "matched_time"),
            caption="../report/matched_table.rst",
            category="Against the published numbers",
            labels={"table": "matched_time"},
        ),
        learning_curves=report(
            paths.table(RESULTS_DIR, "learning_curves"),
            caption="../report/learning_curves_table.rst",
            category="Against the published numbers",
            labels={"table": "learning_curves"},
        ),
        ranking_by_epoch=report(
            paths.table(RESULTS_DIR, "ranking_by_epoch"),
            caption="../report/ranking_by_epoch_table.rst",
            category="Against the published numbers",
            labels={"table": "ranking_by_epoch"},
        ),
        provenance_comparison=paths.provenance(paths.table(RESULTS_DIR, "comparison")),
        provenance_crossover=paths.provenance(paths.table(RESULTS_DIR, "crossover")),
        provenance_matched_parameters=paths.provenance(paths.table(RESULTS_DIR, "matched_parameters")),
        provenance_matched_time=paths.provenance(paths.table(RESULTS_DIR, "matched_time")),
        provenance_learning_curves=paths.provenance(paths.table(RESULTS_DIR, "learning_curves")),
        provenance_ranking_by_epoch=paths.provenance(paths.table(RESULTS_DIR, "ranking_by_epoch")),
    log:
        paths.log(RESULTS_DIR, "comparison", "comparison"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        results=lambda wc: RESULTS_DIR,  # run folders are found under it, as rnnbench.paths lays them out
        runs=COMPARISON_RUNS,
        scale=COMPARISON.scale,
        crossover=COMPARISON.crossover,
        reference=lambda wc: REFERENCE_DIR,  # its files are the rule's inputs; the folder names where they sit
        # a study whose recipe changes another's: its departures are the settings changed
        departs_from={name: s.departs_from for name, s in CFG.studies.items() if s.departs_from},
    script:
        "../scripts/comparison.py"


rule crossover_figure:
    """Test perplexity against parameter count, both families, the analytic tie marked (PNG and PDF)."""
    input:
        table=paths.table(RESULTS_DIR, "crossover"),
    output:
        png=report(
            paths.book_figure(RESULTS_DIR, paths.CROSSOVER_FIGURE, "png"),
            caption="../report/crossover_figure.rst",
            category="Against the published numbers",
            labels={"figure": "crossover"},
        ),
        pdf=paths.book_figure(RESULTS_DIR, paths.CROSSOVER_FIGURE, "pdf"),
        provenance=paths.provenance(paths.book_figure(RESULTS_DIR, paths.CROSSOVER_FIGURE, "png")),
    log:
        paths.log(RESULTS_DIR, "crossover_figure", "crossover"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        title=(
            f"Test perplexity against parameter count on "
            f"{CORPUS_LABELS.get(COMPARISON.crossover, COMPARISON.crossover)}, {COMPARISON.scale} runs"
        ),
    script:
        "../scripts/crossover_figure.py"


rule learning_curves_figure:
    """Validation perplexity against training tokens, every run of the comparison and the reference runs."""
    input:
        table=paths.table(RESULTS_DIR, "learning_curves"),
    output:
        png=report(
            paths.book_figure(RESULTS_DIR, paths.LEARNING_CURVES_FIGURE, "png"),
            caption="../report/learning_curves_figure.rst",
            category="Against the published numbers",
            labels={"figure": "learning curves"},
        ),
        pdf=paths.book_figure(RESULTS_DIR, paths.LEARNING_CURVES_FIGURE, "pdf"),
        provenance=paths.provenance(paths.book_figure(RESULTS_DIR, paths.LEARNING_CURVES_FIGURE, "png")),
    log:
        paths.log(RESULTS_DIR, "learning_curves_figure", "learning_curves"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/learning_curves_figure.py"
