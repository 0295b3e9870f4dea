"""Basic blocks, the control-flow graph with natural loops, and each block's data-dependence graph
(Alavani §4.2: "building basic blocks and control flow graph" from PTX; Algorithm 6 schedules the
data-flow graph of one block, Algorithm 7 the CFG).

Loops are the natural loops of back edges (an edge to a block that dominates its source). A block's
*multiplier* is the product of the trip counts of every loop containing it, so nested loops
compose; the thesis' Algorithm 7 multiplies the block that has the back edge, which is the same
when a loop body is one block (we apply it to the whole natural loop, since compiled PTX splits
bodies with conditionals into several blocks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import networkx as nx

from .ptx import Instruction, Kernel


@dataclass
class Block:
    index: int
    label: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def dependence_graph(self) -> nx.DiGraph:
        """Nodes: instruction positions; edge u→v when v reads a register u wrote last (RAW), or
        v overwrites a register u read or wrote (WAR/WAW keep program order for reused registers);
        memory operations stay in order with respect to stores and barriers."""
        g = nx.DiGraph()
        last_def: dict[str, int] = {}
        last_uses: dict[str, list[int]] = {}
        last_store: int | None = None
        mem_since_store: list[int] = []
        for k, ins in enumerate(self.instructions):
            g.add_node(k)
            for r in ins.uses:
                if r in last_def:
                    g.add_edge(last_def[r], k)
            for r in ins.defs:
                for u in last_uses.get(r, []):
                    if u != k:
                        g.add_edge(u, k)
                if r in last_def:
                    g.add_edge(last_def[r], k)
            cls = ins.klass
            is_mem = cls.startswith(("ld.", "st.", "atom.")) and cls != "ld.param"
            barrier = cls == "bar"
            if is_mem or barrier:
                if last_store is not None:
                    g.add_edge(last_store, k)
                if cls.startswith(("st.", "atom.")) or barrier:
                    for m in mem_since_store:
                        g.add_edge(m, k)
                    last_store, mem_since_store = k, []
                else:
                    mem_since_store.append(k)
            for r in ins.uses:
                last_uses.setdefault(r, []).append(k)
            for r in ins.defs:
                last_def[r] = k
                last_uses[r] = []
        return g


@dataclass
class Cfg:
    blocks: list[Block]
    graph: nx.DiGraph
    back_edges: list[tuple[int, int]]
    loops: list[set[int]]  # natural loops, ordered by header position

    def multipliers(self, trips: Sequence[float]) -> list[float]:
        """Per-block execution count per thread from the loops' trip counts (headers in PTX order)."""
        if len(trips) != len(self.loops):
            headers = ", ".join(f"{self.blocks[min(lp)].label or 'B' + str(min(lp))}" for lp in self.loops)
            raise ValueError(f"kernel has {len(self.loops)} loop(s) (headers: {headers or 'none'}) but "
                             f"{len(trips)} trip count(s) were given; give one per loop in header order")
        mult = [1.0] * len(self.blocks)
        for loop, trip in zip(self.loops, trips):
            if trip < 0:
                raise ValueError(f"trip count must be ≥ 0, got {trip}")
            for b in loop:
                mult[b] *= float(trip)
        return mult

    def dag(self) -> nx.DiGraph:
        g = self.graph.copy()
        g.remove_edges_from(self.back_edges)
        return g


def build(kernel: Kernel) -> Cfg:
    """Split at labels and after branches/returns; connect fall-through and branch targets."""
    blocks: list[Block] = [Block(0, None)]
    for item in kernel.items:
        if isinstance(item, str):
            if blocks[-1].instructions or blocks[-1].label is not None:
                blocks.append(Block(len(blocks), item))
            else:
                blocks[-1].label = item
            continue
        blocks[-1].instructions.append(item)
        if item.is_branch or item.base in ("ret", "exit"):
            blocks.append(Block(len(blocks), None))
    blocks = [b for b in blocks if b.instructions or b.label is not None]
    for k, b in enumerate(blocks):
        b.index = k
    by_label = {b.label: b.index for b in blocks if b.label}
    g = nx.DiGraph()
    g.add_nodes_from(range(len(blocks)))
    for b in blocks:
        last = b.instructions[-1] if b.instructions else None
        if last is not None and last.is_branch:
            tgt = last.target
            if tgt not in by_label:
                raise ValueError(f"branch to unknown label {tgt!r} at PTX line {last.line}")
            g.add_edge(b.index, by_label[tgt])
            if last.pred is not None and b.index + 1 < len(blocks):
                g.add_edge(b.index, b.index + 1)
        elif last is not None and last.base in ("ret", "exit"):
            pass
        elif b.index + 1 < len(blocks):
            g.add_edge(b.index, b.index + 1)
    dom = nx.immediate_dominators(g, 0)

    def dominates(a: int, b: int) -> bool:
        while True:
            if a == b:
                return True
            if dom.get(b, b) == b:
                return False
            b = dom[b]

    back = [(u, v) for u, v in g.edges if dominates(v, u)]
    loops: list[set[int]] = []
    for u, v in sorted(back, key=lambda e: (e[1], e[0])):
        body, stack = {v, u}, ([] if u == v else [u])
        while stack:
            x = stack.pop()
            for p in g.predecessors(x):
                if p not in body:
                    body.add(p)
                    stack.append(p)
        merged = next((lp for lp in loops if min(lp) == v), None)
        if merged is not None:
            merged |= body
        else:
            loops.append(body)
    loops.sort(key=min)
    return Cfg(blocks, g, back, loops)
