"""The dashboard of the project's real history (rebuilt from ``results/`` by ``gpuperf history import``)
opened in headless Chromium: no script error, the regression list and the plots are there, links lead to
their plots; and the same checks can fail."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.cli import main
from pytest_gpuperf.history.backends import record_runs
from pytest_gpuperf.history.dashboard import metric_id
from history_support import browse, chromium, committed_detection, copy_committed_history
from once_support import built_once, shared_root
from test_history_detect import series_runs, strict_loads

# one xdist worker runs this module (scripts/run_tests.sh: --dist loadgroup): the others go on with other tests
# rather than wait on the lock while the first one imports the committed history and renders its dashboard
pytestmark = [pytest.mark.skipif(chromium() is None, reason="chromium absent: apt-get install -y chromium"),
              pytest.mark.xdist_group("dashboard")]
ROOT = Path(__file__).resolve().parents[1]
H100 = "nvidia-h100-80gb-hbm3/cuda"


#: the commit URL the real dashboard is built with (as asv's show_commit_url)
COMMIT_URL = "https://github.com/gpuperf-example/repo/commit/"


@pytest.fixture(scope="session")
def real_dashboard(tmp_path_factory) -> Path:
    """The dashboard of the project's real history (imported from results/ by ``gpuperf history import``),
    built as docs/history.md builds it, commits linked; once for all xdist workers of the run (seconds)."""
    def build(folder: Path) -> None:
        assert main(["history", "report", "--db", copy_committed_history(), "--html", str(folder / "html"),
                     "--commit-url", COMMIT_URL]) == 0

    return built_once(shared_root(tmp_path_factory), "real-dashboard", build) / "html" / "index.html"


#: the window of the screenshot in docs/history-dashboard.png
WINDOW = "1400,1500"


#: added to the page by the test: after the front page is drawn, the page's own ``plot`` draws the flat series
#: of every device (values within 0.1 % of their level, up to 25 a device) below everything else, so the one
#: launch that takes the front page's screenshot also reads the axes of the series most likely to repeat a tick
FLAT_PROBE = """<script>
(function () {
  const probe = el("div", {id: "flat-probe"}, document.body);
  for (const [dev, list] of Object.entries(D.metrics)) {
    const flat = list.filter(m => {
      const ys = m.y.filter(v => v !== null), top = Math.max(...ys.map(Math.abs));
      return ys.length >= 2 && Math.max(...ys) - Math.min(...ys) <= 1e-3 * top;
    });
    for (const m of flat.slice(0, 25)) {
      plot(dev, m, probe);
      const box = probe.lastElementChild;
      box.className = "flat-plot"; box.id = "flat-" + box.id; box.dataset.dev = dev;
    }
  }
})();
</script>
"""


@pytest.fixture(scope="session")
def front_page_shot(real_dashboard, tmp_path_factory) -> tuple[str, list[str], Path]:
    """(DOM, console, screenshot) of the front page, with the flat series of every device drawn below it
    (:data:`FLAT_PROBE`): one Chromium launch for the whole session."""
    folder = tmp_path_factory.mktemp("shot")
    shot, page = folder / "dashboard.png", folder / "index.html"
    text = real_dashboard.read_text()
    page.write_text(text[:text.rindex("</body>")] + FLAT_PROBE + "</body>\n</html>\n")
    dom, console = browse(page, screenshot=shot, size=WINDOW)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    return dom, console, shot


@pytest.fixture(scope="session")
def front_page(front_page_shot) -> tuple[str, list[str]]:
    return front_page_shot[:2]


def drawn(dom: str) -> list[dict[str, str]]:
    """The attributes of every plot box uPlot drew, in page order."""
    return [dict(re.findall(r'([\w-]+)="([^"]*)"', attrs)) for attrs in
            re.findall(r'<div class="plot" ([^>]*)>(?:(?!<div class="plot").)*?<div class="uplot', dom, re.S)]


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
    # the page loads nothing: its only URLs are the commits' links (followed on a click, never fetched)
    assert not re.search(r"""(?<!<a class="commit" )(src|href)=["']?(https?:)?//""", text), "the page must not load anything"
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


def test_the_front_page_leads_with_the_step_reads_distinct_ticks_stays_above_zero_and_links_commits(
        front_page_shot, real_dashboard):
    """What a user sees first on the real history, in the DOM and in the screenshot: the plots of metrics
    with steps come first (a step marker in the first plot's pixels), every y axis reads distinct ticks —
    flat series included —, no axis of a unit that cannot be negative runs below 0 (flat zero series
    included), and commits are links to the commit URL."""
    dom, console, shot = front_page_shot
    assert console == [] and "data-js-errors" not in dom
    data = page_data(real_dashboard)
    dev = re.search(r'data-device="([^"]+)"', dom).group(1)
    metrics = {m["name"]: m for m in data["metrics"][dev]}
    boxes = drawn(dom)
    assert len(boxes) >= 20
    # the step first: the changes section leads, its plots are the metrics with steps, worse first
    families = dom[dom.index('<div id="families">'):]
    assert re.search(r"<h3 [^>]*>", families).group(0) == '<h3 class="changes">'
    lead = [metrics[b["data-metric"]] for b in boxes[:3]]
    assert all(m["steps"] for m in lead) and any(s["dir"] == "worse" for s in lead[0]["steps"])
    n_changed = sum(1 for m in metrics.values() if m["steps"])
    assert all(metrics[b["data-metric"]]["steps"] for b in boxes[:min(n_changed, data["maxPlots"])])
    # ... and the screenshot shows it: the first plot lies on the first screen and holds a step's red marker
    from PIL import Image

    left, top, width, height = map(int, re.search(r'data-first-plot="([^"]+)"', dom).group(1).split(","))
    image = Image.open(shot).convert("RGB")
    assert top + height <= image.height, "the first plot is below the first screen"
    box = image.crop((left, top, left + width, top + height))
    red = int(np.all(np.asarray(box) == (0xcf, 0x22, 0x2e), axis=-1).sum())  # the step's colour (DIR.worse)
    assert red >= 20, f"no step drawn in the first plot ({red} red pixels)"
    # distinct, readable ticks on every axis: the front page's and the flat series' of every device
    flats = [dict(re.findall(r'([\w-]+)="([^"]*)"', attrs)) for attrs in
             re.findall(r'<div class="flat-plot" ([^>]*)>', dom)]
    series = {(d, m["name"]): m for d, ms in data["metrics"].items() for m in ms}
    assert len(flats) >= 40 and len({f["data-dev"] for f in flats}) >= 4
    for b in boxes + flats:
        ticks = json.loads(html.unescape(b["data-yticks"]))
        assert len(ticks) >= 2 and len(set(ticks)) == len(ticks), (b["data-metric"], ticks)
        assert all(len(t) <= 11 for t in ticks), (b["data-metric"], ticks)
    # never below 0 for a unit that cannot be negative, where no value is (a flat series of zeros included)
    zeros = 0
    for b in boxes + flats:
        m = series[(b.get("data-dev", dev), b["data-metric"])]
        low = min(y for y in m["y"] if y is not None)
        if b["data-nonneg"] == "1" and low >= 0:
            assert float(b["data-ymin"]) >= 0.0, (m["name"], b["data-ymin"])
            assert all(float(t) >= 0 for t in json.loads(html.unescape(b["data-yticks"]))), m["name"]
            zeros += low == 0
    assert zeros >= 3, "too few series of zeros drawn: the clamp of a flat zero series is not checked"
    # commits are links: every commit of the regression table, and the plots' step lists
    table = re.search(r'<section id="regressions">(.*?)</section>', dom, re.S).group(1)
    rows = re.findall(r'<tr class="(?:worse|changed)[^"]*">(.*?)</tr>', table, re.S)
    for row in rows:
        links = re.findall(r'<a class="commit" href="([^"]+)">([^<]+)</a>', row)
        hexes = [c for c in re.search(r"<code>(.*?)</code>", row).group(1).split("..") if "href" in c]
        assert len(links) == len(hexes) >= 1, row
        assert all(href.startswith(COMMIT_URL) and href[len(COMMIT_URL):].startswith(text) for href, text in links)
    first = dom[dom.index(f'data-metric="{boxes[0]["data-metric"]}"'):]
    assert re.search(rf'<ul class="plot-steps"><li class="worse">[^<]*<a class="commit" href="{COMMIT_URL}[0-9a-f]+',
                     first), "the first plot's step does not link its commit"


def test_values_that_cannot_be_negative_are_never_drawn_below_zero(front_page, real_dashboard):
    dom, _ = front_page
    dev = re.search(r'data-device="([^"]+)"', dom).group(1)
    low = {m["name"]: min(y for y in m["y"] if y is not None) for m in page_data(real_dashboard)["metrics"][dev]}
    boxes = drawn(dom)
    nonneg = [float(b["data-ymin"]) for b in boxes if b["data-nonneg"] == "1" and low[b["data-metric"]] >= 0]
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
