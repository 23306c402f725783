rule report:
    """Render the Quarto book from the finished results; fails with a clear message where Quarto is missing."""
    input:
        RESULTS,
        book="reports/_quarto.yml",
        chapters=sorted(glob.glob("reports/*.qmd")),  # editing a chapter re-renders the book
    output:
        REPORT,
        "reports/_book/rnnbench-report.pdf",
    params:
        book_dir=lambda wc, input: os.path.dirname(input.book),
        results_dir=lambda wc: RESULTS_DIR,
    log:
        paths.log(RESULTS_DIR, "report", "report"),
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/render_report.py"
