"""The data-flow graph of a typed template: levels from the loads down, and blocks.

* **Levels** (thesis §7.4.2.2, Figs. 35–37: the tuner proceeds top-down, from the loads to the store,
  one level of the graph per iteration): an operation that reads only loads is level 1; otherwise its
  level is one more than the deepest operation it reads. A loop-carried recurrence (an accumulator that
  reads itself, or operations that feed each other around a loop) is a cycle; the operations of one cycle
  share a level — the level of the cycle's condensed node — since half a recurrence cannot be lowered
  on its own without its values crossing precisions every trip.
* **Blocks** (§7.4.2.3.2, cut points): the weakly connected components of the graph within one kernel
  function. The thesis cuts basic blocks at their live-ins/live-outs and tunes them in the same
  iteration; here the natural cut points are the memory operations between parts of the computation
  (the output prune pass, §7.4.2.1, makes one function per store), which a template already has.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from .template import TypedTemplate


@dataclass(frozen=True)
class Dataflow:
    """Levels and blocks of the operations; ``levels[name]`` ≥ 1, ``blocks`` in program order."""

    levels: dict[str, int]
    blocks: tuple[tuple[str, ...], ...]
    edges: tuple[tuple[str, str], ...]  # (producer, consumer)

    @property
    def depth(self) -> int:
        return max(self.levels.values(), default=0)

    def ops_at(self, lo: int, hi: int, block: tuple[str, ...] | None = None) -> list[str]:
        """Operations with ``lo ≤ level < hi`` (of one block, if given), in program order."""
        pool = block if block is not None else tuple(self.levels)
        return [n for n in pool if lo <= self.levels[n] < hi]

    def block_depth(self, block: tuple[str, ...]) -> int:
        return max(self.levels[n] for n in block)


def build(inputs: dict[str, list[str]], kernel_of: dict[str, str] | None = None) -> Dataflow:
    """The graph of operations ``name → operations it reads`` (program order kept)."""
    g = nx.DiGraph()
    order = list(inputs)
    g.add_nodes_from(order)
    for consumer, producers in inputs.items():
        for p in producers:
            if p not in inputs:
                raise KeyError(f"{consumer!r} reads unknown operation {p!r}")
            g.add_edge(p, consumer)
    cond = nx.condensation(g)
    member = cond.graph["mapping"]
    clevel: dict[int, int] = {}
    for c in nx.topological_sort(cond):
        preds = list(cond.predecessors(c))
        clevel[c] = 1 + max((clevel[p] for p in preds), default=0)
    levels = {n: clevel[member[n]] for n in order}
    kernel_of = kernel_of or {n: "" for n in order}
    blocks: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for n in order:
        if n in seen:
            continue
        comp = nx.node_connected_component(g.to_undirected(as_view=True), n)
        kernels = {kernel_of[m] for m in comp}
        if len(kernels) != 1:
            raise ValueError(f"operations {sorted(comp)} span kernels {sorted(kernels)}")
        block = tuple(m for m in order if m in comp)
        seen |= comp
        blocks.append(block)
    return Dataflow(levels, tuple(blocks), tuple((a, b) for a, b in g.edges if a != b))


def of_template(t: TypedTemplate) -> Dataflow:
    return build({n: list(op.inputs) for n, op in t.ops.items()}, {n: op.kernel for n, op in t.ops.items()})
