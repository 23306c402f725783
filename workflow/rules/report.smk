rule report:
    """Render the Quarto book from the finished results; fails with a clear message where Quarto is missing."""
    input:
        RESULTS,
        "reports/_quarto.yml",
    output:
        REPORT,
    params:
        book_dir="reports",
        results_dir=R,
    log:
        f"{R}/logs/report/report.log",
    localrule: True
    script:
        "../scripts/render_report.py"
