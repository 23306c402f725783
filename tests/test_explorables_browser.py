"""The book's explorables in a real browser: Debian's chromium, driven by Playwright, reading the rendered book.

The book is served on 127.0.0.1 and every request for anything else is refused and recorded, so a test
passes only if the explorables work offline. What each page shows is checked against the tables the
workflow wrote (the smoke results' tables/ and analyses/), and against numbers worked by hand.

Runs with RNNBENCH_SMOKE_RESULTS pointing at a results folder whose book was rendered (the report rule, as
.ci/run does), chromium at /usr/bin/chromium (or $CHROMIUM) and playwright installed (`pip install -e
".[browser]"`; no browser download: the system's chromium is used). Skips, saying which is missing, otherwise.
"""

from __future__ import annotations

import functools
import http.server
import json
import math
import os
import re
import shutil
import threading
from pathlib import Path

import pandas as pd
import pytest

from rnnbench import paths

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SMOKE = os.environ.get("RNNBENCH_SMOKE_RESULTS")

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # the browser extra is not installed
    sync_playwright = None

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(sync_playwright is None, reason='playwright is not installed (pip install -e ".[browser]")'),
    pytest.mark.skipif(
        not Path(CHROMIUM).is_file(), reason=f"chromium not found at {CHROMIUM} (apt-get install chromium)"
    ),
    pytest.mark.skipif(
        not (SMOKE and Path(paths.report_book(SMOKE)[0]).is_file()),
        reason="no rendered book: set RNNBENCH_SMOKE_RESULTS to a results folder whose report was rendered",
    ),
]

MINUS = "\u2212"


def printed(value: float, digits: int = 3) -> str:
    """A number as the page prints it: fixed decimals, a true minus sign, no sign on a zero."""
    text = f"{value:.{digits}f}"
    return f"{0:.{digits}f}" if float(text) == 0 else text.replace("-", MINUS)


def vector(values, digits: int = 3) -> str:
    return "(" + ", ".join(printed(v, digits) for v in values) + ")"


@pytest.fixture(scope="module")
def results() -> Path:
    return Path(SMOKE).resolve()


@pytest.fixture(scope="module")
def site(results):
    """The rendered book on 127.0.0.1, a free port; yields its address."""
    handler = functools.partial(QuietHandler, directory=str(Path(paths.report_dir(str(results))) / "_book"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test's output is the test's, not the server's
        pass


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, site):
    """A fresh page that may fetch from the book's server only; script errors and other fetches fail the test."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    foreign, errors = [], []

    def route(request_route):
        url = request_route.request.url
        if url.startswith((site, "data:", "blob:")):
            request_route.continue_()
        else:
            foreign.append(url)
            request_route.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.site = site
    yield page
    context.close()
    assert foreign == [], f"the page asked for something outside the book: {foreign}"
    assert errors == [], f"script errors: {errors}"


def open_explorable(page, chapter: str, kind: str):
    page.goto(page.site + chapter)
    root = page.locator(f'.explorable[data-explorable="{kind}"]')
    root.wait_for()
    page.wait_for_function(f"document.querySelector('.explorable-{kind}').dataset.ready === 'done'")
    return root


def choose(root, role: str, value: str) -> None:
    """Pick an option of one of the explorable's <select>s; one offering a single option is disabled, and has it."""
    control = root.locator(f'[data-role="{role}"]')
    if control.input_value() != value:
        control.select_option(value)
    assert control.input_value() == value


# --------------------------------------------------------------------------------------------------------------
# 1. The unrolling


def test_the_unrolling_steps_word_by_word_to_the_table_the_workflow_wrote(page, results):
    root = open_explorable(page, "worked.html", "unroll")
    trace = pd.read_csv(paths.table(str(results), "unroll"))
    assert root.locator("tbody tr").count() == 0  # nothing read yet: h_0 = 0
    for step, rows in trace.groupby("step"):
        root.locator('[data-role="next"]').click()
        row = root.locator(f'tr[data-step="{step}"]')
        rows = rows.sort_values("unit")
        for term, column in (
            ("input", "input_term"),
            ("recurrent", "recurrent_term"),
            ("pre", "pre_activation"),
            ("h", "h"),
        ):
            assert row.locator(f'[data-term="{term}"]').inner_text() == vector(rows[column]), (step, term)
        assert root.locator("tbody tr").count() == step
    assert root.locator('[data-role="next"]').is_disabled()
    # The chapter's numbers, by hand: h_3 = tanh(W x_3 + U h_2 + b_h) = tanh(0.389, 0.941).
    assert root.locator('tr[data-step="3"] [data-term="h"]').inner_text() == "(0.370, 0.736)"
    assert "h₃ = (0.370, 0.736)" in root.locator('[data-role="status"]').inner_text()


def test_a_changed_weight_is_recomputed_in_the_page(page):
    root = open_explorable(page, "worked.html", "unroll")
    for _ in range(3):
        root.locator('[data-role="next"]').click()
    # With U = 0 no state reaches the next step: h_3 = tanh(W x_3 + b_h) = tanh(0.3 + 0.05, 0.7 - 0.05).
    for entry in ("U[1,1]", "U[1,2]", "U[2,1]", "U[2,2]"):
        root.locator(f'[data-weight="{entry}"]').fill("0")
    h3 = root.locator('tr[data-step="3"] [data-term="h"]')
    assert h3.inner_text() == vector([math.tanh(0.35), math.tanh(0.65)]) == "(0.336, 0.572)"
    assert root.locator('tr[data-step="3"] [data-term="recurrent"]').inner_text() == "(0.000, 0.000)"
    root.locator('[data-role="reset"]').click()
    assert h3.inner_text() == "(0.370, 0.736)"
    assert root.locator('[data-weight="U[2,2]"]').input_value() == "0.7"


# --------------------------------------------------------------------------------------------------------------
# 2. The parameter count


def test_the_parameter_count_is_the_table_at_every_context(page, results):
    root = open_explorable(page, "context.html", "params")
    totals = pd.read_csv(paths.table(str(results), "params_totals"))
    shapes = pd.read_csv(paths.table(str(results), "params_ff_vs_rnn"))
    first = shapes[(shapes["model"] == "rnn") & (shapes["context"] == 1)].set_index("tensor")["shape"]
    # It starts at the lecture's sizes, as the table was built.
    assert root.locator('[data-size="vocab"]').input_value() == first["embedding"].split("x")[0]
    assert root.locator('[data-size="embed"]').input_value() == first["embedding"].split("x")[1]
    assert root.locator('[data-size="hidden"]').input_value() == first["U"].split("x")[0]
    for row in totals.itertuples():
        root.locator('[data-size="context"]').fill(str(row.context))
        assert root.locator('[data-count="ff"]').inner_text() == f"{row.ff:,}", row.context
        assert root.locator('[data-count="rnn"]').inner_text() == f"{row.rnn:,}", row.context


def test_changing_h_moves_the_crossover_as_the_grid_says(page, results):
    root = open_explorable(page, "context.html", "params")
    grid = pd.read_csv(paths.table(str(results), "crossover_grid"))
    crossover = root.locator('[data-role="crossover-context"]')
    assert crossover.inner_text() == "7"  # d = 100, H = 500: a tie at 1 + 500/100 = 6, FF larger from 7
    for row in grid.itertuples():
        root.locator('[data-size="embed"]').fill(str(row.embed_dim))
        root.locator('[data-size="hidden"]').fill(str(row.hidden))
        assert crossover.inner_text() == f"{row.crossover_by_count:,}", (row.embed_dim, row.hidden)
        tie = float(row.tie_context)
        sentence = root.locator('[data-role="crossover"]').inner_text()
        assert (f"tie at n−1 = 1 + H/d = {int(tie):,}" in sentence) == tie.is_integer(), sentence


# --------------------------------------------------------------------------------------------------------------
# 3. The gradient fading


def measured_rows(results: Path, analysis: str, keys: dict) -> pd.DataFrame:
    """One network's curve in the analysis's curves.csv: backward, one pass, dL/dh, by distance."""
    curves = pd.read_csv(paths.analysis_table(str(results), analysis, "curves"), dtype={"snapshot": str, "run_id": str})
    chosen = (curves["direction"] == "backward") & (curves["method"] == "one_pass") & (curves["quantity"] == "h")
    for key, value in keys.items():
        chosen &= curves[key].isna() if value is None else curves[key] == value
    return curves[chosen].sort_values("distance")


def drawn_points(polyline, plot: dict) -> list[tuple[float, float]]:
    """A polyline's points turned back into (distance, value) through the axis the SVG declares."""
    points = [tuple(map(float, p.split(","))) for p in polyline.get_attribute("points").split()]
    span = plot["bottom"] - plot["top"]
    return [
        (
            (px - plot["left"]) / (plot["right"] - plot["left"]) * plot["dmax"],
            10 ** (plot["high"] - (py - plot["top"]) / span * (plot["high"] - plot["low"])),
        )
        for px, py in points
    ]


def plot_axis(root) -> dict:
    svg = root.locator("svg.explorable-svg")
    read = {k: float(svg.get_attribute(f"data-{a}")) for k, a in [
        ("top", "plot-top"), ("bottom", "plot-bottom"), ("left", "plot-left"), ("right", "plot-right"),
        ("high", "log10-top"), ("low", "log10-bottom"), ("dmax", "distance-max"),
    ]}  # fmt: skip
    return read


def test_each_radius_draws_its_curve_from_curves_csv(page, results):
    root = open_explorable(page, "gradients.html", "decay")
    choose(root, "activation", "tanh")
    choose(root, "snapshot", "untrained")
    radii = root.locator('[data-role="radius"] option').evaluate_all("options => options.map(o => o.value)")
    expected = set()
    for name in sorted(p.parent.name for p in (results / "analyses").glob("*/curves.csv")):
        record = json.loads(Path(paths.analysis_record(str(results), name)).read_text(encoding="utf-8"))
        if record["network"] == "untrained":
            curves = measured_rows(results, name, {})
            expected |= set(curves.loc[curves["activation"] == "tanh", "radius"].dropna())
    assert sorted(float(r) for r in radii) == sorted(expected) and expected  # every measured radius is offered
    checked = 0
    for radius in radii:
        choose(root, "radius", radius)
        lines = root.locator("polyline.explorable-measured")
        assert lines.count() >= 1, radius
        plot = plot_axis(root)
        for i in range(lines.count()):
            line = lines.nth(i)
            keys = json.loads(line.get_attribute("data-keys"))
            assert keys["radius"] == float(radius) and keys["activation"] == "tanh"
            rows = measured_rows(results, line.get_attribute("data-analysis"), keys)
            rows = rows[rows["median"] > 0]  # the line stops where the norm underflows to zero
            drawn = drawn_points(line, plot)
            assert len(drawn) == len(rows) > 1
            for (distance, value), row in zip(drawn, rows.itertuples(), strict=True):
                assert distance == pytest.approx(row.distance, abs=0.01)
                assert math.log10(value) == pytest.approx(math.log10(row.median), abs=1e-3), (radius, row.distance)
            checked += 1
    assert checked >= len(radii)


def test_the_chapters_factors_are_drawn_beside_the_measured_curve(page, results):
    root = open_explorable(page, "gradients.html", "decay")
    chapter = pd.read_csv(paths.table(str(results), "decay_47_words"))
    powers = pd.read_csv(paths.table(str(results), "decay")).set_index(["factor", "distance"])["value"]
    factors = root.locator("polyline.explorable-factor")
    shown = sorted(float(factors.nth(i).get_attribute("data-factor")) for i in range(factors.count()))
    assert shown == sorted(set(chapter["factor"]))  # 0.01, 0.5, 0.9 and 1.2, as the chapter prints them
    plot = plot_axis(root)
    start = drawn_points(root.locator("polyline.explorable-measured").first, plot)[0][1]
    for i in range(factors.count()):
        factor = float(factors.nth(i).get_attribute("data-factor"))
        drawn = drawn_points(factors.nth(i), plot)
        assert drawn[0][1] == pytest.approx(start, rel=1e-3)  # from the measured norm at distance 0
        for distance, value in drawn[1:]:
            d = round(distance)
            if (factor, d) in powers.index and plot["low"] <= math.log10(value) <= plot["high"]:
                assert math.log10(value / start) == pytest.approx(math.log10(powers[(factor, d)]), abs=1e-3)


def network_id(analysis: str, keys: dict) -> tuple:
    """A network as (analysis, its keys): NaN (an LSTM's radius) as None, 2.0 and 2 alike."""
    plain = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in keys.items()}
    return analysis, tuple(sorted(plain.items()))


def every_network(results: Path) -> dict[tuple, tuple]:
    """Every network of every gradient-decay analysis, with its measured medians."""
    found = {}
    for path in sorted((results / "analyses").glob("*/curves.csv")):
        name = path.parent.name
        keys = json.loads(Path(paths.analysis_record(str(results), name)).read_text(encoding="utf-8"))["keys"]
        for values, rows in measured_rows(results, name, {}).groupby(keys, dropna=False, sort=False):
            found[network_id(name, dict(zip(keys, values, strict=True)))] = tuple(rows["median"])
    return found


def test_every_network_of_every_decay_analysis_can_be_picked(page, results):
    """Activation, then snapshot, then radius: every combination offered draws a measured line, and every
    network the analyses measured is drawn for one of them (one measured twice, identically, is drawn once)."""
    root = open_explorable(page, "gradients.html", "decay")
    reached = set()

    def options(role):
        return root.locator(f'[data-role="{role}"] option').evaluate_all("o => o.map(x => x.value)")

    for activation in options("activation"):
        choose(root, "activation", activation)
        for snapshot in options("snapshot"):
            choose(root, "snapshot", snapshot)
            for radius in options("radius"):
                choose(root, "radius", radius)
                lines = root.locator("polyline.explorable-measured")
                assert lines.count() >= 1, (activation, snapshot, radius)
                assert re.search(r"measured rate|no rate", root.locator('[data-role="readout"]').inner_text())
                for i in range(lines.count()):
                    line = lines.nth(i)
                    reached.add(
                        network_id(line.get_attribute("data-analysis"), json.loads(line.get_attribute("data-keys")))
                    )
    networks = every_network(results)
    assert reached <= set(networks)
    drawn = {networks[n] for n in reached}
    assert [n for n, medians in networks.items() if n not in reached and medians not in drawn] == []
