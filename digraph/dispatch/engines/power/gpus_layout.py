"""Which vertices each GPU holds in the sharded power iteration
(:mod:`digraph.dispatch.engines.power.gpus`): consecutive ranges, or blocks dealt.

A round of the sharded iteration has two phases separated by waits for every GPU: the pull
(its time follows a GPU's in-arcs) and the vertex passes (teleport, Anderson's record and mix,
the pack of ``z``: their time follows a GPU's vertices).  A round therefore lasts about
``max_g arcs_g + c · max_g vertices_g`` (``c``:
:attr:`~.gpu_settings.PowerGpuSettings.shard_vertex_cost`), not ``max_g (arcs_g +
c · vertices_g)``, which is what consecutive ranges can balance.  Where in-degree follows the
vertex number (R-MAT: the low numbers hold the hubs), no cut into consecutive ranges balances
both: on R-MAT 2^25 over four GPUs the ranges hold 174 / 144 / 130 / 88 M arcs and 1.7 / 6.7 /
9.1 / 16.0 M vertices, so one GPU leads the pull and another the vertex passes.

:class:`Layout` ``"dealt"`` cuts the vertices into blocks of
:attr:`~.gpu_settings.PowerGpuSettings.shard_block` consecutive vertices and deals them to the GPUs
by cost, largest first, in rounds of one block a GPU, each round's largest to the GPU of least cost
so far: every GPU gets the same number of blocks (so the same vertices, ±1 block) and about the same
arcs.  The engine then numbers the vertices GPU by GPU (each GPU's blocks in increasing order), so
each GPU still holds one consecutive range of the engine's numbering and everything else of the
engine is unchanged; the in-arcs' sources are renumbered on the GPU (:meth:`Layout.renumber`: a
table of one entry a block), and the answer is written back in the graph's numbering
(:func:`digraph.dispatch.engines.power.gpus_exchange._gather`).  Dealing blocks gives up the
locality of consecutive ranges (a web crawl's arcs mostly stay in their range, so few entries of
``z`` cross), so :func:`choose` deals them only where the ranges have little locality to lose (a
sample of arcs) and the model says the round is shorter.

Pure numpy: importable and tested without CUDA or its simulator.
"""

import numpy as np

from ...runtime.cuda.ranges import shard_ranges

__all__ = ["Layout", "choose", "ranges_layout", "dealt_layout"]

_SAMPLE = 1 << 16  # arcs sampled to tell locality apart
# the smallest block dealt (R-MAT 2^25's first 4,096 vertices hold 2.8% of its arcs)
_MIN_BLOCK = 64


class Layout:
    """Which vertices each of ``k`` GPUs holds, in the engine's numbering.

    Attributes
    ----------
    kind : str
        ``"ranges"`` (the graph's own numbering, consecutive ranges) or ``"dealt"``.
    bounds : numpy.ndarray of int64, length k + 1
        GPU ``g`` holds the engine's vertices ``[bounds[g], bounds[g + 1])``.
    block : int
        Vertices a block (dealt; 0 for ranges).
    owner : numpy.ndarray of int64
        Dealt: the GPU of each block.
    owned : list of numpy.ndarray of int64
        Dealt: the blocks GPU ``g`` holds, increasing (the engine numbers them in that order).
    start : numpy.ndarray of int64
        Dealt: the engine's number of each block's first vertex (one entry a block).
    why : str
        Why this layout (:func:`choose`).
    """

    def __init__(self, kind, n, bounds, block=0, owner=None, start=None, why=""):
        self.kind, self.n, self.block = kind, int(n), int(block)
        self.bounds = np.asarray(bounds, np.int64)
        self.owner, self.start, self.why = owner, start, why
        self.owned = None if owner is None else [
            np.flatnonzero(owner == g).astype(np.int64) for g in range(self.bounds.size - 1)]
        if kind == "ranges":  # what identifies the layout in the keys of kept arrays
            self.key = ("ranges", tuple(int(b) for b in self.bounds))
        else:  # (made once: a run reads it several times)
            self.key = ("dealt", self.block, hash(start.tobytes()))
        self._arcs = None

    def vertices(self, g):
        """GPU ``g``'s vertices in the graph's numbering, in the engine's order: a slice for
        ranges, an int64 array for dealt blocks."""
        if self.kind == "ranges":
            return slice(int(self.bounds[g]), int(self.bounds[g + 1]))
        B, blocks = self.block, self.owned[g]
        v = (blocks[:, None] * B + np.arange(B, dtype=np.int64)[None, :]).ravel()
        return v[v < self.n] if blocks.size and blocks[-1] * B + B > self.n else v

    def take(self, a, g):
        """``a`` (one entry a vertex, graph numbering) at GPU ``g``'s vertices, engine order."""
        return np.asarray(a)[self.vertices(g)]

    def arc_spans(self, offsets, g):
        """(row offsets rebased to 0, [(a0, a1), ...]): GPU ``g``'s rows of the CSR ``offsets``
        in the engine's order, and the spans of arc positions they hold, in that order."""
        off = np.asarray(offsets, np.int64)
        if self.kind == "ranges":
            v0, v1 = int(self.bounds[g]), int(self.bounds[g + 1])
            return off[v0:v1 + 1] - off[v0], [(int(off[v0]), int(off[v1]))]
        B, n = self.block, self.n
        lo = self.owned[g] * B
        hi = np.minimum(lo + B, n)
        a0, a1 = off[lo], off[hi]
        deg = np.diff(off)[self.vertices(g)]
        rows = np.zeros(deg.size + 1, np.int64)
        np.cumsum(deg, out=rows[1:])
        return rows, _merged(a0, a1)

    def gather_arcs(self, a, spans):
        """``a`` (one entry an arc position) over ``spans``, concatenated."""
        if len(spans) == 1:
            return a[spans[0][0]:spans[0][1]]
        return np.concatenate([a[s:e] for s, e in spans])

    def arcs(self, offsets):
        """In-arcs of each GPU (``offsets``: the in-arcs' CSR offsets of the graph the layout
        was made for; counted once)."""
        if self._arcs is None:
            off = np.asarray(offsets, np.int64)
            if self.kind == "ranges":
                self._arcs = [int(off[self.bounds[g + 1]] - off[self.bounds[g]])
                              for g in range(self.bounds.size - 1)]
            else:
                B, n = self.block, self.n
                self._arcs = [int((off[np.minimum(b * B + B, n)] - off[b * B]).sum())
                              for b in self.owned]
        return list(self._arcs)

    def renumber(self, xp, v, table=None):
        """Vertices ``v`` (graph numbering, an ``xp`` array) in the engine's numbering;
        ``table``: :attr:`start` on ``xp``'s device (made when None)."""
        if self.kind == "ranges":
            return v
        t = xp.asarray(self.start) if table is None else table
        B = self.block
        out = t[v // B] + v % B
        return out.astype(v.dtype, copy=False)


def _merged(a0, a1):
    """Spans ``[a0[i], a1[i])`` with adjacent ones joined."""
    if a0.size == 0:
        return [(0, 0)]
    cut = np.flatnonzero(a0[1:] != a1[:-1]) + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [a0.size]]) - 1
    return [(int(a0[s]), int(a1[e])) for s, e in zip(starts, ends)]


def _deal(cost, k):
    """The GPU of each block: the blocks by decreasing cost dealt in rounds of ``k``, the
    largest of a round to the GPU of least cost so far, the next to the next least, and so on:
    every GPU gets one block a round (equal counts) and the costs even out.  A loop over
    rounds of blocks, not over vertices: 2,048 rounds for 2^25 vertices on four GPUs."""
    nb = cost.size
    order = np.argsort(-cost, kind="stable")
    load = np.zeros(k, np.int64)
    owner = np.empty(nb, np.int64)
    for r in range(0, nb, k):
        take = order[r:r + k]
        gpus = np.argsort(load, kind="stable")[:take.size]
        owner[take] = gpus
        load[gpus] += cost[take]
    return owner


def ranges_layout(offsets, k, vertex_cost, why=""):
    """Consecutive ranges of equal ``arcs + vertex_cost × vertices``
    (:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges`)."""
    off = np.asarray(offsets)
    return Layout("ranges", off.size - 1, shard_ranges(off, k, vertex_cost), why=why)


def dealt_layout(offsets, k, block, vertex_cost, why=""):
    """Blocks of ``block`` vertices dealt to ``k`` GPUs by their cost (:func:`_deal`); the
    blocks are halved (down to 64 vertices) while the costliest would hold over ``1 / (32 k)``
    of a GPU's share, so that dealing can even the GPUs out."""
    off = np.asarray(offsets, np.int64)
    n = off.size - 1
    B = max(1, int(block))
    while True:  # halved while one block would hold over 1/(32 k) of a GPU's share
        nb = -(-n // B)
        lo = np.arange(nb, dtype=np.int64) * B
        hi = np.minimum(lo + B, n)
        cost = (off[hi] - off[lo]) + int(vertex_cost) * (hi - lo)
        if B <= _MIN_BLOCK or 32 * k * k * int(cost.max(initial=0)) <= int(cost.sum()):
            break
        B //= 2
    owner = _deal(cost, k)
    size = hi - lo
    bounds = np.zeros(k + 1, np.int64)
    np.cumsum(np.bincount(owner, weights=size, minlength=k).astype(np.int64), out=bounds[1:])
    # each block's first vertex in the engine's numbering: its GPU's start plus the sizes of
    # that GPU's blocks before it
    by_gpu = np.lexsort((np.arange(nb), owner))
    before = np.cumsum(size[by_gpu]) - size[by_gpu]
    start = np.empty(nb, np.int64)
    start[by_gpu] = before  # a running sum over the blocks in the engine's order
    return Layout("dealt", n, bounds, B, owner, start, why)


def model(layout, offsets, vertex_cost):
    """The round's model of a layout: ``max_g arcs_g + c · max_g vertices_g``."""
    arcs = layout.arcs(offsets)
    verts = np.diff(layout.bounds)
    return float(max(arcs) + vertex_cost * int(verts.max()))


def crossing(layout, offsets, sources, sample=_SAMPLE):
    """The share of ``sample`` evenly spaced in-arcs whose source and target lie on different
    GPUs."""
    off = np.asarray(offsets, np.int64)
    m = int(off[-1])
    if m == 0:
        return 0.0
    pos = np.unique(np.linspace(0, m - 1, min(sample, m)).astype(np.int64))
    dst = np.searchsorted(off, pos, side="right") - 1
    src = np.asarray(sources)[pos].astype(np.int64)
    if layout.kind == "ranges":
        own_d = np.searchsorted(layout.bounds, dst, side="right") - 1
        own_s = np.searchsorted(layout.bounds, src, side="right") - 1
    else:
        own_d, own_s = layout.owner[dst // layout.block], layout.owner[src // layout.block]
    return float(np.mean(own_d != own_s))


def choose(offsets, sources, k, settings):
    """The layout of a sharded run: :attr:`PowerGpuSettings.shard_layout` when it names one,
    else dealt blocks where their round model is at most ``shard_deal_gain`` of the ranges' and
    dealing adds at most ``shard_deal_locality`` to the share of arcs crossing GPUs (a sample),
    else ranges.  The layout's :attr:`Layout.why` says which and why."""
    c = settings.shard_vertex_cost
    want = settings.shard_layout
    if want not in ("auto", "ranges", "dealt"):
        from ....errors import InvalidParameterError
        raise InvalidParameterError(f"shard_layout must be 'auto', 'ranges' or 'dealt', "
                                    f"got {want!r}")
    if k == 1 or want == "ranges":
        return ranges_layout(offsets, k, c, "consecutive ranges" +
                             (" (shard_layout='ranges')" if want == "ranges" else ""))
    dealt = dealt_layout(offsets, k, settings.shard_block, c)
    if want == "dealt":
        dealt.why = "blocks dealt (shard_layout='dealt')"
        return dealt
    ranges = ranges_layout(offsets, k, c)
    t_r, t_d = model(ranges, offsets, c), model(dealt, offsets, c)
    x_r, x_d = crossing(ranges, offsets, sources), crossing(dealt, offsets, sources)
    figures = (f"round model (max arcs + {c} x max vertices) {t_d / max(t_r, 1.0):.2f}x the "
               f"ranges'; arcs crossing GPUs {x_r:.2f} in ranges, {x_d:.2f} dealt")
    if t_d <= settings.shard_deal_gain * t_r and x_d <= x_r + settings.shard_deal_locality:
        dealt.why = f"blocks of {dealt.block} vertices dealt: {figures}"
        return dealt
    ranges.why = f"consecutive ranges: {figures}"
    return ranges
