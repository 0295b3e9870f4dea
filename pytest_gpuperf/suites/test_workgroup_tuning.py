"""Work-group-size auto-tuning (Dao thesis ch. 3; Lim dissertation ch. III) against exhaustive search,
random search and Kernel Tuner's strategies, on 12 benchmark kernels.

Per kernel (``tuning.<kernel>.*``):
* ``optimum_us`` — exhaustive optimum of the original kernel (device time);
* ``<strategy>.quality`` — time of the strategy's pick / exhaustive optimum, both re-timed together
  (interleaved) at the end; < 1 is possible for ``dao`` (its workload transformation changes the kernel);
* ``<strategy>.cost`` — evaluations / exhaustive evaluations; host seconds spent compiling+timing the
  visited configurations / exhaustive's in ``device_cost``'s ``info["host_time_cost"]`` (gated as the mean
  over kernels, ``mean.<strategy>.time_cost``: one configuration's host time is a single wall-clock reading);
* ``<strategy>.device_cost`` — the thesis' tuning cost (Dao §3.6.2): kernel execution time of one run
  of each configuration visited / the same sum over the whole space (exhaustive search);
* ``dao.pruned.<filter>`` — fraction of the space left out after each filter;
* ``space`` — size of the space, with the work-group limits that bound it (``limits.py``) in its info.
Random search and Kernel Tuner's strategies get the thesis tuner's number of evaluations (at least 3)
and are averaged over seeds. ``tuning.mean.<strategy>.*`` averages over the kernels tuned earlier in the
session (last test; the set is the metric's identity, so a subset never gates against all kernels).
Every strategy's pick is run once on fresh random inputs and compared with NumPy.
The exhaustive table is stored in the user's cache directory per kernel source, device, driver and space
(``tuning.reference``); a later run's strategies replay it and only the picks and the cached optimum are
timed again (together, as always), so every ``quality`` and ``optimum_us`` is a time of this run
(``info["reference"]`` of ``optimum_us`` says which); ``--gpuperf-retune`` times the whole space again.
"""

from __future__ import annotations

import time
from statistics import mean

import pytest

from pytest_gpuperf.models import aggregate
from pytest_gpuperf.tuning import ktsim, reference, replay
from pytest_gpuperf.tuning.evaluate import Ledger
from pytest_gpuperf.tuning.fixtures import tuning_options
from pytest_gpuperf.util.clock import session_elapsed
from pytest_gpuperf.tuning.kernels import BENCHMARKS
from pytest_gpuperf.tuning.strategies import dao, dao_ranked, exhaustive, lim_rules, lim_static, random_search
from pytest_gpuperf.tuning.tuner import calibration, context

# Kernel Tuner 1.5.0's diff_evo is left out: on some search paths it calls ``numpy.shuffle`` (which does
# not exist) and raises, and since the path depends on the measured times, whether it yields a result
# changes from run to run — the gate would then report its metrics as missing at random (docs/tuning.md).
KT_STRATEGIES = ("random_sample", "greedy_ils", "genetic_algorithm", "simulated_annealing", "pso", "mls",
                 "firefly_algorithm", "dual_annealing", "basinhopping")
SEEDS = (1, 2, 3)
INPUT_SEED = 11  # the inputs every configuration is timed on
THESIS = "Dao thesis §3.6.1-3.6.2: 1.06x optimum at 3% of exhaustive cost on GTX Titan X"
# Wall-clock budget (--gpuperf-tuning-budget, from the session's start) on GPUs: the session script kills
# pytest at GPUPERF_TIMEOUT and then no results file is written at all, so kernels beyond the budget are
# skipped (with the reason).
OWN = ("exhaustive", "dao", "dao_ranked", "lim_static", "lim_rules")


def _tol(device) -> dict[str, float]:
    # quality/cost are ratios of timings: run-to-run noise of two medians, plus picks that flip between
    # near-equal configurations. CPU devices share cores with other jobs.
    # On CPU devices one noisy point in the exhaustive pass can move the "optimum" by 30 %+ (PoCL
    # shares two cores with other jobs), so there the gate only catches gross failures.
    return {"rel": 3.0, "abs": 0.5} if device.info.is_cpu else {"rel": 0.08, "abs": 0.02}


def _search_tol(device) -> dict[str, float]:
    # On a shared 2-core CPU a stochastic search's pick on a 16-point space was seen 4.2x off the
    # optimum in one run and at it in four others: per kernel it only catches a broken strategy there.
    return {"rel": 5.0, "abs": 0.5} if device.info.is_cpu else {"rel": 0.25, "abs": 0.05}


def test_lambda0_calibration(gpu_device, gpuperf_record):
    """λ0 by the thesis' micro-benchmark (needs an SM model: NVIDIA devices)."""
    cal = calibration(gpu_device)
    if cal is None:
        pytest.skip(f"{gpu_device.info.name} has no SM occupancy model (not an NVIDIA device): λ0 is not defined")
    table = {str(s): [[round(o, 3), round(t, 2), round(lam, 3)] for o, t, lam in rows] for s, rows in cal.table.items()}
    value = cal.lambda0 if cal.lambda0 != float("inf") else 1.0
    gpuperf_record("tuning.lambda0", value, "ratio", better="exact", tolerance={"abs": 0.25},
                   info={"stride_at": cal.stride_at, "infinite": cal.lambda0 == float("inf"),
                         "coalesced_GBps": round(cal.bytes_per_s / 1e9, 1), "table": table,
                         "thesis": "Table 3.3: GTX 580 0.52, GTX Titan 0.62, GTX Titan X 0.88, FirePro ∞"})


@pytest.mark.parametrize("bench", BENCHMARKS, ids=[b.name for b in BENCHMARKS])
def test_tune(gpu_device, gpuperf_record, bench, request, tuning_summaries):
    t0 = time.perf_counter()
    opts = tuning_options(request.config)
    if opts.budget_s and session_elapsed(request.config) > opts.budget_s:
        pytest.skip(f"--gpuperf-tuning-budget={opts.budget_s:g} s spent before {bench.name}; raise it to tune "
                    "every kernel")
    ctx = context(gpu_device, bench, seed=INPUT_SEED, probe_limit=opts.probe_limit)
    ev = ctx.ev
    ref = reference.begin(ctx, INPUT_SEED, retune=opts.retune)  # a stored table: the strategies replay it
    ex = exhaustive(ctx)
    d = dao(ctx)
    dr = dao_ranked(ctx)
    ls = lim_static(ctx)
    lr = lim_rules(ctx)
    budget = max(3, len(d.ledger.visited))
    picks: dict[str, list] = {"exhaustive": [(ex.best, ex.ledger.visited)], "dao": [(d.best, d.ledger.visited)],
                              "dao_ranked": [(dr.best, dr.ledger.visited)],
                              "lim_static": [(ls.best, ls.ledger.visited)], "lim_rules": [(lr.best, lr.ledger.visited)]}
    picks["random"] = [(o.best, o.ledger.visited) for o in (random_search(ctx, budget, s) for s in SEEDS)]
    kt_errors = {}
    for strat in KT_STRATEGIES:
        runs = []
        for s in SEEDS:
            try:
                runs.append(ktsim.run_strategy(ev, ctx.space, strat, budget, s))
            except Exception as exc:  # noqa: BLE001 - one failing KT strategy must not hide the others
                kt_errors[f"{strat}/seed{s}"] = f"{type(exc).__name__}: {exc}"[:200]
        if runs:
            picks[f"kt_{strat}"] = runs
    reference.finish(ref, ctx, ex.best)  # a table timed now is stored for the next run
    chosen = sorted({c for runs in picks.values() for c, _ in runs})
    # Correctness of every configuration a strategy returned, on fresh random inputs.
    for i, c in enumerate(chosen):
        ev.verify(c, seed=1000 + i)
    times = ev.remeasure(chosen)
    opt = times[ex.best]
    n_ex, t_ex = ev.cost(ex.ledger)
    d_ex = ev.device_cost(ex.ledger)
    tol = _tol(gpu_device)
    summary: dict[str, dict[str, float]] = {}
    gpuperf_record(f"tuning.{bench.name}.optimum_us", opt * 1e6, "us", better="lower",
                   # CPU devices (CI) share two cores with other jobs: 2x swings were seen between runs
                   tolerance={"rel": 3.0} if gpu_device.info.is_cpu else None,
                   info={"config": ex.best.label(), "space": len(ctx.space), "reference": ref.info()})
    # Every configuration's measurement, so a change of a strategy can be replayed on this run's numbers
    # (tuning.replay) before it costs device time.
    gpuperf_record(f"tuning.{bench.name}.space", len(ctx.space), "configs", better="exact", tolerance={"abs": 0},
                   info={"limits": ctx.kernel_limit.info, "max_total": ctx.limits.max_total,
                         "max_dims": list(ctx.limits.max_dims), "build_options": list(ev.extra_options),
                         "points": replay.points(ctx),
                         # the (time, energy) Pareto front where the points carry energy (tuning.pareto)
                         **({"pareto": [c.label() for c in ev.front()]} if ev.front() else {})})
    for strat, runs in picks.items():
        q = mean(times[c] / opt for c, _ in runs)
        ev_costs = [ev.cost(Ledger(list(v))) for _, v in runs]
        cost = mean(n for n, _ in ev_costs) / n_ex
        tcost = mean(t for _, t in ev_costs) / t_ex
        d_s = mean(ev.device_cost(Ledger(list(v))) for _, v in runs)
        dcost = d_s / d_ex
        summary[strat] = {"quality": q, "cost": cost, "time_cost": tcost, "device_cost": dcost,
                          "device_s": d_s, "device_ex_s": d_ex}
        info = {"picks": [c.label() for c, _ in runs], "budget": budget if strat not in OWN else None}
        if strat == "dao":
            info["pruning"] = d.pruning
            info["kernel_tuner_errors"] = kt_errors  # strategies of Kernel Tuner 1.5 that raised
        if strat == "dao_ranked":
            info["pruning"] = dr.pruning
        if strat == "lim_static":
            info["pruning"] = ls.pruning
        if strat == "lim_rules":
            info["pruning"] = lr.pruning
        # Search strategies follow the measured values, so one noisy point changes their path (and
        # the dao budget they get): per kernel they are gated loosely; the means carry the comparison.
        searching = strat not in OWN
        qtol = _search_tol(gpu_device) if searching else tol
        ctol = ({"rel": 1.5, "abs": 0.5} if gpu_device.info.is_cpu else {"rel": 0.6, "abs": 0.15}) if searching \
            else ({"rel": 1.0, "abs": 0.2} if gpu_device.info.is_cpu else {"rel": 0.25, "abs": 0.05})
        gpuperf_record(f"tuning.{bench.name}.{strat}.quality", q, "ratio", better="lower", tolerance=qtol, info=info)
        if strat != "exhaustive":
            gpuperf_record(f"tuning.{bench.name}.{strat}.cost", cost, "ratio", better="lower", tolerance=ctol)
            # The host-seconds ratio (compile + timing of each visited configuration, Evaluator.cost) is
            # kept beside the thesis' cost, not gated per kernel: each configuration's host time is one
            # wall-clock reading, so a one-off host stall lands on whichever configuration was being
            # built, and one kernel's ratio can jump several-fold between unchanged runs. The mean over
            # kernels (tuning.mean.*.time_cost) dilutes one stall and stays gated.
            gpuperf_record(f"tuning.{bench.name}.{strat}.device_cost", dcost, "ratio", better="lower",
                           tolerance=ctol, info={"definition": "Dao §3.6.2: Σ kernel time of the visited "
                                                 "configurations / Σ over the whole space",
                                                 "host_time_cost": tcost})
    space = len(ctx.space)
    # Where the thesis tuner's evaluations go (its final pass is most of its cost): per stage,
    # as a fraction of the space; gated only where the baseline runs agree (a contention decision that
    # flips between runs moves them).
    for strat, out in (("dao", d), ("dao_ranked", dr)):
        for stage, n in out.pruning["evaluations"].items():
            gpuperf_record(f"tuning.{bench.name}.{strat}.evals.{stage}", n / space, "fraction", better="lower",
                           tolerance={"abs": 1.0 / space}, info={"gate": "if-stable", "evaluations": n,
                                                                  "space": space})
    for stage in ("after_workload", "after_ncf", "after_concurrency"):
        if stage in d.pruning:
            gpuperf_record(f"tuning.{bench.name}.dao.pruned.{stage[6:]}", 1.0 - d.pruning[stage] / space, "fraction",
                           better="higher", tolerance={"abs": 0.05})
    if "after_static" in ls.pruning:
        gpuperf_record(f"tuning.{bench.name}.lim_static.pruned.static", 1.0 - ls.pruning["after_static"] / space,
                       "fraction", better="higher", tolerance={"abs": 0.05})
    if "after_rules" in lr.pruning:
        gpuperf_record(f"tuning.{bench.name}.lim_rules.pruned.rules", 1.0 - lr.pruning["after_rules"] / space,
                       "fraction", better="higher", tolerance={"abs": 0.05}, info={"pruning": lr.pruning})
    tuning_summaries.setdefault(gpu_device.info.spec, {})[bench.name] = summary
    print(f"\n{bench.name}: space {space}, optimum {ex.best.label()} {opt * 1e6:.1f} us, dao {d.best.label()} "
          f"q={summary['dao']['quality']:.3f} cost={summary['dao']['cost']:.3f} pruning={d.pruning} "
          f"kt_errors={kt_errors} ({time.perf_counter() - t0:.1f} s)")
    # Some of Kernel Tuner's population strategies fail on very small (CPU-sized) spaces; that is
    # reported in the record, but every strategy failing means the replay itself is broken.
    assert len(kt_errors) < len(KT_STRATEGIES) * len(SEEDS), f"every Kernel Tuner strategy failed: {kt_errors}"


def test_tuning_means(gpu_device, gpuperf_record, tuning_summaries):
    """Means over the kernels tuned earlier in this session, each strategy's over the kernels it has a
    result for. That set is the metric's identity (``models.aggregate.over``): a ``-k`` subset or a kernel
    skipped by the budget reads ``incomparable`` against a baseline made over all kernels, never
    ``regressed`` or ``improved``. Skips when no ``test_tune`` case ran before it in this session."""
    res = tuning_summaries.get(gpu_device.info.spec, {})
    if not res:
        pytest.skip("no kernel was tuned earlier in this session on this device: the means are over the "
                    "test_tune cases that ran (select some of them with this test)")
    strategies = sorted({s for r in res.values() for s in r})
    tol = _tol(gpu_device)
    for strat in strategies:
        kernels = sorted(k for k, r in res.items() if strat in r)
        rows = [res[k][strat] for k in kernels]
        scope = aggregate.over(kernels)
        missing = sorted(b.name for b in BENCHMARKS if b.name not in kernels)
        q = mean(r["quality"] for r in rows)
        mtol = tol if strat in OWN else (
            {"rel": 1.0, "abs": 0.3} if gpu_device.info.is_cpu else {"rel": 0.1, "abs": 0.03})
        gpuperf_record(f"tuning.mean.{strat}.quality", q, "ratio", better="lower", tolerance=mtol, identity=scope,
                       info={"kernels": len(rows), "missing": missing, "thesis": THESIS,
                             "target": "dao ≤ 1.03 at ≤ 5% cost"})
        if strat != "exhaustive":
            gpuperf_record(f"tuning.mean.{strat}.cost", mean(r["cost"] for r in rows), "ratio", better="lower",
                           tolerance={"rel": 0.3, "abs": 0.05}, identity=scope)
            gpuperf_record(f"tuning.mean.{strat}.time_cost", mean(r["time_cost"] for r in rows), "ratio",
                           better="lower", tolerance={"rel": 2.0, "abs": 0.3} if gpu_device.info.is_cpu
                           else {"rel": 0.6, "abs": 0.1}, identity=scope, info={"host_timed": True})
            gpuperf_record(f"tuning.mean.{strat}.device_cost", mean(r["device_cost"] for r in rows), "ratio",
                           better="lower", tolerance={"rel": 0.3, "abs": 0.05}, identity=scope,
                           info={"definition": "Dao §3.6.2 (kernel time of the profiled runs / exhaustive's)"})
            # The thesis' sentence "our tuner spends 3% ... of the time taken for the exhaustive search"
            # also reads as one ratio over the whole benchmark set: Σ profiled kernel time / Σ exhaustive
            # kernel time, which long-running kernels dominate. Recorded beside the per-kernel mean.
            gpuperf_record(f"tuning.total.{strat}.device_cost",
                           sum(r["device_s"] for r in rows) / sum(r["device_ex_s"] for r in rows), "ratio",
                           # on a shared 2-core CPU one slow kernel moves the sum: gross changes only there
                           better="lower", tolerance={"rel": 1.0, "abs": 0.2} if gpu_device.info.is_cpu
                           else {"rel": 0.3, "abs": 0.05}, identity=scope,
                           info={"definition": "Σ over kernels of profiled kernel time / Σ of exhaustive's",
                                 "kernels": len(rows)})
