"""``gpuperf``: the project's command line, one subcommand group per concern.

Each group lives in its concern's package and exposes ``register(subparsers)``, which adds its parser
and sets ``func`` on it; add a group (``compare``, …) by appending its module to :data:`GROUPS`.

Help texts are written once, in reST (the docstrings double as descriptions); :func:`plain` turns them
into plain text for the terminal. ``gpuperf run --help`` shows the plugin's own options, grouped
(:data:`RUN_GROUPS`), and points to ``pytest --help`` for the rest.
"""

from __future__ import annotations

import argparse
import importlib
import re
import os
import sys
from typing import Any, Iterator, Sequence

from .errors import GpuPerfError

#: (command, module with ``register(subparsers)``)
GROUPS: list[tuple[str, str]] = [
    ("run", "pytest_gpuperf.suiterun"),
    ("history", "pytest_gpuperf.history.cli"),
    ("compare", "pytest_gpuperf.compare.cli"),
    ("siblings", "pytest_gpuperf.fleet.cli"),
    ("offline", "pytest_gpuperf.offline.cli"),
    ("baseline", "pytest_gpuperf.baselines.cli"),
]


#: the sections of ``gpuperf run --help``: (title, options); an option of the plugin that no section names is
#: shown under "more", never left out
RUN_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("devices", ("--gpuperf-device", "--gpuperf-list-devices", "--gpuperf-timeout")),
    ("which tests run", ("--gpuperf-profile", "--gpuperf-accuracy-budget", "--gpuperf-tuning-budget")),
    ("baselines and the gate", ("--gpuperf-baseline-dir", "--gpuperf-require-baseline", "--gpuperf-update-baselines",
                                "--gpuperf-tolerance-k", "--gpuperf-floor", "--gpuperf-compare",
                                "--gpuperf-fail-on-outlier", "--gpuperf-plant")),
    ("measuring", ("--gpuperf-budget", "--gpuperf-when-busy")),
    ("results and output", ("--gpuperf-json", "--gpuperf-history", "--gpuperf-no-samples", "--gpuperf-summary",
                            "--gpuperf-progress")),
    ("accuracy suites", ("--gpuperf-exhaustive", "--gpuperf-accuracy-scale")),
    ("tuning, power and kernel-class suites", ("--gpuperf-retune", "--gpuperf-tuning-probe-limit",
                                               "--gpuperf-energy-pareto", "--gpuperf-pareto-budget",
                                               "--gpuperf-ncu-timeout")),
)

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(?:([^`<]*?)\s*<[^`>]*>|~?([^`]*))`")


def plain(text: str | None) -> str | None:
    """reST of a docstring or help text as the terminal should show it: ``code`` and :role:`target`
    without their marks (:role:`~a.b.c` as ``c``, :role:`text <target>` as ``text``), `link`_ as link."""
    if not text:
        return text

    def role(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return m.group(1)
        target = m.group(2)
        return target.rsplit(".", 1)[-1] if m.group(0).split("`", 1)[1].startswith("~") else target

    text = _ROLE.sub(role, text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    return re.sub(r"`([^`<]+?)`_", r"\1", text)


def parsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser below it, with the command line that reaches it."""
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases share one parser
                yield from parsers(sub)


def _plain_texts(parser: argparse.ArgumentParser) -> None:
    """Every description, epilog and help text of the tree as plain text (:func:`plain`)."""
    for _, p in parsers(parser):
        p.description, p.epilog = plain(p.description), plain(p.epilog)
        for action in p._actions:
            if action.help and action.help is not argparse.SUPPRESS:
                action.help = plain(action.help)
            for choice in getattr(action, "_choices_actions", ()):
                choice.help = plain(choice.help)


def version() -> str:
    """``gpuperf (pytest-gpuperf) X.Y.Z``, and the commit where known (a checkout, or a wheel built with
    its commit)."""
    from . import __version__
    from .util.provenance import plugin

    info = plugin()
    text = f"gpuperf (pytest-gpuperf) {info['version'] or __version__}"
    return text + (f", commit {info['commit']}" if info["commit"] else "")


class _Version(argparse.Action):
    """``--version``: :func:`version`, worked out only when asked for (it may ask git for the commit)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(version())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuperf", description="pytest-gpuperf tools outside a pytest run")
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version (and commit) and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for _, module in GROUPS:
        importlib.import_module(module).register(sub)
    _plain_texts(parser)
    return parser


class Option:
    """One option as a ``pytest_addoption`` hook declares it: its names and argparse attributes."""

    def __init__(self, names: tuple[str, ...], attrs: dict[str, Any]) -> None:
        self.names, self.attrs = names, attrs


class _Declared:
    """What the plugin's ``pytest_addoption`` hooks declare, read through the part of pytest's parser
    they use (``getgroup(...).addoption``, ``addoption``, ``addini``); pytest's own parser class is
    private to it."""

    def __init__(self) -> None:
        self.options: list[Option] = []
        self.ini: dict[str, str] = {}

    def getgroup(self, name: str, description: str = "", after: str | None = None) -> "_Declared":
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.options.append(Option(names, attrs))

    def addini(self, name: str, help: str, type: str | None = None, default: Any = None) -> None:  # noqa: A002
        self.ini[name] = help


def plugin_options() -> tuple[list[Option], dict[str, str]]:
    """The options and ini keys (name: help) the plugin registers: its ``pytest_addoption`` hook and
    its sub-plugins', the very hooks pytest calls for a run."""
    from . import plugin

    declared = _Declared()
    for module in ("pytest_gpuperf.plugin", *plugin.pytest_plugins):
        hook = getattr(importlib.import_module(module), "pytest_addoption", None)
        if hook is not None:
            hook(declared)
    return declared.options, declared.ini


def run_help() -> str:
    """``gpuperf run --help``: the plugin's options in :data:`RUN_GROUPS`, its ini keys, and where the
    rest is (pytest's own options: ``pytest --help``)."""
    options, ini = plugin_options()
    by_name = {opt.names[0]: opt for opt in options}
    out = argparse.ArgumentParser(
        prog="gpuperf run", add_help=False, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="gpuperf run [OPTIONS] [suites/FILE[::TEST] ...] [PYTEST ARGS]",
        description="Run the shipped benchmark suites under pytest (from any directory; the current one is the "
                    "rootdir,\nwhere ./baselines and pytest's ini file are looked up). The plugin's options:",
        epilog="ini keys (pytest.ini / pyproject.toml [tool.pytest.ini_options]):\n  "
               + "\n  ".join(f"{name}: {plain(help_)}" for name, help_ in ini.items())
               + "\n\nEvery other option is pytest's own (-k, -x, -rs, -n with pytest-xdist, ...): pytest --help")
    named = {n for _, names in RUN_GROUPS for n in names}
    sections = [*RUN_GROUPS, ("more", tuple(n for n in by_name if n not in named))]
    for title, names in sections:
        present = [by_name[n] for n in names if n in by_name]
        if not present:
            continue
        group = out.add_argument_group(title)
        for opt in present:
            attrs = {k: v for k, v in opt.attrs.items() if k in ("action", "nargs", "metavar", "choices", "default")}
            attrs["help"] = plain(opt.attrs.get("help"))
            if "choices" not in attrs and attrs.get("action") not in ("store_true", "store_false", "count"):
                attrs.setdefault("metavar", opt.names[0].removeprefix("--gpuperf-").upper().replace("-", "_"))
            group.add_argument(*opt.names, **attrs)
    return out.format_help()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:  # every later argument is pytest's, options included
        if argv[1:] in (["--help"], ["-h"]):
            print(run_help())
            return 0
        from .suiterun import main as run

        return run(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except GpuPerfError as exc:
        print(f"gpuperf {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped reading (``| head``): nothing more to say, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's own flush at exit must not fail
        return 0


if __name__ == "__main__":
    sys.exit(main())
