"""The dashboard opened in headless Chromium: no console errors, every plot drawn with its data."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pytest_gpuperf.cli import main
from pytest_gpuperf.history import record_runs
from history_support import browse, chromium
from test_history_detect import STEP_AT, synthetic

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
                 str(ROOT / "results/nvidia-h100-80gb-hbm3/memory-cuda.json"),
                 str(ROOT / "results/nvidia-h100-80gb-hbm3/memory-r2-cuda.json"),
                 str(ROOT / "results/nvidia-h100-80gb-hbm3/memory-r3-cuda.json")]) == 0
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
