rule report:
    """Render the Quarto book from the finished results; fails with a clear message where Quarto is missing."""
    input:
        RESULTS,
        book="reports/_quarto.yml",
    output:
        REPORT,
    params:
        book_dir=lambda wc, input: os.path.dirname(input.book),
    log:
        f"{R}/logs/report/report.log",
    localrule: True
    conda:
        "../envs/rnnbench.yaml"
    script:
        "../scripts/render_report.py"
