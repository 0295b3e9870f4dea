"""Tables of docs/tuning.md: each run's strategy means and per-kernel outcome, the thesis tuner against the
ranked final pass per kernel, and Dao's tuner comparison (ch. 3.6.1–3.6.2) per GPU, with and without the
kernels the workload tuner transformed, beside each of his GPUs' figures.
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping

from pytest_gpuperf.schemas.results_doc import ResultsDocument

from .registry import Inputs
from .runfile import Run

ORDER = ["dao", "dao_ranked", "lim_static", "lim_rules", "random", "kt_random_sample", "kt_greedy_ils", "kt_mls",
         "kt_pso", "kt_firefly_algorithm", "kt_genetic_algorithm", "kt_simulated_annealing", "kt_diff_evo",
         "kt_dual_annealing", "kt_basinhopping"]

#: Dao, thesis §3.6.1–3.6.2 (54 kernels; quality = time at the chosen size / best time of the original
#: kernel; cost = profiled kernel time / an exhaustive search's). Below 1: faster than the original's
#: optimum, through the workload tuner's index-space transformation.
DAO = [("GTX 580 (Fermi)", "0.962 (1.04× faster than the optimum)", "–"),
       ("GTX Titan (Kepler)", "0.980 (1.02× faster)", "–"),
       ("GTX Titan X (Maxwell)", "1.06", "3 % (Fig. 3.11)")]


def _fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "–"
    return f"{100 * v:.1f} %" if pct else f"{v:.3f}"


def kernels_of(run: Run) -> list[str]:
    return sorted({n.split(".")[1] for n in run.metrics if n.startswith("tuning.") and n.endswith(".optimum_us")})


def transformed(run: Run, strategy: str = "dao") -> list[str]:
    """Kernels whose pick the workload tuner transformed (``wl:`` shapes) in this run."""
    return [k for k in kernels_of(run)
            if any(str(p).startswith("wl:") for p in run.info(f"tuning.{k}.{strategy}.quality").get("picks", []))]


def summary(inp: Inputs) -> list[str]:
    """One run's strategy means: quality, evaluations, host time, kernel time (thesis §3.6.2)."""
    run = inp.run()
    out = []
    lam = run.get("tuning.lambda0")
    if lam:
        info = lam.get("info") or {}
        out += [f"λ0 = {float(lam['value']):.3f} (first contention at STRIDE {info.get('stride_at')}; coalesced rate "
                f"{info.get('coalesced_GBps')} GB/s). Thesis Table 3.3: GTX 580 0.52, GTX Titan 0.62, GTX Titan X 0.88.", ""]
    out += ["| strategy | mean quality (time / optimum) | mean cost (evaluations) | mean cost (host tuning time) "
            "| mean cost (kernel time, thesis §3.6.2) |", "| --- | --- | --- | --- | --- |"]
    for s in ORDER:
        q = run.value(f"tuning.mean.{s}.quality")
        if q is None:
            continue
        out.append(f"| {s} | {_fmt(q)} | {_fmt(run.value(f'tuning.mean.{s}.cost'), True)} | "
                   f"{_fmt(run.value(f'tuning.mean.{s}.time_cost'), True)} | "
                   f"{_fmt(run.value(f'tuning.mean.{s}.device_cost'), True)} |")
    out += ["| *Dao thesis, GTX Titan X, 54 kernels* | *1.06* | – | – | *3 % (Fig. 3.11)* |",
            "| *OpenTuner at equal budget (Dao thesis, GTX Titan X)* | *≈ 1.15 × Dao's* | | | |"]
    mq = run.info("tuning.mean.dao.quality")
    if mq.get("missing"):
        out += ["", f"Means over {mq.get('kernels')} kernels; not tuned in this run (time budget): {', '.join(mq['missing'])}."]
    return out


def _space(run: Run, k: str, pr: Mapping[str, Any]) -> str:
    lim = run.info(f"tuning.{k}.space")
    li = lim.get("limits", {})
    # registers: the driver's count; "?" where the run could not read one — never the 0 placeholder
    regs = li.get("regs_driver", "?" if "unknown" in str(li.get("regs_from", "")) else li.get("regs", "?"))
    return (f"{pr.get('space', '–')} ({lim.get('max_total', '?')} / {li.get('kernel_max_default', '?')}; {regs})"
            if lim else str(pr.get("space", "–")))


def per_kernel(inp: Inputs) -> list[str]:
    """One run's outcome per kernel: space, optimum, picks, quality and cost of each strategy family."""
    run = inp.run()
    out = ["| kernel | space (max group: kernel / default build; regs) | optimum (µs) | optimum shape | dao pick "
           "| dao quality | dao cost: evals / kernel time | pruned: workload / NCF / concurrency "
           "| lim_static q / cost | lim_rules q / cost (bound) | random q | best KT q (strategy) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in kernels_of(run):
        opt = run.get(f"tuning.{k}.optimum_us")
        dq = run.info(f"tuning.{k}.dao.quality")
        pr = dq.get("pruning", {})
        parts = [_fmt(run.value(f"tuning.{k}.dao.pruned.{f}"), True) for f in ("workload", "ncf", "concurrency")]
        kt = [(run.value(f"tuning.{k}.{s}.quality"), s) for s in ORDER if s.startswith("kt_")]
        kt = [(q, s) for q, s in kt if q is not None]
        best_kt = min(kt) if kt else (None, "kt_")
        lr = run.info(f"tuning.{k}.lim_rules.quality").get("pruning", {})
        out.append(f"| {k} | {_space(run, k, pr)} | {float(opt['value']):.1f} | {(opt.get('info') or {}).get('config', '')} | "
                   f"{', '.join(dq.get('picks', []))} | {_fmt(run.value(f'tuning.{k}.dao.quality'))} | "
                   f"{_fmt(run.value(f'tuning.{k}.dao.cost'), True)} / {_fmt(run.value(f'tuning.{k}.dao.device_cost'), True)} | "
                   f"{' / '.join(parts)} | "
                   f"{_fmt(run.value(f'tuning.{k}.lim_static.quality'))} / {_fmt(run.value(f'tuning.{k}.lim_static.cost'), True)} | "
                   f"{_fmt(run.value(f'tuning.{k}.lim_rules.quality'))} / {_fmt(run.value(f'tuning.{k}.lim_rules.cost'), True)} "
                   f"({lr.get('bound', '–')}) | {_fmt(run.value(f'tuning.{k}.random.quality'))} | {_fmt(best_kt[0])} ({best_kt[1][3:]}) |")
    return out


def _mean(run: Run, kernels: list[str], metric: str) -> float | None:
    vals = [run.value(f"tuning.{k}.{metric}") for k in kernels]
    vals = [v for v in vals if v is not None]
    return statistics.fmean(vals) if vals else None


def dao_per_gpu(inp: Inputs) -> list[str]:
    """Dao's tuner per GPU (his rows) and per run of ours: mean quality over all kernels and without the
    kernels the workload tuner transformed, and the kernel-time cost; role ``runs`` (option
    ``strategy=dao|dao_ranked``, default dao)."""
    strategy = inp.option("strategy", "dao")
    out = ["| GPU | protocol | kernels | mean quality, all kernels | transformed by the workload tuner "
           "| mean quality without them | kernel-time cost, mean per kernel | summed over the set |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for gpu, q, cost in DAO:
        out.append(f"| {gpu} | Dao thesis §3.6.1–3.6.2 (his tuner, exhaustive over the original kernel) | 54 | {q} "
                   f"| not separated | – | {cost} | – |")
    for run in inp.runs("runs"):
        ks = [k for k in kernels_of(run) if run.get(f"tuning.{k}.{strategy}.quality") is not None]
        wl = transformed(run, strategy)
        rest = [k for k in ks if k not in wl]
        name = str(run.device.get("name", "?")).replace("NVIDIA ", "")
        out.append(f"| {name} (`{run.stem}`) | this suite, `{strategy}` (exhaustive over the original as reference) | "
                   f"{len(ks)} | {_fmt(_mean(run, ks, f'{strategy}.quality'))} | {', '.join(f'`{k}`' for k in wl) or 'none'} | "
                   f"{_fmt(_mean(run, rest, f'{strategy}.quality'))} ({len(rest)}) | "
                   f"{_fmt(run.value(f'tuning.mean.{strategy}.device_cost'), True)} | "
                   f"{_fmt(run.value(f'tuning.total.{strategy}.device_cost'), True)} |")
    return out


def _cell(runs: list[Run], fn: Any) -> str:
    vals = [fn(r) for r in runs]
    return vals[0] if len(set(vals)) == 1 else " / ".join(vals)


def _evals(r: Run, k: str, s: str) -> str:
    c = r.info(f"tuning.{k}.{s}.evals.concurrency").get("evaluations")
    f = r.info(f"tuning.{k}.{s}.evals.final").get("evaluations")
    return f"{c} + {f} = {_fmt(r.value(f'tuning.{k}.{s}.cost'), True)}"


def ranked(inp: Inputs) -> list[str]:
    """The thesis tuner against the ranked final pass per kernel; cells run 1 / run 2 where they differ."""
    runs = inp.runs("runs")
    out = ["| kernel | space | dao: evaluations (concurrency + final) | dao: kernel time | dao: quality | dao_ranked: "
           "evaluations (concurrency + final) | dao_ranked: kernel time | dao_ranked: quality |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in kernels_of(runs[0]):
        if runs[0].get(f"tuning.{k}.dao_ranked.quality") is None:
            continue
        cells = [_cell(runs, lambda r: str(r.info(f"tuning.{k}.dao.evals.final").get("space", "–")))]
        for s in ("dao", "dao_ranked"):
            cells += [_cell(runs, lambda r: _evals(r, k, s)),
                      _cell(runs, lambda r: _fmt(r.value(f"tuning.{k}.{s}.device_cost"), True)),
                      _cell(runs, lambda r: _fmt(r.value(f"tuning.{k}.{s}.quality")))]
        out.append(f"| `{k}` | " + " | ".join(cells) + " |")
    return out


def means(inp: Inputs) -> list[str]:
    """Means over the kernels per strategy (option ``strategies=a,b``); cells run 1 / run 2 where they differ."""
    runs = inp.runs("runs")
    out = ["| strategy | quality | evaluations | kernel time, mean per kernel | kernel time, summed over the set |",
           "| --- | --- | --- | --- | --- |"]
    for s in inp.option("strategies", "dao,dao_ranked,kt_pso,kt_random_sample").split(","):
        if all(r.get(f"tuning.mean.{s}.quality") is None for r in runs):
            continue
        out.append(f"| {s} | " + " | ".join(_cell(runs, lambda r: _fmt(r.value(f"tuning.{m}"), pct)) for m, pct in (
            (f"mean.{s}.quality", False), (f"mean.{s}.cost", True), (f"mean.{s}.device_cost", True),
            (f"total.{s}.device_cost", True))) + " |")
    return out


def _own_rule(run: Run) -> str:
    rules = {str(run.info(f"tuning.{k}.dao_ranked.quality").get("pruning", {}).get("rule", "")) for k in kernels_of(run)}
    rules.discard("")
    return ", ".join(sorted(rules)) or "walk"  # runs before the chain rule recorded no rule: they walked


def replay(inp: Inputs) -> list[str]:
    """Each run's saved points replayed under both final-pass rules (``tuning.replay``): the ranked pass's
    means, ``matvec_row``'s pick, ``blur1d``'s kernel time, and the kernels that miss the targets."""
    from pytest_gpuperf.tuning import replay as rp  # noqa: PLC0415
    out = ["| run (its own rule) | replayed with | mean quality | evaluations | kernel time, mean per kernel | "
           "`matvec_row` pick (quality) | `blur1d` kernel time | MISSED (1-D and 2-D ≥ 200 targets) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for run in inp.runs("runs"):
        doc = ResultsDocument.from_json(dict(run.doc), run.path)  # the saved run, read as a results document
        for rule in ("walk", "bracket"):
            ranked = [b for _, b in rp.replay_results(doc, rule=rule)]
            if not ranked:
                continue
            by = {b.kernel: b for b in ranked}
            mv, bl = by.get("matvec_row"), by.get("blur1d")
            missed = []
            for b in sorted(ranked, key=lambda b: b.kernel):
                v = b.verdict()
                if "quality" in v:
                    missed.append(f"`{b.kernel}` {b.quality:.3f}×")
                if "kernel time" in v:
                    missed.append(f"`{b.kernel}` {100 * b.device_cost:.1f} %")
            n = len(ranked)
            dev = str(run.device.get("name", "?")).replace("NVIDIA ", "").split()[0]
            out.append(f"| {dev} `{run.stem}` ({_own_rule(run)}) | {rule} | {sum(b.quality for b in ranked) / n:.3f} | "
                       f"{100 * sum(b.cost for b in ranked) / n:.1f} % | {100 * sum(b.device_cost for b in ranked) / n:.1f} % | "
                       f"{f'{mv.pick} ({mv.quality:.3f})' if mv else '–'} | {f'{100 * bl.device_cost:.1f} %' if bl else '–'} | "
                       f"{'; '.join(missed) or 'none'} |")
    return out


TABLES = {"tuning-replay": replay, "tuning-summary": summary, "tuning-kernels": per_kernel, "tuning-dao-per-gpu": dao_per_gpu,
          "tuning-ranked": ranked, "tuning-means": means}
