"""The thresholds of the router's automatic choice (:class:`RouteSettings`), each with the
measurement it comes from."""

from dataclasses import dataclass

__all__ = ["RouteSettings"]


@dataclass(frozen=True)
class RouteSettings:
    """The thresholds of the automatic choice (``mode=None``) on the CPU.

    Attributes
    ----------
    power_share : float
        Automatic choice for normalised linear systems (PageRank) on the CPU: the mass-preserving
        power iteration (``"power"``, as a probe: ``probe_share``) when the largest strongly
        connected component may hold at least this share of the arcs (nothing much for the DAG to
        order, and the rank-one term makes the error fall at α·|λ2| a round).  Measured at tol
        1e-8 on 2 quiet cores (docs/history/benchmarks-notebook.md, "PageRank: two formulations on the CPU, against
        scipy and igraph PRPACK"): R-MAT 2^18 and 2^20 (98% of the arcs in the largest component)
        12 power rounds, 165 and 713 ms, against the SCC engine's 1,216 and 5,725 ms; dblp-2010
        (89%) 609 ms against 666 (on the shared 2-core machine 299 against 273: the crossover
        lies near 89%); cnr-2000 (51%) and wiki-Vote (38%) stay with the SCC engine (cnr-2000:
        309 ms against 852).
    bsp_share : float
        Automatic choice for linear systems that are not normalised (adsorption, a user's Katz) on
        the CPU: ``"bsp"`` when the largest component holds at least this share of the arcs, the
        SCC engine otherwise.  The one-pass bound decides alone when it is below this share;
        above, the condensation is built to look (the bound is loose on web graphs: cnr-2000 93%
        against 51%) and kept for the SCC engine.  Measured (adsorption, seeds of high and of low
        degree, tol 1e-4/1e-8/1e-12, shared 2-core machine,
        ``benchmarks/results/adsorption_cpu2_quiet.json``; docs/history/benchmarks-notebook.md, "Adsorption on the
        CPU and on one GPU"): R-MAT 2^18 (98%) bsp 448–1,551 ms against the SCC engine's
        544–1,604 (low seeds, 1e-12: 732 against 1,344); dblp-2010 (89%) within 10% either way;
        cnr-2000 (51%) the SCC engine 192–642 ms against bsp's 137–911 (2x faster with high
        seeds).
    probe_share : float
        A power-iteration probe keeps going while each round's ``‖x_{k+1} − x_k‖₁`` is at most
        this share of γ (α for PageRank) times the previous one, from the third round on.
        Measured ratios of the first eight rounds (scipy power iteration, α = 0.85, so the probe
        trips above 0.595): R-MAT 2^16–2^18 0.14–0.17 and p2p-Gnutella 0.19–0.28 (12–16 rounds to
        1e-8); wiki-Vote 0.26–0.46 (25 rounds); dblp-2010 0.40, 0.45, 0.55, 0.58, 0.64 and
        cnr-2000 0.45, 0.52, 0.56, 0.64, rising to 0.85 = α (96–99 rounds); email-Eu-core 0.24,
        0.28, 0.43, 0.58, 0.72 (94 rounds).  A probe that never trips needs at most about 35
        rounds to 1e-8.  One that trips has spent 4–5 rounds; after it the SCC engine is faster
        than the plain power iteration's remaining rounds on every graph measured (2 quiet cores,
        tol 1e-8: dblp-2010, 89% of its arcs in the largest component, 427 against 500 ms;
        cnr-2000 383 against 765; email-Eu-core, 97%, 2.1 against 9.4 ms on the shared machine).
        The Anderson-accelerated power iteration beats it on dblp-2010 (259 against 310 ms,
        2026-11-28) but loses on a random giant component with a closed ring (120 against 51 ms),
        with a similar share and ratio, so the hand-over stays (docs/history/benchmarks-notebook.md, "PageRank:
        two formulations on the CPU, against scipy and igraph PRPACK", which also has how the
        probes went on the benchmark graphs).
    delegate_threads : int
        With at least this many threads, a linear system whose components split over the threads
        (at least the SCC engine's :attr:`~digraph.dispatch.engines.scc.cpu.DagPushSettings.split_arcs`
        inside arcs) hold more than ``delegate_share`` of the arcs (one giant component: nothing
        for the DAG to order) runs ``bsp``'s dense rounds instead of the SCC engine (``mode=None``
        only; the reason is in ``stats["route"]``).  Measured on 16 cores (docs/history/benchmarks-notebook.md,
        "Threads: splitting the large components, and when ``bsp`` is better (16 cores)"): with 8
        and 16 threads ``bsp`` beats the vertex state on R-MAT 2^20 (98% of the arcs in one
        component) and dblp-2010 (89%), not on cnr-2000 (62% in split components); with 2 and 4
        threads the vertex state wins on all three.  One machine of 16 cores: a first cut, not a
        tuned model.
    delegate_share : float
        See ``delegate_threads`` (the same measurement): 0.75 lies between cnr-2000's 62% and
        dblp-2010's 89%.
    cluster_share : float
        Min/max systems (SSSP) on one GPU run ``"cluster"`` when BFS balls of
        :attr:`~digraph.dispatch.engines.cluster.gpu.ClusterSettings.size` vertices keep at
        least this share of their arcs inside
        (:func:`~digraph.preprocess.clusters.internal_share_sample`, 32 balls, a few
        milliseconds) and no in-degree exceeds ``cluster_max_in_degree``: road-like graphs.
        Measured on an H200 (docs/history/benchmarks-notebook.md, "SSSP on road-like graphs on one GPU"), time
        by clusters / by ``vertex-async`` (its worklist on the GPU): the 1000 × 1000 grid (share
        0.94) 29.8 / 94.4 ms, the 2000 × 2000 grid and a geometric graph of 4 M vertices (0.94)
        102 / 2,159 and 106 / 1,916 ms (``vertex-async`` with host-driven rounds then).  Below
        the cut the two are within 15% on the small SNAP graphs and dblp-2010 (share 0.45:
        5.1 / 5.8 ms), and clusters lose 1.5–3.6× on an Erdős–Rényi-like graph of 16.8 M arcs,
        cnr-2000 (0.77) and R-MAT 2^20.
    reach_share : float
        Automatic choice (any device) for a linear system whose constant term is zero but on a few
        vertices (adsorption's seeds, a personalised PageRank): when the vertices it reaches by
        out-arcs have at most this share of the arcs, the system is solved on them alone
        (:mod:`digraph.dispatch.reach`; the answer is exactly 0 elsewhere).  The search gives up
        after reading that many arcs, so a wide reach costs at most this share of one pass.
        The restricted graph is built (and routed: its condensation is not kept between runs)
        in time proportional to its arcs, while any engine on the whole graph reads every arc at
        least once.  Measured where it pays (``benchmarks/bench_reach.py --shares``: a random
        graph of 2^18 vertices and 16 arcs each with a closed part of the given share of the
        arcs, adsorption seeded in it, part against whole): on 2 quiet cores 0.10× at 2%,
        0.35× at 12.5%, 0.68× at 25%, 1.25× at 50%, 1.6× at 90%; on an H200 0.22× at 2%, 0.62×
        at 12.5%, 2.8× at 50%: an eighth is below both crossovers.  Measured (docs/history/benchmarks-notebook.md, "Small reach: solving
        where the seeds reach"; 10 seeds of smallest out-degree, tol 1e-8): on 2 quiet cores,
        adsorption on cnr-2000 197.5 → 7.4 ms, on cit-HepPh 24.0 → 1.4, personalised PageRank
        34.9 → 7.9 and 8.0 → 1.7; on an H200, adsorption (`bsp`) 124.6 → 21.0 and 54.3 → 7.5 ms,
        but personalised PageRank (`power`) 15.6 → 15.9 and 5.6 → 8.1 ms: its rounds are
        launches whatever the size, and the part is a new graph to set up on the GPU, so on GPUs
        only systems that are not normalised are restricted.
    cluster_max_in_degree : int
        See ``cluster_share``.  Graphs with hubs lose by clusters: cnr-2000 (in-degree up to
        18,235) 31.8 / 12.5 ms, R-MAT 2^20 (69,162) 46.8 / 13.0; those up to 846 (p2p-Gnutella,
        wiki-Vote, dblp-2010, cit-HepPh) 0.88–1.07×.
    path_min_arcs : int
        Min/max systems on one GPU that are not road-like run ``"path"`` when the graph already
        holds its PathSet (an earlier path run with the default ``preprocess=``: the walk's
        preprocessing is paid) and has at least this many arcs; otherwise ``"vertex-async"``.
        Measured on an H200 (SSSP from the vertex of largest out-degree, unit weights, warm
        runs, ``bench_gpu_path_rounds.py``; docs/history/benchmarks-notebook.md, "The walk's fixed costs"),
        ``path`` / ``vertex-async``: cnr-2000 6.06 / 10.9 ms, dblp-2010 5.90 / 6.82, cit-HepPh
        4.75 / 5.90, R-MAT 2^18 (compact) 5.14 / 5.39, wiki-Vote (103,689 arcs) 1.99 / 2.33;
        below, its fixed part shows: p2p-Gnutella25 (54,705 arcs) 2.40 / 1.98, p2p-Gnutella04
        2.89 / 2.45, p2p-Gnutella08 2.57 / 2.27, email-Eu-core 2.27 / 2.30.  2^16 lies between
        wiki-Vote and p2p-Gnutella25.
    """

    power_share: float = 0.85
    bsp_share: float = 0.85
    probe_share: float = 0.7
    delegate_threads: int = 8
    delegate_share: float = 0.75
    cluster_share: float = 0.85
    cluster_max_in_degree: int = 2048
    reach_share: float = 0.125
    path_min_arcs: int = 1 << 16
