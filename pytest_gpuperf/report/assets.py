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


#: what :func:`script_json` writes as a JSON escape: nothing in the data can then open an HTML comment
#: (``<!--``), start or close a script element (``<script``, ``</script>``) or an entity
_SCRIPT_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def script_json(text: str) -> str:
    """JSON text ``text`` safe inside ``<script type="application/json">``, reading back the same data: ``<``,
    ``>`` and ``&`` (in JSON they occur only inside strings) become ``\\u003c``, ``\\u003e``, ``\\u0026``.
    :func:`inline` is not enough for data: a string holding ``<!--<script>`` (a unit a test recorded) puts
    the HTML parser into the script's escaped state, where ``</script>`` no longer ends the element and the
    page below it is swallowed."""
    for char, escape in _SCRIPT_JSON_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def environment(package: str):
    """A Jinja2 environment over ``package``'s ``templates/`` (HTML autoescaped, undefined names an error)."""
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader(package, "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True,
                              lstrip_blocks=True, undefined=jinja2.StrictUndefined)
