"""The help of the ``gpuperf`` command: ``gpuperf run --help`` shows the plugin's options (grouped), not
pytest's 500 lines; help texts read as plain text (no reST marks), every argument has one, defaults are
values; ``gpuperf --version``; ``gpuperf history --db`` before or after the subcommand; the install hint
fits how the package was installed; docs/reference.md's option tables list exactly the options the
plugin registers."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from pytest_gpuperf import cli
from pytest_gpuperf.util import provenance

ROOT = Path(__file__).resolve().parents[1]
REST = re.compile(r"``|:[a-z]+:`|`[^`\s]+`_")


def _registered() -> set[str]:
    options, _ini = cli.plugin_options()
    return {opt.names[0] for opt in options}


def test_the_declared_options_are_the_ones_pytest_registered(pytestconfig):
    """``plugin_options`` reads the plugin's own hooks; the running pytest (this plugin loaded) has the
    same ``--gpuperf-*`` options, no more, no fewer."""
    options, ini = cli.plugin_options()
    declared = {opt.attrs.get("dest") or opt.names[0][2:].replace("-", "_") for opt in options}
    running = {name for name in vars(pytestconfig.option) if name.startswith("gpuperf_")}
    assert declared == running
    for name in ini:
        pytestconfig.getini(name)  # raises ValueError for a key pytest does not know


def test_run_help_is_the_plugins_options_grouped_with_a_pointer_to_pytest(capsys):
    assert cli.main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for name in _registered():
        assert re.search(rf"^  {re.escape(name)}\b", out, re.M), f"{name} missing from gpuperf run --help"
    titles = [title for title, _names in cli.RUN_GROUPS]
    assert [t for t in re.findall(r"^(\S[^\n]*):$", out, re.M) if t in titles] == titles
    assert "more:" not in out  # every option has its section
    assert "pytest --help" in out and "gpuperf_profile:" in out  # the rest, and the ini keys
    assert len(out.splitlines()) < 250  # pytest's own help is over 500 lines
    assert not REST.search(out)
    assert "DEFAULT_TIMEOUT_S" not in out and "default 240 s" in out  # a default is shown as its value


def test_every_argument_of_every_gpuperf_command_has_plain_help():
    parser = cli.build_parser()
    lacking, marked = [], []
    for prog, p in cli.parsers(parser):
        for text in (p.description, p.epilog):
            if text and REST.search(text):
                marked.append(f"{prog}: {REST.search(text).group(0)}")
        for action in p._actions:
            for choice in getattr(action, "_choices_actions", ()):
                if not choice.help:
                    lacking.append(f"{prog} {choice.dest}")
            if action.help is None and not getattr(action, "_choices_actions", None):
                lacking.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")
            elif action.help and REST.search(action.help):
                marked.append(f"{prog} {action.dest}: {action.help}")
    assert not lacking, f"arguments without help: {lacking}"
    assert not marked, f"reST marks in help texts: {marked}"


@pytest.mark.parametrize("rest,text", [
    ("``gpuperf compare A.json B.json``: the two", "gpuperf compare A.json B.json: the two"),
    (":func:`pytest_gpuperf.cli.main` hands over", "pytest_gpuperf.cli.main hands over"),
    (":data:`~pytest_gpuperf.cli.RUN_GROUPS` lists", "RUN_GROUPS lists"),
    (":mod:`the models <pytest_gpuperf.studies>` and `Kernel Tuner`_", "the models and Kernel Tuner"),
    ("5 %% of a `single` word", "5 %% of a `single` word"),
])
def test_rest_becomes_plain_text(rest, text):
    assert cli.plain(rest) == text


def test_version_names_the_package_version_and_the_commit_where_known(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out.strip()
    assert re.fullmatch(r"gpuperf \(pytest-gpuperf\) \d+\.\d+\.\d+\S*(, commit [0-9a-f]{7,40}(\+dirty)?)?", out), out
    if provenance.plugin_commit():  # a checkout (or a wheel built with its commit)
        assert out.endswith(provenance.plugin_commit())
    assert "--version" in cli.build_parser().format_help()


@pytest.mark.parametrize("argv,db", [
    (["history", "--db", "a.db", "list"], "a.db"),
    (["history", "list", "--db", "b.db"], "b.db"),
    (["history", "--db", "a.db", "show", "latency", "--db", "b.db"], "b.db"),  # the nearer one wins
    (["history", "--db", "a.db", "detect", "--device", "k"], "a.db"),
])
def test_history_db_before_or_after_the_subcommand(argv, db):
    assert cli.build_parser().parse_args(argv).db == db


def test_history_db_default_when_given_nowhere(monkeypatch):
    monkeypatch.setenv("GPUPERF_HISTORY", "from-env.db")
    assert cli.build_parser().parse_args(["history", "list"]).db == "from-env.db"


def test_install_hint_fits_a_checkout_and_a_wheel(tmp_path):
    here = provenance.checkout_root()
    if here is not None:  # tests run from a checkout: the editable hint names it
        assert provenance.install_hint("cuda") == f'pip install -e "{here}[cuda]"'
    # the same module where a wheel puts it (site-packages/pytest_gpuperf/util/): no checkout above
    wheel = tmp_path / "site-packages" / "pytest_gpuperf" / "util"
    wheel.mkdir(parents=True)
    shutil.copy(provenance.__file__, wheel / "provenance.py")
    spec = importlib.util.spec_from_file_location("wheel_provenance", wheel / "provenance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.checkout_root() is None
    assert module.install_hint("cuda") == 'pip install "pytest-gpuperf[cuda]"'


def test_reference_lists_every_option_the_plugin_registers():
    """docs/reference.md's option tables (the device table's header and the options table) name every
    ``--gpuperf-*`` option the plugin registers, and no option it does not."""
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(--gpuperf-[a-z0-9-]+)", text, re.M))
    registered = _registered()
    assert not registered - documented, f"options missing from docs/reference.md: {sorted(registered - documented)}"
    assert not documented - registered, f"docs/reference.md documents unknown options: {sorted(documented - registered)}"
