"""The dashboard opened in headless Chromium: no console errors, every plot drawn with its data — on
synthetic series and on the project's real history."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pytest_gpuperf.util import jsonio

from pytest_gpuperf.cli import main
from pytest_gpuperf.history import record_runs
from history_support import browse, chromium, copy_committed_history
from test_history_detect import STEP_AT, strict_loads, synthetic

pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium absent: apt-get install -y chromium")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory) -> Path:
    """50 runs of a metric with a 5 % step and a driver change, plus two real results files."""
    tmp = tmp_path_factory.mktemp("dash")
    db = str(tmp / "h.db")
    runs = synthetic(14, step=0.05)
    for r in runs[40:]:
        r.driver = "590.10"
    record_runs(db, runs)
    assert main(["history", "import", "--db", db,
                 str(ROOT / "results/nvidia-h100-80gb-hbm3/memory-cuda.json.gz"),
                 str(ROOT / "results/nvidia-h100-80gb-hbm3/memory-r2-cuda.json.gz"),
                 str(ROOT / "results/nvidia-h100-80gb-hbm3/memory-r3-cuda.json.gz")]) == 0
    assert main(["history", "report", "--db", db, "--html", str(tmp / "html")]) == 0
    return tmp / "html" / "index.html"


def test_dashboard_is_self_contained(dashboard):
    text = dashboard.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "the page must not load anything"


def test_dashboard_renders_in_chromium_without_console_errors(dashboard, tmp_path):
    shot = tmp_path / "dashboard.png"
    dom, console = browse(dashboard, screenshot=shot)
    assert console == [], f"console messages: {console}"
    assert 'data-rendered="yes"' in dom and "data-js-errors" not in dom
    plots = int(re.search(r'data-plots="(\d+)"', dom).group(1))
    series = re.findall(r'<path class="series" d="M([^"]+)" data-points="(\d+)"', dom)
    assert plots >= 7 and len(series) == plots  # 1 synthetic metric + the 6 H100 memory metrics (same device)
    for d, n in series:
        assert len(d.split(" L")) == int(n) >= 2 and "NaN" not in d
    assert dom.count('class="step-worse"') == 1, "the 5 % step is marked once"
    assert dom.count('class="env"') >= 1, "the driver change is marked"
    assert 'id="changes"' in dom and dom.count("<tr>") > 2
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_a_broken_page_is_caught(dashboard, tmp_path):
    """The check above can fail: the same page with a script error is reported."""
    bad = tmp_path / "bad.html"
    bad.write_text(dashboard.read_text().replace("const D = JSON.parse", "const D = JSONX.parse"))
    dom, console = browse(bad)
    assert any("JSONX" in line for line in console) and 'data-js-errors="1"' in dom
    assert 'data-plots="' not in dom


def test_axis_labels_are_the_first_and_last_runs_date_and_commit(dashboard):
    dom, _ = browse(dashboard)
    dates = re.findall(r'<text class="xdate"[^>]*>([^<]+)</text>', dom)
    last = jsonio.read_json(ROOT / "results/nvidia-h100-80gb-hbm3/memory-r3-cuda.json.gz")["run"]["started"]
    assert dates and set(dates) == {"2026-02-01 00:00", last[:16].replace("T", " ")}  # synthetic, then real runs


def test_a_step_from_zero_is_drawn_with_its_absolute_size(tmp_path):
    from test_history_detect import series_runs

    db = str(tmp_path / "h.db")
    record_runs(db, series_runs([0.0] * 6 + [1.0] * 6, better="bound"))
    assert main(["history", "report", "--db", db, "--html", str(tmp_path / "html")]) == 0
    page = tmp_path / "html" / "index.html"
    (step,) = page_data(page)["series"]["dev/cuda"]["area"][0]["steps"]
    assert (step["rel"], step["delta"]) == (None, 1.0)
    dom, console = browse(page)
    assert console == [] and 'data-plots="1"' in dom and "data-js-errors" not in dom
    assert re.search(r'class="step-worse"[^>]*><title>worse step \+1\.000 ulp \(from 0\) at c006 '
                     r'\(2026-03-01 00:06\)</title>', dom), dom[-3000:]


@pytest.fixture(scope="module")
def real_dashboard(tmp_path_factory) -> Path:
    """The dashboard of the project's real history (built from the committed results, as the README builds it)."""
    out = tmp_path_factory.mktemp("real") / "html"
    assert main(["history", "report", "--db", copy_committed_history(), "--html", str(out)]) == 0
    return out / "index.html"


def page_data(page: Path) -> dict:
    """The data a dashboard page embeds, parsed as strictly as the browser's JSON.parse does."""
    found = re.search(r'<script type="application/json" id="gpuperf-data">(.*?)</script>', page.read_text(), re.S)
    return strict_loads(found.group(1).replace("<\\/", "</"))


def test_real_history_dashboard_is_strict_json(real_dashboard):
    data = page_data(real_dashboard)
    assert len(data["devices"]) >= 3 and sum(len(v) for v in data["leftOut"].values()) > 0


@pytest.mark.parametrize("device", ["", "nvidia-h100-80gb-hbm3/cuda"])
def test_real_history_dashboard_renders_in_chromium(real_dashboard, device):
    """Rendered from the real history in headless Chromium: no JS error, every plot drawn with its points,
    dates on the axes, and the planted gate-check runs left out and listed."""
    dom, console = browse(real_dashboard, fragment=device)
    assert console == [], f"console messages: {console}"
    assert re.search(r'<pre id="errors"></pre>', dom) and "data-js-errors" not in dom
    assert 'data-rendered="yes"' in dom
    plots = int(re.search(r'data-plots="(\d+)"', dom).group(1))
    series = re.findall(r'<path class="series" d="M([^"]+)" data-points="(\d+)"', dom)
    assert plots >= 10 and len(series) == plots
    for d, n in series:
        assert len(d.split(" L")) == int(n) >= 1 and "NaN" not in d
    assert re.search(r'<text class="xdate"[^>]*>20\d\d-\d\d-\d\d \d\d:\d\d</text>', dom)
    if device:
        assert f'data-device="{device}"' in dom
        assert re.search(r'<p id="left-out">\d+ run\(s\) left out of the trends: .*--gpuperf-plant', dom)
        assert 'class="ident"' in dom, "identity changes are marked, not drawn as steps"
