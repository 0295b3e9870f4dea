"""Mutation check of the modules that decide verdicts: do the tests notice a small bug?

Each mutant is one small change a real bug could make — a comparison operator swapped (``<`` ↔ ``<=``,
``>`` ↔ ``>=``, ``==`` ↔ ``!=``), ``and`` ↔ ``or``, ``+`` ↔ ``-``, a constant moved (0 ↔ 1, True ↔ False,
another number changed), a ``return`` guard switched off (``if cond: return …`` → ``if False: …``), ``not``
dropped. It is applied to a private copy of the repository (the working tree is never touched) and run
against the test files that exercise its module (:data:`TESTS`), with a timeout per mutant. A mutant the
tests fail on (or time out on) is *killed*; one they pass is a *survivor*: a change of behaviour no test pins.

    python3 scripts/mutation_check.py --sample 120 --seed 1 --report results/mutation/report.txt && gzip -9n results/mutation/report.txt
    python3 scripts/mutation_check.py --module baselines/validity.py --list

The report holds the kill rate and every survivor as ``file:line: mutation``.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = "pytest_gpuperf"

#: module (under pytest_gpuperf/) → the test files that exercise it (fast ones: each mutant runs them all)
PINS = "tests/test_gate_pins.py"
MUTANT_PINS = "tests/test_gate_mutants.py"
HOSTILE = "tests/test_gate_hostile_input.py"
TESTS: dict[str, list[str]] = {
    "baselines/verdicts.py": [MUTANT_PINS, HOSTILE, PINS, "tests/test_gate_bands.py", "tests/test_core_trust.py",
                              "tests/test_gate_noise.py"],
    "baselines/noise.py": [MUTANT_PINS, PINS, "tests/test_gate_noise.py", "tests/test_compare_noise.py"],
    "baselines/merge.py": [MUTANT_PINS, PINS, "tests/test_baseline_own_noise.py"],
    "baselines/validity.py": [MUTANT_PINS, HOSTILE, PINS, "tests/test_core_trust.py"],
    "timing/difference.py": [MUTANT_PINS, HOSTILE, PINS, "tests/test_core_trust.py", "tests/test_compare_noise.py"],
    "timing/observers.py": [MUTANT_PINS, "tests/test_timing_observers.py", "tests/test_core_contended.py"],
    "compare/engine.py": [MUTANT_PINS, HOSTILE, PINS, "tests/test_compare_engine.py", "tests/test_compare_noise.py"],
    "compare/gate.py": [MUTANT_PINS, HOSTILE, PINS, "tests/test_compare_noise.py"],
    "history/detect.py": [MUTANT_PINS, PINS, "tests/test_history_detect.py"],
    "accuracy/certificate.py": [MUTANT_PINS, "tests/test_accuracy_identity.py"],
    "fleet/siblings.py": [MUTANT_PINS, "tests/test_fleet_siblings.py"],
    "baselines/sibling_verdict.py": [MUTANT_PINS, "tests/test_baselines_sibling_verdict.py",
                                     "tests/test_fleet_siblings.py"],
    "baselines/cohort.py": ["tests/test_baselines_cohort.py", "tests/test_fleet_report.py"],
    "session.py": [MUTANT_PINS, PINS, "tests/test_core_contended.py", "tests/test_core_first_run.py",
                   "tests/test_core_cotenants.py",
                   "tests/test_faults_interrupt.py::test_ctrl_c_during_the_final_writes_is_held_until_they_are_done"],
}

_CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is",
        ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-", ast.And: "and",
        ast.Or: "or"}


@dataclass(frozen=True)
class Mutant:
    """One change: the module, the index of the node in :func:`_points`' walk, where and what."""

    module: str
    index: int
    line: int
    what: str

    def label(self) -> str:
        return f"{PKG}/{self.module}:{self.line}: {self.what}"


def _docstring_ids(tree: ast.AST) -> set[int]:
    """ids of the constants that are docstrings (never mutated: they change no behaviour)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _number_change(v: object) -> object | None:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return {0: 1, 1: 0}.get(v, v + 1)
    if isinstance(v, float):
        return 1.0 if v == 0.0 else 0.0 if v == 1.0 else v * 2
    return None


def _points(tree: ast.AST) -> list[tuple[ast.AST, str, int]]:
    """Every mutable place of the module: (node, what, line), in a stable walk order."""
    docs = _docstring_ids(tree)
    annotations: set[int] = set()
    for node in ast.walk(tree):  # constants inside annotations change nothing at run time
        for ann in [getattr(node, "annotation", None), getattr(node, "returns", None)]:
            if ann is not None:
                annotations.update(id(n) for n in ast.walk(ann))
    out: list[tuple[ast.AST, str, int]] = []
    for node in ast.walk(tree):
        if id(node) in annotations:
            continue
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _CMP_SWAP:
                    out.append((node, f"cmp{i}: {_SYM[type(op)]} -> {_SYM[_CMP_SWAP[type(op)]]}", line))
        elif isinstance(node, ast.BoolOp):
            other = "or" if isinstance(node.op, ast.And) else "and"
            out.append((node, f"boolop: {_SYM[type(node.op)]} -> {other}", line))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            other = "-" if isinstance(node.op, ast.Add) else "+"
            out.append((node, f"binop: {_SYM[type(node.op)]} -> {other}", line))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((node, "not: dropped", line))
        elif isinstance(node, ast.Constant) and id(node) not in docs:
            new = _number_change(node.value)
            if new is not None:
                out.append((node, f"const: {node.value!r} -> {new!r}", line))
        elif isinstance(node, ast.If) and any(isinstance(s, (ast.Return, ast.Raise, ast.Continue))
                                              for s in node.body):
            out.append((node, "guard: condition -> False", line))
    return out


def mutants_of(module: str, root: Path = ROOT) -> list[Mutant]:
    """Every mutant of one module (path under ``pytest_gpuperf/`` of ``root``)."""
    tree = ast.parse((root / PKG / module).read_text())
    return [Mutant(module, i, line, what) for i, (_, what, line) in enumerate(_points(tree))]


def mutated_source(m: Mutant, original: str) -> str:
    """The module's text ``original`` with the mutant applied (unparsed from the changed tree)."""
    tree = ast.parse(original)
    node, what, _ = _points(tree)[m.index]
    kind = what.split(":", 1)[0]
    if kind.startswith("cmp"):
        i = int(kind[3:])
        node.ops[i] = _CMP_SWAP[type(node.ops[i])]()
    elif kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "binop":
        node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
    elif kind == "not":
        node.op = ast.UAdd()  # +x of a bool is the same truth value as x: "not" dropped
        node.operand = ast.Call(ast.Name("bool", ast.Load()), [node.operand], [])
    elif kind == "const":
        node.value = _number_change(node.value)
    elif kind == "guard":
        node.test = ast.Constant(False)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def _copy_tree(dest: Path) -> None:
    """A private copy of what the tests need: the package, the tests, the repository's tools and config files."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in (PKG, "tests", "examples", "docs", "scripts", "tools"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, dest / name, ignore=ignore, symlinks=True)
    if (ROOT / "results").exists():  # the committed runs the tests read (inside the copy: tests resolve them)
        shutil.copytree(ROOT / "results", dest / "results", ignore=ignore)
    for name in ("conftest.py", "pyproject.toml", "setup.py", "CONTRIBUTING.md", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)


def run_mutant(m: Mutant, work: Path, timeout: float) -> tuple[str, float]:
    """('killed by <test>' | 'survived' | 'timeout' | 'error', seconds) of one mutant in the private copy
    ``work`` (the test that killed it is kept: a kill by a test that can fail on a loaded host is worth a look)."""
    target = work / PKG / m.module
    original = target.read_text()
    start = time.monotonic()
    try:
        target.write_text(mutated_source(m, original))
        env = dict(os.environ, PYTHONPATH=str(work), PYTHONDONTWRITEBYTECODE="1")
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
               *TESTS[m.module]]
        try:
            proc = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", time.monotonic() - start
        if proc.returncode == 0:
            return "survived", time.monotonic() - start
        if proc.returncode in (1, 2, 3):  # failed, interrupted (import error at collection), internal error
            failed = [ln.split(" - ")[0] for ln in proc.stdout.decode(errors="replace").splitlines()
                      if ln.startswith(("FAILED ", "ERROR "))]
            return "killed" + (f" by {failed[0].split(' ', 1)[1]}" if failed else ""), time.monotonic() - start
        return "error", time.monotonic() - start
    finally:
        target.write_text(original)


def _pick(modules: list[str], root: Path, sample: int | None, seed: int) -> list[Mutant]:
    """The mutants of ``modules`` (read under ``root``); with ``sample``, a stratified random sample: each
    module its share, at least three (a small module still gets a look)."""
    per_module = {mod: mutants_of(mod, root) for mod in modules}
    mutants = [m for mod in modules for m in per_module[mod]]
    if sample is None or sample >= len(mutants):
        return mutants
    rng = random.Random(seed)
    picked = []
    for mod in modules:
        share = max(3, round(sample * len(per_module[mod]) / len(mutants)))
        picked += rng.sample(per_module[mod], min(share, len(per_module[mod])))
    return sorted(picked, key=lambda m: (m.module, m.index))


def _outcomes(report: Path) -> list[tuple[str, str]]:
    """(label, outcome) of every mutant an earlier report lists, in its order (its "every mutant:" section)."""
    out: list[tuple[str, str]] = []
    lines = report.read_text().splitlines()
    start = lines.index("every mutant:") + 1
    for line in lines[start:]:
        label, _, rest = line.strip().rpartition(": ")
        out.append((label, rest.rsplit(" (", 1)[0]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", action="append", help="a module under pytest_gpuperf/ (repeatable; default all "
                    "of " + ", ".join(TESTS) + ")")
    ap.add_argument("--sample", type=int, help="run a random sample of this many mutants")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant before it counts as killed")
    ap.add_argument("--report", type=Path, default=ROOT / "results" / "mutation" / "report.txt")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--rerun", type=Path, metavar="REPORT",
                    help="run only the survivors of an earlier report (same modules, same code) against the tests "
                         "as they are now, and write that report with their new outcomes (--report)")
    args = ap.parse_args(argv)
    modules = args.module or list(TESTS)
    unknown = [m for m in modules if m not in TESTS]
    if unknown:
        ap.error(f"no test mapping for {unknown}; known: {list(TESTS)}")
    with tempfile.TemporaryDirectory(prefix="gpuperf-mutants-") as tmp:
        work = Path(tmp)
        _copy_tree(work)  # a snapshot: later edits of the working tree change nothing in this run
        mutants = _pick(modules, work, args.sample, args.seed)
        earlier: list[tuple[Mutant, str]] = []
        if args.rerun is not None:  # the same sample (same code, seed and size): the report lists it in order
            by_label: dict[str, list[str]] = {}
            for label, o in _outcomes(args.rerun):
                by_label.setdefault(label, []).append(o)
            if sorted(by_label) != sorted({m.label() for m in mutants}) or \
                    sum(map(len, by_label.values())) != len(mutants):
                print(f"{args.rerun} is not a report of this sample of this code (--sample/--seed/--module, or "
                      "the modules changed since)", file=sys.stderr)
                return 2
            earlier = [(m, by_label[m.label()].pop(0)) for m in mutants]  # a repeated label: in report order
            mutants = [m for m, o in earlier if o == "survived"]
        if args.list:
            for m in mutants:
                print(m.label())
            return 0
        env = dict(os.environ, PYTHONPATH=str(work), PYTHONDONTWRITEBYTECODE="1")
        files = sorted({f for m in mutants for f in TESTS[m.module]})  # the unmutated code must pass them first
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=work,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        flaky: list[str] = []
        if proc.returncode != 0:  # once more, only what failed: a test that then passes is flaky on this host
            failed = [ln.split(" - ")[0].split(" ", 1)[1] for ln in proc.stdout.splitlines()
                      if ln.startswith(("FAILED ", "ERROR "))]
            again = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *failed],
                                   cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if not failed or again.returncode != 0:
                print(proc.stdout[-3000:], file=sys.stderr)
                print(f"the unmutated code fails {' '.join(failed or files)}: fix that first (every mutant would "
                      "read killed)", file=sys.stderr)
                return 2
            flaky = failed
        args.flaky = flaky
        # with --rerun, the earlier report's kills keep their outcome
        results: list[tuple[Mutant, str, float]] = [(m, o, 0.0) for m, o in earlier if o != "survived"]
        for i, m in enumerate(mutants, 1):
            outcome, secs = run_mutant(m, work, args.timeout)
            results.append((m, outcome, secs))
            print(f"[{i}/{len(mutants)}] {secs:6.1f}s {m.label()}: {outcome}", file=sys.stderr, flush=True)
            _write_report(args, results, len(results) - i + len(mutants))
    _write_report(args, results, len(results))
    killed = sum(o.startswith("killed") or o == "timeout" for _, o, _ in results)
    print(f"killed {killed} of {len(results)}; report: {args.report}")
    return 0


def _write_report(args: argparse.Namespace, results: list[tuple["Mutant", str, float]], total: int) -> None:
    """The report so far (rewritten after every mutant, so a long run that is stopped keeps its findings)."""
    killed = sum(o.startswith("killed") or o == "timeout" for _, o, _ in results)
    errors = [(m, o) for m, o, _ in results if o == "error"]
    survivors = [m for m, o, _ in results if o == "survived"]
    done = len(results)
    lines = [f"mutation check: {done} of {total} mutants run (seed {args.seed}, sample {args.sample}, "
             f"modules {', '.join(args.module or ['all'])})"
             + (f"; the survivors of {args.rerun} run again against the tests as they are now" if args.rerun else ""),
             f"killed {killed} of {done} ({(killed / done if done else 0):.1%}); survivors {len(survivors)}; "
             f"errors {len(errors)}", ""]
    per: dict[str, list[int]] = {}
    for m, o, _ in results:
        k = per.setdefault(m.module, [0, 0])
        k[0] += o.startswith("killed") or o == "timeout"
        k[1] += 1
    lines += [f"  {mod}: {k} of {n} killed" for mod, (k, n) in sorted(per.items())]
    flaky = getattr(args, "flaky", [])
    if flaky:
        lines += ["", "tests that failed once on the unmutated code, then passed (a kill by one of them is doubtful):"]
        lines += [f"  {t}" for t in flaky]
        doubtful = [m for m, o, _ in results if any(o == f"killed by {t}" for t in flaky)]
        lines += [f"  kills by them: {len(doubtful)}"]
    lines += ["", "survivors:"] + [f"  {m.label()}" for m in survivors]
    if errors:
        lines += ["", "errors (the test run ended oddly):"] + [f"  {m.label()} ({o})" for m, o in errors]
    lines += ["", "every mutant:"] + [f"  {m.label()}: {o} ({secs:.0f} s)"
                                      for m, o, secs in sorted(results, key=lambda r: (r[0].module, r[0].index))]
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
