"""Configuration as pytest options with ini keys: the tuning budget and launch probe resolve from the
command line, then the ini file; budgets count from the session's start. The inner runs are in-process
(``pytester.runpytest``): each starts its own session and config, which is what the options are read
from; a fresh interpreter per run would cost its imports and check nothing more."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_tuning_options_from_ini_and_command_line(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ngpuperf_tuning_budget = 42\ngpuperf_tuning_probe_limit = true\n")
    pytester.makepyfile(test_opts="""
        from pytest_gpuperf.tuning.fixtures import tuning_options
        from pytest_gpuperf.util.clock import session_elapsed

        def test_show(request):
            o = tuning_options(request.config)
            print(f"OPTS {o.budget_s} {o.probe_limit} elapsed<60 {0 <= session_elapsed(request.config) < 60}")
    """)
    out = pytester.runpytest("-s", "-p", "no:cacheprovider")
    out.stdout.fnmatch_lines(["*OPTS 42.0 True elapsed<60 True*"])
    out = pytester.runpytest("-s", "-p", "no:cacheprovider", "--gpuperf-tuning-budget=7")
    out.stdout.fnmatch_lines(["*OPTS 7.0 True elapsed<60 True*"])


def test_tuning_budget_skips_with_the_reason(pytester: pytest.Pytester):
    """A budget already spent at the first kernel skips it and says which option to raise."""
    pytester.makepyfile(test_budget="""
        import time
        import pytest
        from pytest_gpuperf.tuning.fixtures import tuning_options
        from pytest_gpuperf.util.clock import session_elapsed

        def test_kernel(request):
            time.sleep(0.05)
            o = tuning_options(request.config)
            if o.budget_s and session_elapsed(request.config) > o.budget_s:
                pytest.skip(f"--gpuperf-tuning-budget={o.budget_s} spent")
    """)
    out = pytester.runpytest("-rs", "-p", "no:cacheprovider", "--gpuperf-tuning-budget=0.01")
    out.stdout.fnmatch_lines(["*--gpuperf-tuning-budget=0.01 spent*"])


@pytest.mark.parametrize("option, ini, check", [
    # the Nsight Compute timeout (it replaced GPUPERF_NCU_TIMEOUT_S)
    ("--gpuperf-ncu-timeout", "gpuperf_ncu_timeout",
     "def test_x(gpuperf_ncu_timeout):\n    assert gpuperf_ncu_timeout == 12.5\n"),
    # the Pareto search's per-kernel budget (it replaced GPUPERF_PARETO_BUDGET_S read inside the power suite)
    ("--gpuperf-pareto-budget", "gpuperf_pareto_budget",
     "from pytest_gpuperf.tuning.fixtures import tuning_options\n"
     "def test_x(request):\n    assert tuning_options(request.config).pareto_budget_s == 12.5\n"),
])
def test_seconds_options_are_validated_at_start_up(pytester, option, ini, check):
    """A time in seconds is an option, not an environment variable: a non-positive value is one usage error
    before any test runs; the ini key sets the default."""
    pytester.makepyfile(check)
    bad = pytester.runpytest(f"{option}=0")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines([f"*{option}=0: give a positive number of seconds*"])
    assert pytester.runpytest(f"{option}=12.5").ret == 0
    pytester.makeini(f"[pytest]\n{ini} = 12.5\n")
    assert pytester.runpytest().ret == 0


def test_every_budget_option_promises_the_same(pytester: pytest.Pytester):
    """The accuracy and tuning budgets are declared by one helper (util.clock.add_budget_option): each takes
    seconds, says what its area skips and that the time counts from the session's start."""
    help_text = " ".join(pytester.runpytest("--help").stdout.str().split())
    for option, skips in (("--gpuperf-accuracy-budget", "accuracy: skip accuracy tests"),
                          ("--gpuperf-tuning-budget", "tuning suite: skip kernels")):
        assert (f"{option}=S {skips} that would start more than S seconds after the session began (skipped with "
                "the reason)") in help_text
