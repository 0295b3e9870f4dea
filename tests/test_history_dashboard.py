"""The dashboard of the project's real history (rebuilt from ``results/`` by ``gpuperf history import``)
opened in headless Chromium: no script error, the regression list and the plots are there, links lead to
their plots; and the same checks can fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_gpuperf.cli import main
from pytest_gpuperf.history.backends import record_runs
from pytest_gpuperf.history.dashboard import metric_id
from history_support import browse, chromium, committed_detection, copy_committed_history
from test_history_detect import series_runs, strict_loads

pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium absent: apt-get install -y chromium")
ROOT = Path(__file__).resolve().parents[1]
H100 = "nvidia-h100-80gb-hbm3/cuda"


@pytest.fixture(scope="module")
def real_dashboard(tmp_path_factory) -> Path:
    """The dashboard of the project's real history, built as the README builds it."""
    out = tmp_path_factory.mktemp("real") / "html"
    assert main(["history", "report", "--db", copy_committed_history(), "--html", str(out)]) == 0
    return out / "index.html"


#: the window of the screenshot in docs/history-dashboard.png
WINDOW = "1400,1500"


@pytest.fixture(scope="module")
def front_page(real_dashboard, tmp_path_factory) -> tuple[str, list[str]]:
    shot = tmp_path_factory.mktemp("shot") / "dashboard.png"
    dom, console = browse(real_dashboard, screenshot=shot, size=WINDOW)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    return dom, console


def page_data(page: Path) -> dict:
    """The data a dashboard page embeds, parsed as strictly as the browser's JSON.parse does."""
    found = re.search(r'<script type="application/json" id="gpuperf-data">(.*?)</script>', page.read_text(), re.S)
    return strict_loads(found.group(1).replace("<\\/", "</"))


def plots(dom: str) -> list[tuple[str, str]]:
    """(metric, points) of every plot uPlot drew (a plot box holding a uPlot chart)."""
    return re.findall(r'<div class="plot" id="[^"]+" data-metric="([^"]+)" data-points="(\d+)"[^>]*>'
                      r'(?:(?!<div class="plot").)*?<div class="uplot', dom, re.S)


def test_the_page_is_self_contained_and_its_data_strict_json(real_dashboard):
    text = real_dashboard.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "the page must not load anything"
    assert "uPlot" in text and "Leon Sorokin" not in text  # the library is inlined; its licence ships beside it
    data = page_data(real_dashboard)
    assert len(data["devices"]) >= 3 and all(data["metrics"][d["id"]] for d in data["devices"])


def test_the_real_history_renders_its_regressions_and_plots_without_a_script_error(front_page, real_dashboard):
    dom, console = front_page
    assert console == [], f"console messages: {console}"
    assert 'data-rendered="yes"' in dom and "data-js-errors" not in dom and '<pre id="errors"></pre>' in dom
    table = re.search(r'<section id="regressions">(.*?)</section>', dom, re.S).group(1)
    rows = re.findall(r'<tr class="(worse|changed)[^"]*">.*?<a href="#([^"]+)"', table, re.S)
    expected = [s for s in committed_detection()[1].steps if s.worse]
    assert len(rows) == len(expected) >= 3
    dates = re.findall(r'<tr class="(?:worse|changed)[^"]*">\s*<td>([^<]+)</td>', table)
    assert dates == sorted(dates, reverse=True), "newest first"
    drawn = plots(dom)
    assert len(drawn) >= 3 and int(re.search(r'data-plots="(\d+)"', dom).group(1)) == len(drawn)
    assert all(int(n) >= 1 for _, n in drawn)
    # the first screen (the screenshot's window) shows regressions and at least three plots
    assert int(re.search(r'data-visible-regressions="(\d+)"', dom).group(1)) >= 3
    assert int(re.search(r'data-visible-plots="(\d+)"', dom).group(1)) >= 3


def test_a_regression_links_to_its_plot_on_its_device(front_page, real_dashboard):
    dom, _ = front_page
    anchor, dev, family = re.search(r'<a href="#(m-[^"]+)" data-dev="([^"]+)" data-family="([^"]+)"', dom).groups()
    linked, console = browse(real_dashboard, fragment=anchor)
    assert console == []
    assert f'data-device="{dev}"' in linked and f'id="{anchor}"' in linked
    assert re.findall(r'<h3 class="family" data-family="([^"]+)"', linked) == [family], "its family is selected"


def test_values_that_cannot_be_negative_are_never_drawn_below_zero(front_page):
    dom, _ = front_page
    boxes = re.findall(r'data-ymin="([^"]+)"><h4[^>]*>[^<]*</h4><div class="meta">([^,<]+),', dom)
    nonneg = [float(low) for low, unit in boxes if unit in ("ulp", "cycles", "us", "ns", "GB/s", "bytes")]
    assert len(boxes) == len(plots(dom)) and nonneg
    assert min(nonneg) >= 0.0


def test_a_broken_page_is_caught(real_dashboard, tmp_path):
    """The check above can fail: the same page with a script error is reported."""
    bad = tmp_path / "bad.html"
    bad.write_text(real_dashboard.read_text().replace("const D = JSON.parse", "const D = JSONX.parse"))
    dom, console = browse(bad)
    assert any("JSONX" in line for line in console) and 'data-js-errors="1"' in dom
    assert 'data-plots="' not in dom


def test_a_step_from_zero_is_listed_with_its_absolute_size(tmp_path):
    db = str(tmp_path / "h.db")
    record_runs(db, series_runs([0.0] * 6 + [1.0] * 6, better="bound"))
    assert main(["history", "report", "--db", db, "--html", str(tmp_path / "html")]) == 0
    page = tmp_path / "html" / "index.html"
    (step,) = page_data(page)["metrics"]["dev/cuda"][0]["steps"]
    assert (step["rel"], step["delta"], step["size"]) == (None, 1.0, "+1 ulp")
    dom, console = browse(page)
    assert console == [] and 'data-plots="1"' in dom and "data-js-errors" not in dom
    assert re.search(r'<li class="worse">worse \+1 ulp \(0 → 1 ulp\) at c005\.\.c006', dom), dom[-3000:]
    assert f'href="#{metric_id("dev/cuda", "area.metric")}"' in dom
