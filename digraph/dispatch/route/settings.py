"""The thresholds of the router's automatic choice (:class:`RouteSettings`), each citing the
measurement it comes from."""

from dataclasses import dataclass

from ..settings import register

__all__ = ["RouteSettings", "DEFAULT"]


@dataclass(frozen=True)
class RouteSettings:
    """The thresholds and cost models of the automatic choice (``mode=None``).  Each is a cut
    between two engines' measured times, or a model fitted to them; the measurements (commands,
    machines, tables) are in docs/history/benchmarks-notebook.md under the section each field
    names, or in the results file it names, and the figures that stood here are kept in
    docs/history/docstring-measurements.md.

    Attributes
    ----------
    power_share : float
        Normalised linear systems (PageRank) on the CPU start the power iteration as a probe
        (``probe_share``) when the largest strongly connected component may hold at least this
        share of the arcs: nothing much for the DAG to order, and the rank-one term makes the
        error fall at α·|λ2| a round.  Measured: "PageRank: two formulations on the CPU, against
        scipy and igraph PRPACK" (the crossover lies near 89%).
    bsp_share : float
        Linear systems that are not normalised (adsorption, a user's Katz) on the CPU time both
        the SCC engine and ``"bsp"`` on the graph when the largest component holds at least
        this share of the arcs (the engine of the lower estimate for the thread count first),
        and run the SCC engine otherwise.  The one-pass bound decides alone when it is below
        this share; above, the condensation is built to look (the bound is loose on web
        graphs) and kept for the SCC engine.  Measured: "Adsorption on the CPU and on one
        GPU"; on one giant component neither engine wins on every class
        (``corpus_cpu2_dev.json``: at 2 threads the SCC engine is the faster on the social,
        collaboration and geometric graphs, ``bsp`` on the grid).
    probe_min_arcs : int
        PageRank on the CPU starts no power probe on a graph of fewer arcs: there the SCC engine
        is as fast as the power iteration (both a fraction of a millisecond, the run's fixed
        part), and a first run compiles one engine instead of two (a probe that trips compiles
        both).  Measured: warm runs of the two on graphs of 6 to 4,096 arcs (the commit that
        set it), and the first answer, ``benchmarks/results/first_run_cpu2.json``.
    probe_share : float
        A power-iteration probe keeps going while each round's ``‖x_{k+1} − x_k‖₁`` is at most
        this share of γ (α for PageRank) times the previous one, from the third round on; a
        probe that trips has spent a few rounds and hands over to the SCC engine, faster than
        the plain iteration's remaining rounds there.  Measured (ratios of the first rounds,
        and the hand-over against the plain iteration): "PageRank: two formulations on the CPU,
        against scipy and igraph PRPACK".
    probe_judge_rounds : int
        A probe that trips does not hand over at once: Anderson's mixing starts, and after this
        many rounds the router compares the power iteration's estimated time left (the bound
        reached, the rate measured over these rounds, their seconds) with the SCC engine's or
        ``bsp``'s estimate in seconds (:func:`~digraph.dispatch.route.probe_judge`).  0 hands
        over at once (the ablation).
    probe_margin : float
        The power iteration goes on only when its estimated time left, times this margin, is
        below the other engine's estimate: the rate of Anderson's rounds is measured over a few
        of them (early ones fall faster than the later ones), and a wrong continuation costs
        more than a hand-over does.  Chosen from the verdicts and times of
        ``corpus_cpu2_h100_host.json`` and ``corpus_cpu2_dev.json``: below it the web graph's
        verdict turned with the machine's load.
    probe_measure_band : float
        Where the judge's two times (the power iteration's left, times ``probe_margin``, and
        the other engine's estimate) lie within this factor of each other, the verdict holds
        for the graph's first runs only: the next ones time the engine it chose, then the
        other, and later runs take the faster measured
        (:func:`~digraph.dispatch.route.measured.probe_measured`).  Chosen from the judge's
        ratios on one thread (``docs/history/docstring-measurements.md``): every wrong verdict lay
        within 1.4 of 1.
    probe_noise_cap : float
        The band above widens by the probe's own noise, the spread of its rounds' seconds
        (:attr:`digraph.dispatch.driver.Measure.spread`), up to this factor: on a host whose
        runs fall in a fast and a slow mode (all cores asked while other work holds some,
        ``spread_cpu16_h100_host.json``) one median of a few rounds is no firmer than its
        rounds, and the run times, not the judge, then decide.  1 turns the widening off.
    bsp_round_cost : float
        One ``bsp`` dense round's seconds over one plain power round's (both one pass over the
        arcs on the same threads): the unit that turns the CPU estimates, in passes, into
        seconds from the probe's own measured rounds.
    bsp_thread_exponent : float
        ``a`` of ``bsp``'s estimate on the CPU: ``T`` threads take ``T**-a`` of one thread's time
        (:mod:`digraph.dispatch.engines.push.cpu_cost`).
    scc_ratio_base, scc_ratio_split, scc_thread_exponent : float
        ``r0``, ``c`` and ``β`` of the SCC engine's estimate on the CPU, ``r0 / (1 − c·s) ·
        (T/2)**β`` times ``bsp``'s, ``s`` the share of the arcs in components split over the
        ``T`` threads (:mod:`digraph.dispatch.engines.scc.cpu_cost`).  Fitted (least squares
        on the logarithm of the ratio) to PageRank at tol 1e-8 on 2, 4, 8 and 16 threads of a
        16-core host on wiki-Vote, cnr-2000, dblp-2010 and R-MAT 2^18 (``s`` = 0, 0.62, 0.89
        and 0.98 as the engine split them then): ``benchmarks/results/cpu_threads_h100_host.json``.
        A large component the engine leaves whole is not in the model (one thread sweeps it;
        ``docs/history/benchmarks-notebook.md`` says why no term for it was kept).
    measure_band : float
        Where the two estimates of a CPU linear system (the SCC engine, ``bsp``) lie within this
        factor of each other, the model is unsure and the times measured on the graph decide:
        each run records its engine's seconds on the graph (per thread count, normalised or
        not), each engine runs until it is timed there (the least of its runs after its first,
        :data:`~digraph.dispatch.route.estimates.TIMED_RUNS` of them), and later runs take the
        faster.
    explore_cap : float
        A run of an engine that the measured choice times after another (code
        ``"measuring"``) stops at a safe point once it has run this many times the other's
        measured seconds, and the faster engine answers instead: the stopped engine counts as
        timed there, slower (:func:`~digraph.dispatch.route.estimates.record`).  Timing an
        engine two or three times slower costs one run of at most this much more instead of
        :data:`~digraph.dispatch.route.estimates.TIMED_RUNS` + 1 slow runs; the cap lies
        above ``measure_band``, the spread the estimates leave open, so an engine within it is
        timed to the end.  The clock stands still while Numba compiles.  Measured: "The
        router's timing runs: explore_cap".
    power_ratio, power_band : float
        The power iteration's estimate on the CPU, for normalised systems (PageRank) on a graph
        where no power probe runs (no component may hold ``power_share`` of the arcs):
        ``power_ratio`` times ``bsp``'s (:mod:`digraph.dispatch.engines.power.cpu_cost`), and
        where it lies within ``power_band`` of the lowest estimate, the seconds measured on the
        graph decide as with ``measure_band``.  The geometric mean and the spread (the largest
        factor either way) of the power iteration's time over ``bsp``'s on PageRank at tol 1e-8
        on the corpus graphs of that kind (cnr-2000, wiki-Vote, cit-HepPh, p2p-Gnutella25; 2 and
        16 threads: ``corpus_cpu2_dev.json``, ``corpus_cpu2_h100_host.json``,
        ``corpus_cpu16_h100_host.json``): its rounds are fewer, each costs more, and neither
        is known before a run.
    cluster_share : float
        Min/max systems (SSSP) on one GPU run ``"cluster"`` when BFS balls of
        :attr:`~digraph.dispatch.engines.cluster.gpu.ClusterSettings.size` vertices keep at
        least this share of their arcs inside
        (:func:`~digraph.preprocess.clusters.internal_share_sample`, 32 balls) and no in-degree
        exceeds ``cluster_max_in_degree``: road-like graphs, where a frontier advances one hop a
        round.  Measured: "SSSP on road-like graphs on one GPU".
    cluster_max_in_degree : int
        See ``cluster_share``: a cluster's thread walks its vertex's in-arcs alone every sweep,
        so graphs with hubs lose by clusters (the same measurement).
    reach_share : float
        A linear system whose constant term is zero but on a few vertices (adsorption's seeds, a
        personalised PageRank) is solved on the vertices it reaches by out-arcs alone when they
        have at most this share of the arcs (:mod:`digraph.dispatch.reach`; the answer is
        exactly 0 elsewhere).  The search gives up after reading that many arcs, so a wide reach
        costs at most this share of one pass; on GPUs only systems that are not normalised are
        restricted (the power iteration's rounds are launches whatever the size).  Measured:
        "Small reach: solving where the seeds reach".
    thread_arcs : int
        CPU runs use one thread for each this many arcs, at least one and at most the threads
        they may use (:func:`~digraph.dispatch.route.placing.cpu_threads`; 0: every thread they
        may use): below it a thread's share of a round costs less than its fork and join.
        Measured: the count past which more threads stop paying, in arcs a thread, on
        ``benchmarks/results/spread_threads_h100_host.json`` (PageRank's ``power`` at 1 to 16
        threads on graphs of the corpus and R-MAT) and
        ``benchmarks/results/spread_threads_cpu2_dev.json`` (small R-MAT graphs on 1 and 2
        threads).
    core_stall : float
        The share of a round each core adds when a CPU run takes every core the process may run
        on (a round waits for its slowest thread, and what else the host runs stops one): such
        a run of ``T`` threads leaves one core free when ``T * core_stall > 1 / (T - 1)``
        (:func:`~digraph.dispatch.route.placing.cpu_threads`; 0: never).  Fitted on the same
        file: the geometric mean over its cases of the time on 16 threads over the time on 15,
        less one, over 16.
    path_min_arcs : int
        Min/max systems on one GPU that are not road-like run ``"path"`` when the graph already
        holds its PathSet (an earlier path run with the default ``preprocess=``: the walk's
        preprocessing is paid) and has at least this many arcs; otherwise ``"vertex-async"``.
        Below, the walk's fixed costs outweigh what it saves.  Measured: "The walk's fixed
        costs".
    """

    power_share: float = 0.85
    bsp_share: float = 0.85
    probe_share: float = 0.7
    probe_min_arcs: int = 1 << 10
    probe_judge_rounds: int = 8
    probe_margin: float = 1.5
    probe_measure_band: float = 2.0
    probe_noise_cap: float = 4.0
    bsp_round_cost: float = 1.0
    bsp_thread_exponent: float = 0.6
    scc_ratio_base: float = 0.32
    scc_ratio_split: float = 0.64
    scc_thread_exponent: float = 0.33
    measure_band: float = 1.5
    explore_cap: float = 2.0
    power_ratio: float = 1.1
    power_band: float = 1.9
    cluster_share: float = 0.85
    cluster_max_in_degree: int = 2048
    reach_share: float = 0.125
    path_min_arcs: int = 1 << 16
    thread_arcs: int = 1 << 12
    core_stall: float = 0.014


DEFAULT = register(RouteSettings())
