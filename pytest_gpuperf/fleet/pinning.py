"""pytest-xdist: one worker per physical GPU, and every test of a GPU on that worker.

Why a scheduler of our own rather than ``xdist_group`` marks and ``--dist loadgroup``: loadgroup
appends ``@group`` to every marked test's node id on the workers, and node ids are what baselines,
results and ``missing`` match tests by (``t.py::f[1MiB]``) — a worker's ids would no longer match a
baseline written without xdist. It also leaves the pinning to whichever ``--dist`` the user typed.
:class:`DeviceScheduling` is xdist's own ``LoadScopeScheduling`` (a scope's tests all go to one worker,
in one work unit) with the scope of a device test being its *physical GPU*
(:func:`pytest_gpuperf.fleet.identity.physical_id`): the CUDA and OpenCL views of one card share a
scope, so two workers never time on one card at once, and ids stay untouched. Tests that use no device
keep their own node id as scope and spread over the workers as with ``--dist load``; under ``--dist
loadgroup`` those marked ``xdist_group`` keep their group as scope (:func:`split_scope`), as xdist's own
scheduler gives them: one worker runs the group, so no other waits on, or repeats, its shared set-up.

``-n auto`` asks :func:`auto_workers`: one worker per physical GPU that ``--gpuperf-device`` selects
(more workers than GPUs would only idle; fewer would serialise cards that could run side by side).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import pytest

from ..devices import DeviceInfo, discover, resolve
from ..errors import GpuPerfError
from .identity import physical_id

#: --dist modes whose work we may re-schedule by device; ``each`` runs every test on every worker
#: (several workers on one GPU at once) and is refused.
RESCHEDULED = ("no", "load", "loadscope", "loadfile", "loadgroup", "worksteal")


def device_option(config: pytest.Config) -> str:
    """``--gpuperf-device`` as pytest_configure reads it (the ini value replaces the default ``0``)."""
    device = config.getoption("--gpuperf-device")
    if device == "0" and config.getini("gpuperf_device"):
        device = config.getini("gpuperf_device")
    return str(device)


def auto_workers(config: pytest.Config) -> int | None:
    """``-n auto``: the number of physical GPUs selected, or None (xdist's own default: CPU count) when the
    selection names no device here — the usage error then comes from the normal path, in one line."""
    try:
        selected = resolve(device_option(config), discover())
    except GpuPerfError:
        return None
    return max(1, len({physical_id(d) for d in selected}))


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def is_controller(config: pytest.Config) -> bool:
    """This process distributes tests to xdist workers (``-n N`` with N ≥ 1) and runs none itself."""
    return not is_worker(config) and bool(getattr(config.option, "numprocesses", None))


def check_dist(config: pytest.Config) -> None:
    """``--dist each`` would run every device test on every worker: several workers on one GPU."""
    if is_controller(config) and getattr(config.option, "dist", "no") == "each":
        raise pytest.UsageError("--dist each runs every test on every worker, so several workers would time on "
                                "one GPU at once; pytest-gpuperf pins each GPU to one worker — use -n N without "
                                "--dist (or --dist load)")


def scopes(selected: list[DeviceInfo]) -> dict[str, str]:
    """Device spec → its scheduling scope (``gpu:<physical id>``)."""
    return {d.spec: f"gpu:{physical_id(d)}" for d in selected}


def scope_of(nodeid: str, spec_scope: Mapping[str, str]) -> str | None:
    """The scope of a test's node id: the physical GPU of the device in its parametrization, or None."""
    m = re.match(r"^.*\[(.*)\]$", nodeid)
    if not m:
        return None
    for part in m.group(1).split("-"):
        if part in spec_scope:
            return spec_scope[part]
    return None


def split_scope(nodeid: str, spec_scope: Mapping[str, str], by_group: bool = False) -> str:
    """The scheduling scope of a test: its physical GPU where it runs on a device (:func:`scope_of`); else, with
    ``by_group`` (``--dist loadgroup``), the group xdist appended to its id (``t.py::f@name``: ``name``, as xdist's
    LoadGroupScheduling reads it); else its own node id. A device test's GPU wins over its group: two workers
    must never time on one card."""
    test, group = nodeid, None
    if by_group and nodeid.rfind("@") > nodeid.rfind("]"):  # an '@' inside the parametrization is no group
        test, group = nodeid.rsplit("@", 1)
    return scope_of(test, spec_scope) or group or nodeid


def make_scheduler(config: pytest.Config, log: Any, selected: list[DeviceInfo]) -> Any:
    """xdist's LoadScopeScheduling with one scope per physical GPU (see the module docstring)."""
    from xdist.scheduler import LoadScopeScheduling

    spec_scope = scopes(selected)
    by_group = getattr(config.option, "dist", "no") == "loadgroup"

    class DeviceScheduling(LoadScopeScheduling):
        """All tests of one physical GPU in one work unit, hence on one worker; an xdist group's tests (under
        ``--dist loadgroup``) in one work unit; other tests free."""

        def _split_scope(self, nodeid: str) -> str:  # noqa: D401 - xdist's hook method
            return split_scope(nodeid, spec_scope, by_group)

    return DeviceScheduling(config, log)
