BOOK_FIGURES = ["jacobian_product", "decay"]  # rnnbench.plots.decay_figures.BOOK_FIGURES: worked tables the book draws


rule book_figure:
    """A figure the book shows beside a worked table (PNG for HTML, PDF for print)."""
    input:
        table=paths.table(RESULTS_DIR, "{name}"),
    output:
        png=paths.book_figure(RESULTS_DIR, "{name}", "png"),
        pdf=paths.book_figure(RESULTS_DIR, "{name}", "pdf"),
        provenance=paths.provenance(paths.book_figure(RESULTS_DIR, "{name}", "png")),  # one record, both formats
    log:
        paths.log(RESULTS_DIR, "book_figure", "{name}"),
    wildcard_constraints:
        name="|".join(BOOK_FIGURES),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/book_figure.py"


rule report:
    """Render the Quarto book of these results into <results_dir>/report/_book/ (HTML and Typst PDF);
    fails with a clear message where Quarto is missing, after every result has been built."""
    input:
        RESULTS,
        [
            paths.book_figure(RESULTS_DIR, name, fmt)
            for name in BOOK_FIGURES
            if name in WORKED_TABLES
            for fmt in paths.FIGURE_FORMATS
        ],
        book="reports/_quarto.yml",
        chapters=sorted(
            glob.glob("reports/*.qmd")
            + glob.glob("reports/*.bib")
            + glob.glob("reports/_quarto-*.yml")
            + glob.glob("reports/*.typ")
            + glob.glob("reports/*.css")
            + glob.glob("reports/*.scss")
            + glob.glob("reports/*.js")
        ),
        # an edit re-renders the book
    output:
        REPORT,
    log:
        paths.log(RESULTS_DIR, "report", "report"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    params:
        book_dir=lambda wc, input: os.path.dirname(input.book),
        results_dir=lambda wc: RESULTS_DIR,
    script:
        "../scripts/render_report.py"
