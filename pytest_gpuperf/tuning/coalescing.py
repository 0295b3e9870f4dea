"""Non-coalescing factor (Dao §3.4.2, §3.5.2): the number of 128-byte memory transactions a
work-group's warps generate for each global access of the form A·gx + B·gy + C.

* :func:`accesses` reads the kernel text: every ``ptr[expr]`` on a ``__global`` pointer whose index,
  after substituting integer locals defined from ``get_global_id``/``get_local_id``/``get_group_id``
  and the problem scalars, is affine in (gx, gy). Coefficients come from evaluating the index at a
  few points; non-affine indices (data-dependent, e.g. BFS) are reported as such and ignored.
* :func:`transactions` counts segments exactly by forming the warps in row-major order — the
  ground truth the m/n rule is tested against.
* :func:`rule_transactions` is the thesis' closed-form m/n rule and :func:`ncf_filter` its filter: keep the
  shapes (p × q) with p a multiple of m0 and q a multiple of n0, where (m0 × n0) minimises transactions.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from math import ceil

import numpy as np

SEGMENT = 128
Local = tuple[int, ...]


@dataclass(frozen=True)
class Access:
    """One global reference ``ptr[A·gx + B·gy + C]`` with elements of ``elem`` bytes."""

    array: str
    A: int
    B: int
    C: int
    elem: int = 4


_DECL = re.compile(r"\b(?:const\s+)?(?:int|uint|long|size_t|unsigned)\s+(\w+)\s*=\s*([^;,]+)[;,]")
_GLOBAL_PARAM = re.compile(r"__global\s+(?:const\s+)?(\w+)\s*\*\s*(\w+)")
_ELEM = {"float": 4, "int": 4, "uint": 4, "double": 8, "char": 1, "uchar": 1, "short": 2, "half": 2}
_BUILTIN = re.compile(r"get_(global_id|local_id|group_id|local_size)\s*\(\s*(\d)\s*\)")


def _subscripts(text: str, name: str) -> list[str]:
    """Bracketed index expressions of ``name[...]``, with nested brackets balanced."""
    out = []
    for m in re.finditer(rf"\b{name}\s*\[", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"[": 1, "]": -1}.get(text[i], 0)
            i += 1
        out.append(text[m.end():i - 1])
    return out


def _to_python(expr: str) -> str:
    expr = re.sub(r"\((?:int|uint|long|size_t|float)\)", "", expr)
    expr = re.sub(r"(\d+)[uUlLfF]+\b", r"\1", expr)
    return expr.replace("&&", " and ").replace("||", " or ").replace("/", "//")


def _evaluate(expr: str, env: dict[str, int]) -> int | None:
    try:
        tree = ast.parse(_to_python(expr), mode="eval")
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if names - set(env):
            return None
        return int(eval(compile(tree, "<index>", "eval"), {"__builtins__": {}}, dict(env)))  # noqa: S307
    except (SyntaxError, TypeError, ValueError, ZeroDivisionError, NameError):
        return None


def accesses(source: str, scalars: dict[str, int], local: Local = (32, 8)) -> tuple[list[Access], list[str]]:
    """Affine global accesses of the kernel text, and the index expressions that are not affine."""
    params = {name: _ELEM.get(t, 4) for t, name in _GLOBAL_PARAM.findall(source)}
    decls = _DECL.findall(source)
    found: list[Access] = []
    skipped: list[str] = []

    def env_at(gx: int, gy: int) -> dict[str, int]:
        lx, ly = local[0], local[1] if len(local) > 1 else 1
        builtins = {"global_id": (gx, gy), "local_id": (gx % lx, gy % ly), "group_id": (gx // lx, gy // ly),
                    "local_size": (lx, ly)}
        env: dict[str, int] = dict(scalars)
        for var, rhs in decls:
            rhs = _BUILTIN.sub(lambda m: str(builtins[m.group(1)][int(m.group(2))] if int(m.group(2)) < 2 else 0), rhs)
            value = _evaluate(rhs, env)
            if value is not None:
                env[var] = value
            else:
                env.pop(var, None)
        return env

    points = [(0, 0), (1, 0), (0, 1), (3, 5)]
    envs = [env_at(*p) for p in points]
    for array, elem in params.items():
        for expr in _subscripts(source, array):
            expr_b = _BUILTIN.sub(lambda m: f"__{m.group(1)}{m.group(2)}", expr)
            vals = []
            for (gx, gy), env in zip(points, envs):
                lx, ly = local[0], local[1] if len(local) > 1 else 1
                e = dict(env, __global_id0=gx, __global_id1=gy, __local_id0=gx % lx, __local_id1=gy % ly,
                         __group_id0=gx // lx, __group_id1=gy // ly, __local_size0=lx, __local_size1=ly)
                vals.append(_evaluate(expr_b, e))
            if any(v is None for v in vals):
                skipped.append(f"{array}[{expr.strip()}]")
                continue
            c = vals[0]
            a, b = vals[1] - c, vals[2] - c
            if vals[3] != a * 3 + b * 5 + c:
                skipped.append(f"{array}[{expr.strip()}]")
                continue
            acc = Access(array, a, b, c, elem)
            if acc not in found:
                found.append(acc)
    return found, skipped


def transactions(acc: Access, shape: Local, warp: int) -> int:
    """128-byte segments touched by one work-group of ``shape`` = (n columns, m rows), counted warp by
    warp (warps are formed row-major, Dao Fig. 3.2); the group's (0, 0) item starts at offset C."""
    n = int(shape[0])
    m = int(shape[1]) if len(shape) > 1 else 1
    lin = np.arange(n * m)
    gx, gy = lin % n, lin // n
    addr = (acc.A * gx + acc.B * gy) * acc.elem
    base = acc.C * acc.elem
    total = 0
    for w in range(0, n * m, warp):
        seg = (base + addr[w:w + warp]) // SEGMENT
        total += len(np.unique(seg))
    return total


def group_transactions(accs: list[Access], shape: Local, warp: int) -> int:
    return sum(transactions(a, shape, warp) for a in accs)


def rule_transactions(acc: Access, shape: Local, warp: int) -> float:
    """The thesis' closed forms for one work-group: A=1 → m·ceil(n·D/128); B=1 (A large) →
    (W/r)·ceil(r·D/128) with r = WARP/n; A=B=1 → ceil(WARP·D/128)·W/WARP."""
    n, m = int(shape[0]), int(shape[1])
    W, D = n * m, acc.elem
    if acc.A == 1 and acc.B == 1:
        return ceil(warp * D / SEGMENT) * W / warp
    if acc.A == 1:
        return m * ceil(n * D / SEGMENT)
    if acc.B == 1:
        r = max(1, warp // n)
        return (W / r) * ceil(r * D / SEGMENT)
    return float(transactions(acc, shape, warp))


def preference(acc: Access) -> str:
    """Which dimension the m/n rule minimises for this access: 'rows' (maximise n), 'cols' (minimise n),
    or 'none' (independent of shape, or not an x/y-contiguous pattern)."""
    if acc.A == 0 and acc.B == 0:
        return "none"
    if abs(acc.A) == 1 and abs(acc.B) == 1:
        return "none"
    if abs(acc.A) == 1:
        return "rows"
    if abs(acc.B) == 1:
        return "cols"
    return "none"


def ncf_filter(shapes: list[Local], accs: list[Access], warp: int) -> tuple[list[Local], str]:
    """The non-coalescing-factor tuner (Dao §3.5.2) over 2-D ``shapes``.

    For each total size W it picks (m0 × n0) by the m/n rule — all references prefer the same
    dimension → extreme shape; conflicting preferences → the exhaustive transaction count picks it —
    then keeps every (p × q) with p a multiple of m0 and q a multiple of n0 (same warp formation)."""
    prefs = {preference(a) for a in accs} - {"none"}
    if not prefs:
        return list(shapes), "no shape-dependent access: all shapes kept"
    mode = prefs.pop() if len(prefs) == 1 else "count"
    keep: set[Local] = set()
    by_total: dict[int, list[Local]] = {}
    for s in shapes:
        by_total.setdefault(s[0] * s[1], []).append(s)
    for total, group in by_total.items():
        if mode == "rows":  # maximise n (columns, x) → minimise m
            best = max(group, key=lambda s: s[0])
        elif mode == "cols":  # minimise n
            best = min(group, key=lambda s: s[0])
        else:
            best = min(group, key=lambda s: (group_transactions(accs, s, warp), s))
        n0, m0 = best
        keep.update(s for s in shapes if s[0] % n0 == 0 and s[1] % m0 == 0)
    how = {"rows": "minimise m (rows)", "cols": "minimise n (columns)", "count": "conflicting: by count"}[mode]
    return sorted(keep, key=lambda s: (s[0] * s[1], s)), how
