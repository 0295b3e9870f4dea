"""What the HTML reports inline: the vendored plotting library and the reports' own files, read from
package data, and the one rule that keeps inlined text from closing its element.

``static/uPlot.iife.min.js`` and ``static/uPlot.min.css`` are uPlot 1.6.32 (https://github.com/leeoniya/uPlot,
MIT licence in ``static/uPlot.LICENSE``): a small, maintained canvas plotting library, inlined so a page
works from a file with no network. The history dashboard and the compare report draw with it.
"""

from __future__ import annotations

from importlib import resources

UPLOT_JS = "uPlot.iife.min.js"
UPLOT_CSS = "uPlot.min.css"


def read(package: str, name: str) -> str:
    """The text of ``static/<name>`` of ``package`` (``pytest_gpuperf.report`` for the shared files)."""
    return resources.files(package).joinpath("static", name).read_text(encoding="utf-8")


def shared(name: str) -> str:
    """A file every report shares (the vendored uPlot)."""
    return read(__package__, name)


def inline(text: str) -> str:
    """``text`` safe inside a ``<script>`` or ``<style>`` element (nothing in it can close the element);
    in JSON and JavaScript strings ``<\\/`` still reads ``</``."""
    return text.replace("</", "<\\/")


def environment(package: str):
    """A Jinja2 environment over ``package``'s ``templates/`` (HTML autoescaped, undefined names an error)."""
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader(package, "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True,
                              lstrip_blocks=True, undefined=jinja2.StrictUndefined)
