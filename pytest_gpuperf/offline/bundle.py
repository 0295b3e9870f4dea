"""``gpuperf offline bundle DIR``: everything an offline GPU host needs to run the suites, in one folder.

HPC GPU nodes often reach no package index. A bundle holds the plugin's wheel, the wheels of the
dependencies that host lacks (downloaded here for its Python and platform), a manifest, and ``run.sh``:
on the host, ``bash DIR/run.sh OUT [gpuperf run arguments]`` installs from the bundle alone into a
virtual environment that sees the host interpreter's own packages (its CuPy, NumPy, …), runs the suites with the
results, history and log under ``OUT``, and packs ``OUT.tgz`` — the one file to bring back to
``gpuperf offline collect``. ``bash DIR/run.sh --gatecheck OUT [gpuperf baseline gatecheck arguments]`` runs the
gate check there instead (its file and runs under ``OUT/gatecheck/``; a later call with ``--append`` and the same
``OUT`` adds to it), packed the same way.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Sequence

from ..errors import GpuPerfError
from ..util.atomic import atomic_write_json, atomic_write_text
from ..util.provenance import plugin, plugin_commit

#: platform tags pip may take wheels of for a glibc x86-64 host (pip matches each tag exactly)
PLATFORMS = ("manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_24_x86_64", "manylinux_2_27_x86_64",
             "manylinux_2_28_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64",
             "manylinux1_x86_64")

RUN_SH = r"""#!/usr/bin/env bash
# Run pytest-gpuperf's suites on this host from this bundle alone (no package index needed).
#   bash run.sh OUT [gpuperf run arguments, e.g. --gpuperf-device=0 -k memory]
#   bash run.sh --gatecheck OUT [gpuperf baseline gatecheck arguments, e.g. --aa 3 --families all]
# (the gate check's file and runs go to OUT/gatecheck/; --append with the same OUT adds to them)
# Environment: GPUPERF_TAG (results name, default run), GPUPERF_PYTHON (default python3),
# GPUPERF_VENV (default ${TMPDIR:-/tmp}/gpuperf-venv-$(id -u): yours alone; one that another user owns, or
# that others may write to, is refused), GPUPERF_TIME_LIMIT (seconds, then the run is interrupted and
# packed with what finished), GPUPERF_COMMIT (the commit of the code you measure, when the
# directory you run in has no .git), GPUPERF_HISTORY (a history store; default OUT/history.db),
# GPUPERF_CACHE (what a first run measures and later runs replay; default: cache/ beside this script).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: bash run.sh [--gatecheck] OUT [gpuperf run or gatecheck arguments]"
mode=run
if [ "${1:-}" = --gatecheck ]; then mode=gatecheck; shift; fi
# --help: the comment lines above, as this file has them; an OUT that looks like an option is a slip, never a folder
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") echo "gpuperf offline: OUT, the folder the results go to, is missing ($usage)" >&2; exit 2 ;;
  -*) echo "gpuperf offline: OUT comes first, the folder the results go to: '$1' looks like an option ($usage)" >&2
      exit 2 ;;
esac
out=$1; shift
mkdir -p -- "$out"; out=$(cd -- "$out" && pwd)
py=${GPUPERF_PYTHON:-python3}
venv=${GPUPERF_VENV:-${TMPDIR:-/tmp}/gpuperf-venv-$(id -u)}
# whatever sits in the venv runs as you: only a folder you own and nobody else may write to is used
owned() {  # yours (the link too, if it is one) and writable by nobody else
  local uid mode
  read -r uid < <(stat -c '%u' "$1" 2>/dev/null) && [ "$uid" = "$(id -u)" ] || return 1
  read -r uid mode < <(stat -L -c '%u %a' "$1" 2>/dev/null) || return 1
  [ "$uid" = "$(id -u)" ] && [ $((8#$mode & 8#022)) -eq 0 ]
}
if [ -e "$venv" ] || [ -L "$venv" ]; then
  for part in "$venv" "$venv/bin"; do
    if { [ -e "$part" ] || [ -L "$part" ]; } && ! owned "$part"; then
      echo "gpuperf offline: $part is not yours alone (owned by another user, or writable by others): refusing to run what it holds; remove it or set GPUPERF_VENV to a folder of your own" >&2
      exit 3
    fi
  done
else
  mkdir -p "$(dirname "$venv")" && mkdir -m 700 "$venv" || exit 3
fi
tag=${GPUPERF_TAG:-$mode}
# the tuning references, profiler counters and searches a first run stores: beside the bundle unless named,
# so every host that runs it from a shared folder (or a copy of it) replays them instead of measuring again
export GPUPERF_CACHE="${GPUPERF_CACHE:-$here/cache}"
mkdir -p "$GPUPERF_CACHE" 2>/dev/null || echo "gpuperf offline: $GPUPERF_CACHE cannot be created: every run measures again" >&2
# CuPy keeps the kernels it compiles (the user-library accuracy checks compile CuPy's math kernels) in a folder of
# its own: inside the same cache, so a host that replays the cache does not compile them again either
export CUPY_CACHE_DIR="${CUPY_CACHE_DIR:-$GPUPERF_CACHE/cupy}"
if [ ! -x "$venv/bin/gpuperf" ]; then
  "$py" -m venv "$venv" || exit 3
  # the host's own packages (CuPy, NumPy, …) stay visible, also when its python is itself a virtual
  # environment (whose packages a --system-site-packages venv would not see)
  "$py" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
    > "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/gpuperf-host.pth"
  "$venv/bin/python" -m pip install -q --no-index --no-cache-dir --find-links "$here/wheels" \
    @REQUIREMENT@ @ALSO@ || { echo "gpuperf offline: install from $here/wheels failed" >&2; exit 3; }
fi
# the bundle's own plugin, whatever another pytest-gpuperf the host's site may hold
"$venv/bin/python" -m pip install -q --no-index --no-cache-dir --no-deps --force-reinstall "$here"/wheels/@WHEEL@ || exit 3
# the run in the background, so a Ctrl-C, a batch system's TERM (to this script, or to every process of the
# job as at a Slurm time limit) or GPUPERF_TIME_LIMIT (seconds) reaches pytest: it stops, writes results and
# history of what finished (marked interrupted), and the pack below still happens once it has (job control
# on: a background job of a script would otherwise ignore SIGINT)
: > "$out/$tag.log"  # both writers append, so neither overwrites the other
set -m
if [ "$mode" = gatecheck ]; then
  # the file beside its runs, as `gpuperf offline collect` files them (the commit: git's, or GPUPERF_COMMIT)
  set -- baseline gatecheck --results-dir "$out" --out "$out/gatecheck/gatecheck.json" "$@"
else
  set -- run -p no:cacheprovider "$@" --gpuperf-json="$out/results/{key}/$tag-{backend}.json" \
    --gpuperf-history="${GPUPERF_HISTORY:-$out/history.db}"
fi
"$venv/bin/gpuperf" "$@" >> "$out/$tag.log" 2>&1 &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null' INT
trap 'kill -TERM "$pid" 2>/dev/null' TERM  # pytest ends a run on SIGTERM as on SIGINT, and names it
watchdog=""
if [ -n "${GPUPERF_TIME_LIMIT:-}" ]; then
  # its sleep ends with it: a sleep left behind would hold this script's output open until the limit
  ( sleep "$GPUPERF_TIME_LIMIT" & s=$!; trap 'kill "$s" 2>/dev/null; wait "$s"; exit 0' TERM
    wait "$s" || exit 0
    # a run that has printed its verdict has written its results and is ending: a signal now would only turn
    # its own status into an interrupt's (a gate check's log holds its runs' verdicts, so it is always stopped)
    if [ "$mode" = run ] && grep -qE '^gpuperf [A-Z ]+ \(exit [0-9]+\)' "$out/$tag.log"; then exit 0; fi
    echo "gpuperf offline: GPUPERF_TIME_LIMIT=$GPUPERF_TIME_LIMIT s reached: interrupting" >> "$out/$tag.log"
    kill -INT "$pid" 2>/dev/null ) < /dev/null > /dev/null 2>&1 &
  watchdog=$!
fi
while :; do
  wait "$pid"
  kill -0 "$pid" 2>/dev/null || break  # wait returned for a trapped signal: the run is still ending
done
# the run's own status, asked once it has ended (bash keeps it after the wait that reaped it): a wait that a
# trapped signal ended early returns 128 + the signal, whether or not the run then ended on its own
wait "$pid" 2>/dev/null; status=$?
[ -n "$watchdog" ] && { kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null; }
tail -n "${GPUPERF_TAIL:-40}" "$out/$tag.log"
tar czf "$out.tgz" --exclude=.gpuperf-locks -C "$out" . && echo "gpuperf offline: bring back $out.tgz (gpuperf offline collect)"
exit "$status"
"""


def run_script(requirement: str, also: Sequence[str], wheel: str) -> str:
    """``run.sh`` with the bundle's names filled in, each shell-quoted: an extra, a project or a wheel name
    is pasted in as one word, never read by the shell (``--extra 'x$(cmd)'`` runs nothing)."""
    return (RUN_SH.replace("@REQUIREMENT@", shlex.quote(requirement))
            .replace("@ALSO@", " ".join(shlex.quote(a) for a in also))
            .replace("@WHEEL@", shlex.quote(wheel)))


def _plugin_wheel(into: Path, wheel: str | None) -> Path:
    """The plugin's wheel: the one given, else built from the checkout this package runs from."""
    if wheel:
        path = Path(wheel)
        if not path.is_file() or not path.name.startswith("pytest_gpuperf-"):
            raise GpuPerfError(f"--wheel {wheel}: not a pytest_gpuperf wheel file")
        shutil.copy2(path, into / path.name)
        return into / path.name
    project = Path(__file__).resolve().parents[2]
    if not plugin_commit() or not (project / "pyproject.toml").is_file():
        return repack_installed(into)  # installed from a wheel: the files pip put in place are the plugin
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(project), "-w", str(into)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise GpuPerfError(f"building the plugin's wheel failed: {proc.stderr.strip()[-500:]}")
    return next(into.glob("pytest_gpuperf-*.whl"))


#: files of an installed distribution's ``.dist-info`` that the installer wrote, not the wheel
INSTALLER_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})


def repack_installed(into: Path) -> Path:
    """The installed pytest-gpuperf as a wheel again (what ``wheel pack`` does for an unpacked wheel): every file
    its RECORD lists under the install folder — no bytecode, nothing the installer added, no console script (the
    host's pip writes it from ``entry_points.txt``) — with a RECORD of their sha256 digests."""
    dist = metadata.distribution("pytest-gpuperf")
    listed = [f for f in dist.files or [] if ".." not in f.parts and "__pycache__" not in f.parts
              and f.suffix != ".pyc"]
    info = next((f.parent for f in listed if f.name == "METADATA" and f.parent.name.endswith(".dist-info")), None)
    if info is None:
        raise GpuPerfError("the installed pytest-gpuperf lists no .dist-info/METADATA: pass its wheel with --wheel PATH")
    target = into / f"pytest_gpuperf-{dist.version}-py3-none-any.whl"
    record: list[str] = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(listed, key=lambda p: (p.parent == info, p.as_posix())):  # the .dist-info last, as wheels do
            path = Path(str(dist.locate_file(f)))
            if (f.parent == info and f.name in INSTALLER_FILES) or not path.is_file():
                continue
            data = path.read_bytes()
            z.writestr(f.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{f.as_posix()},sha256={digest},{len(data)}")
        record.append(f"{info.as_posix()}/RECORD,,")
        z.writestr(f"{info.as_posix()}/RECORD", "\n".join(record) + "\n")
    return target


def requirements(extras: Sequence[str]) -> list[str]:
    """The plugin's declared requirements with the chosen extras (from its installed metadata)."""
    out = []
    for req in metadata.requires("pytest-gpuperf") or []:
        spec, _, marker = req.partition(";")
        extra = re.search(r'extra\s*==\s*"([^"]+)"', marker)
        if extra is None or extra.group(1) in extras:
            out.append(spec.strip())
    return out


def _name(requirement_or_wheel: str) -> str:
    """Normalised project name of a requirement (``scikit-learn>=1.3``) or wheel file name."""
    base = re.split(r"[<>=!~\[;@ ]", requirement_or_wheel, maxsplit=1)[0]
    base = base.split("-")[0] if base.endswith(".whl") else base
    return re.sub(r"[-_.]+", "-", base).lower()


def bundle(directory: Path, *, python: str, extras: Sequence[str], host_has: Sequence[str], wheel: str | None,
           platforms: Sequence[str] = PLATFORMS, also: Sequence[str] = (), cache: Path | None = None) -> dict:
    """Write the bundle into ``directory`` (created; must be empty) and return its manifest. ``also``:
    projects installed beside the plugin (e.g. ``xgboost-cpu``, the power model's library without CUDA).
    ``cache``: a cache folder to start the bundle's ``cache/`` from (another bundle's, or a machine's
    ``$GPUPERF_CACHE``): its entries are keyed by kernel source, device, driver and toolkit, so a host
    they do not match measures again."""
    if directory.exists() and any(directory.iterdir()):
        raise GpuPerfError(f"{directory} is not empty; give a new folder for the bundle")
    if cache is not None and not cache.is_dir():
        raise GpuPerfError(f"--cache {cache}: no such folder; give a cache folder (a bundle's cache/, or "
                           "$GPUPERF_CACHE / ~/.cache/pytest-gpuperf of a machine that ran the suites)")
    fresh = not directory.exists()
    try:
        return _fill(directory, python=python, extras=extras, host_has=host_has, wheel=wheel, platforms=platforms,
                     also=also, cache=cache)
    except BaseException:  # a failed bundle leaves no half-filled folder to block the next try
        if fresh:
            shutil.rmtree(directory, ignore_errors=True)
        elif directory.is_dir():
            for p in directory.iterdir():
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        raise


def _fill(directory: Path, *, python: str, extras: Sequence[str], host_has: Sequence[str], wheel: str | None,
          platforms: Sequence[str], also: Sequence[str], cache: Path | None) -> dict:
    """:func:`bundle`'s work, in a folder it found empty."""
    wheels = directory / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    own = _plugin_wheel(wheels, wheel)
    skip = {_name(n) for n in host_has}
    wanted = [r for r in requirements(extras) if _name(r) not in skip] + list(also)
    kept: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gpuperf-bundle-") as tmp:
        if not wanted:
            tmp = ""
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version", python,
               "--implementation", "cp", *[a for p in platforms for a in ("--platform", p)], "--platform", "any",
               "-d", tmp, *wanted]
        proc = subprocess.run(cmd, capture_output=True, text=True) if tmp else None
        if proc is not None and proc.returncode != 0:
            raise GpuPerfError(f"downloading the dependencies for Python {python} failed: {proc.stderr.strip()[-800:]}")
        for path in sorted(Path(tmp).glob("*.whl")) if tmp else []:
            if _name(path.name) not in skip:
                shutil.move(str(path), wheels / path.name)
                kept.append(path.name)
    if cache is not None:
        shutil.copytree(cache, directory / "cache", dirs_exist_ok=True)
    spec = f"[{','.join(extras)}]" if extras else ""
    atomic_write_text(directory / "run.sh", run_script(f"pytest-gpuperf{spec}", also, own.name))
    (directory / "run.sh").chmod(0o755)
    manifest = {"schema": "pytest-gpuperf-bundle/1", "plugin": {**plugin(), "wheel": own.name},
                "python": python, "extras": list(extras), "also": list(also), "host_has": sorted(skip), "wheels": sorted(kept),
                "cache": None if cache is None else str(cache),
                "size_bytes": sum(p.stat().st_size for p in wheels.iterdir())}
    atomic_write_json(directory / "MANIFEST.json", manifest)
    return manifest


def describe(manifest: dict, directory: Path) -> str:
    """The lines ``bundle`` prints: what is inside and how to use it."""
    mib = manifest["size_bytes"] / 2**20
    return (f"{directory}: pytest-gpuperf {manifest['plugin']['version']} ({manifest['plugin']['wheel']}) and "
            f"{len(manifest['wheels'])} dependency wheels for Python {manifest['python']}, {mib:.1f} MiB\n"
            f"on the host:  bash {directory.name}/run.sh OUT --gpuperf-device=0\n"
            f"back here:    gpuperf offline collect OUT.tgz")


def manifest_of(directory: Path) -> dict:
    """A bundle's manifest (for tests and ``collect``)."""
    return json.loads((directory / "MANIFEST.json").read_text(encoding="utf-8"))
