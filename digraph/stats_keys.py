"""The documented keys of a run's ``stats``: :data:`STATS_GROUPS` (key → one-line meaning, in
groups), :data:`STATS_KEYS`, :data:`STATS_FIELDS` and their markdown table :func:`stats_table`
(docs/interface.md); all four are re-exported by :mod:`digraph.result`.

The keys every run has, and those a user reads whatever engine ran (the certificate, the
router's, the GPUs', the timings), sit at the top of ``stats``.  An engine's internals sit under
the key of their group (``stats["scc"]["split"]``, ``stats["power"]["anderson"]``): engines
write them flat while they run, under the name the table gives as *written*, and
:func:`group_internals` moves them into their group when the run ends.
"""

from types import MappingProxyType
from typing import NamedTuple

__all__ = ["STATS_KEYS", "STATS_GROUPS", "STATS_FIELDS", "Group", "group_internals",
           "stats_table"]


class Group(NamedTuple):
    """One group of documented keys.

    ``key`` None: the keys sit at the top of ``stats``.  Otherwise they sit in the dict
    ``stats[key]``, each under its field name: the written key with ``prefix`` taken off, or
    the name ``renamed`` gives it.
    """
    title: str
    key: object
    prefix: str
    keys: MappingProxyType
    renamed: MappingProxyType = MappingProxyType({})

    def field(self, written):
        """The name ``written`` has in a finished run's ``stats`` (inside ``stats[key]``)."""
        return self.renamed.get(written) or written.removeprefix(self.prefix)


STATS_GROUPS = (
    Group("Every run", None, "", MappingProxyType({
        "algorithm": "the algorithm's name (`Algorithm.name`)",
        "mode": "the mode that ran (`digraph.dispatch.route.modes.MODES`): after a power probe "
                "handed over, the mode it handed to; an engine's own fallback is in "
                "`finished_by`",
        "engine": "`\"<where>-<mode>\"` (`cpu-scc`, `gpu-power`, `multi-gpu-bsp`, ...)",
        "route": "the router's plan, a dict: `engine` and `mode` planned, `placement` (in "
                 "words: `cpu, 2 threads`, `cuda:0`, `cuda:0,1 (2 GPUs)`), `requested` (the "
                 "`mode=` asked for), `code` (why, one of `digraph.dispatch.route.plans.CODES`), "
                 "`reason` (one sentence), `considered` (the tests of the automatic choice: "
                 "`engine`, `test`, `value`, `threshold`, `held`), `placed` (the placement's "
                 "decisions: `code`, `why`), `restricted` (the reach the system was solved on, "
                 "or None), `after_stall` (the mode a stalled linear run goes on in, from the "
                 "state reached: `digraph.dispatch.engines.registry.Engine.after_stall`; None: "
                 "none), `exploring` (the automatic choice still times engines on the graph: "
                 "later runs may take another) and `steps` (each hand-over: `to`, `code`, "
                 "`why`, `round`)",
        "requested_mode": "the `mode=` asked for; None: automatic",
        "device": "the device, normalised: `cpu`, `cuda`, `cuda:N` or `cuda:0,1,...`",
        "threads": "Numba threads the CPU run used (a Dask cluster: its workers' threads, "
                   "summed); 0 on GPUs",
        "converged": "whether the run met its stop rule (linear systems: `error_bound <= tol` or "
                     "`floor_limited`); an unconverged run raises `ConvergenceError` with its "
                     "result",
        "rounds": "rounds of the engine; `scc`: sweeps on the DAG's critical path; `peel`: peeling "
                  "levels; after a `power` probe handed over, the probe's rounds included",
        "vertex_updates": "times a vertex's state was recomputed or written (path modes: one per "
                          "arc sent; `peel`: every vertex once)",
        "arc_updates": "arcs processed: a value sent or pulled along an arc (a dense round counts "
                       "every arc; k-core: neighbour entries read)",
        "dense_rounds": "rounds over every arc: `bsp`'s pull rounds, `power` and sharded linear "
                        "rounds, h-index rounds whose frontier is every vertex",
        "sparse_rounds": "rounds that push from a frontier: `bsp` (CPU and GPUs), sharded "
                         "min/max rounds, h-index rounds on part of the vertices",
        "paths_processed": "path walks (path modes; on GPUs the paths of the units walked); 0 "
                           "elsewhere",
        "partitions_processed": "partitions scheduled, summed over the rounds (CPU path modes; "
                                "GPU path modes: units walked); 0 elsewhere",
        "bytes_h2d": "bytes copied from the host to GPUs; 0 on the CPU",
        "bytes_d2h": "bytes copied from GPUs to the host; 0 on the CPU",
    })),
    Group("Linear systems: the certificate", None, "", MappingProxyType({
        "error_bound": "the certified bound on the answer's L1 error the run stopped with (every "
                       "linear run)",
        "residual_l1": "L1 norm of the residual `b + A x - x` recomputed from the final state "
                       "(push engines; not `power`)",
        "floor_limited": "True when `tol` lies below what float64 can certify on the graph and the "
                         "run stopped at that floor (`error_bound > tol` then)",
        "error_floor": "with `floor_limited`: the bound that the rounding of the residual alone "
                       "allows",
        "recertified": "failed certifications after which a push engine went on towards a tighter "
                       "target (at most `convergence.MAX_RECERTIFICATIONS`)",
        "certification_refused": "True when an engine claimed convergence with `error_bound > tol` "
                                 "and no `floor_limited`: `digraph.run` reports it unconverged",
        "error_route": "systems whose columns may sum to 1 or more (adsorption): `\"dual\"` (the "
                       "bound uses verified dual weights) or `\"linf\"` (none found)",
        "dual_sweeps": "sweeps that computed the dual weights; 0 when an earlier run's were reused",
        "dual_max": "the largest dual weight (it plays `1/(1 - gamma1)` in the engines' budgets)",
        "dual_skipped": "Dask cluster, a graph held by the workers: why no dual weights were "
                        "sought there (a worker's memory_limit below its shard with the sweeps' "
                        "buffers); the bound takes the L-inf route",
    })),
    Group("Router, probe and hand-over", None, "", MappingProxyType({
        "threads_asked": "the CPU threads the run could use (`threads=`, or Numba's count) "
                         "when fewer ran (`route.placed` says why)",
        "reach_vertices": "automatic, a linear system whose `b` reaches few arcs (on GPUs, "
                          "not PageRank): the vertices it reaches, on which alone it was solved "
                          "(the answer is 0 elsewhere; `route.RouteSettings.reach_share`); the "
                          "counters are those of that part",
        "reach_arcs": "the arcs out of those vertices (see `reach_vertices`)",
        "probe_rounds": "automatic PageRank on the CPU: the round at which the `power` probe "
                        "tripped (then handed over or, judged faster, went on: "
                        "`route.steps`; its rounds count in `rounds`)",
        "probe_ratio": "the ratio of successive differences that tripped the probe (above "
                       "`route.RouteSettings.probe_share` times gamma)",
        "probe_rate": "the mean ratio of successive differences over the probe's accelerated "
                      "rounds after it tripped (`route.RouteSettings.probe_judge_rounds`), which "
                      "the router's estimate of the rounds left reads",
        "finished_by": "the mode an engine handed over to, which finished the run (e.g. "
                       "`vertex-async` once the path walk's mirrors hit their rounding floor)",
        "handed_over": "every hand-over inside the run: a list of `{\"to\", \"why\", \"round\"}`",
        "stalled_at": "`{\"round\", \"bound\"}` where a linear push engine's bound stopped "
                      "falling (`driver.Stall`); the other push engine, if any, finished the run",
    })),
    Group("GPUs", None, "", MappingProxyType({
        "gpu": "the GPU's name, or `\"CUDA simulator\"`",
        "gpus": "GPUs used (fewer than named when the graph has too few arcs per GPU; 1: the "
                "one-GPU engine ran); path modes: GPUs of the dispatcher",
        "gpus_named": "GPUs named in `device`",
        "exchange": "the transport between GPUs: `\"p2p\"`, `\"nccl\"`, or `\"host (simulator)\"`",
        "bytes_between_gpus": "bytes exchanged between GPUs: the rounds' all-gathers and "
                              "all-reduces; path modes: the dispatcher's replica exchange (12 a "
                              "changed (vertex, value), 8 a value pulled back, plus the mirrors "
                              "of stolen partitions); `scc`: the values sent after each unit (8 "
                              "a value), the answer's gather and the giants' sharded rounds",
        "gpu_work_kept": "linear: True when the previous run's device vectors on this graph and "
                         "these GPUs were reused (sharded `bsp`; `power` on one GPU and sharded; "
                         "`scc` and the path modes on one GPU)",
    })),
    Group("Timings (seconds)", None, "", MappingProxyType({
        "time_load": "loading the graph (0 when a `Graph` was given)",
        "time_preprocess": "building the PathSet (path modes) or the condensation (`scc`), "
                           "`time_route` included",
        "time_route": "the router's choice (a condensation built to decide)",
        "time_transfer": "copies between the host and GPUs (0 on the CPU and in the simulator)",
        "time_compile": "Numba compiling or loading kernels from its cache, wherever in the run "
                        "(`digraph.compiling`)",
        "time_compute": "the engine's work, compilation and GPU copies left out",
        "time_total": "the whole `digraph.run` call",
        "time_dual": "computing (or looking up) the dual weights, with `error_route`",
    })),
    Group("The DAG schedule (`scc` and the CPU path modes)", "dag", "", MappingProxyType({
        "state": "`\"vertex\"` (`scc`: one residual per vertex) or `\"arc\"` (CPU path modes: "
                 "per-arc mirrors)",
        "priority": "the scheduling priority: path modes `\"pending\"`, `\"paper\"` or `\"none\"`; "
                    "`scc` `\"pending\"` or `\"none\"`",
        "scc_vertices": "SCC-vertices: the graph's strongly connected components (`scc`) or the "
                        "PathSet's SCC-vertices (CPU path modes)",
        "scc_ran": "SCC-vertices that ran at least once",
        "scc_ran_once": "SCC-vertices done in one sweep (`scc`) or that ran in one round only (CPU "
                        "path modes)",
        "layers": "`scc`: levels of the condensation's DAG",
        "layer_rounds": "rounds per DAG layer, a list (`scc`: sweeps of each level's slowest "
                        "component; path modes: rounds in which the layer sent)",
        "layer_arc_updates": "arcs sent per DAG layer, a list (`scc`, path modes)",
        "arcs_examined": "arcs (or mirrors) read to find or send what is pending: path modes' "
                         "checks and walks, the dispatcher's workers; `scc`: equals "
                         "`arc_updates`",
    })),
    Group("`scc`", "scc", "scc_", MappingProxyType({
        "vertex_order": "`scc`: the vertex order inside a component, `\"vertex\"` (ids; always "
                        "from `digraph.run`) or `\"path\"`",
        "scc_split": "`scc`: components split over the threads (`engines.scc.cpu.splits`: "
                     "`DagPushSettings.split_arcs` inside arcs or more, where few enough cross "
                     "the chunks)",
        "sweeps": "`scc`: sweeps of all components, summed (path modes count `path.sweeps`)",
        "scc_phases": "`scc` on a GPU: phases of its schedule (each a queue-kernel launch for the "
                      "light components, then rounds over the GPU for the heavy ones)",
        "scc_heavy": "`scc` on a GPU: components run in rounds over the whole GPU "
                     "(`GpuSccSettings.heavy_arcs` inside arcs or more, or too many vertices for "
                     "a block)",
        "heavy_rounds": "`scc` on a GPU: rounds of each phase's heavy components, a list",
        "scc_heavy_anderson": "`scc` on a GPU: the Anderson memory each heavy group's rounds ran "
                              "with (0: the plain rounds; `GpuSccSettings.heavy_anderson`, "
                              "`heavy_anderson_arcs`), a list",
        "scc_direct": "`scc`: small components solved exactly by elimination in one pass "
                      "(`engines.scc.cpu.DagPushSettings.direct_vertices` vertices or fewer on "
                      "the CPU, `smx.cuda.scc.DK` on a GPU)",
        "scc_giants": "`scc` over several GPUs: the giant components run sharded over the GPUs "
                      "(component, arcs inside, rounds, GPUs, the sharded run's error bound), a "
                      "list of dicts",
        "scc_phase_ms": "`scc` on a GPU: host time of the set-up, of each phase's light and heavy "
                        "part, and of the counters and certificate, a list (ms)",
        "scc_sweep_reads": "`scc` on a GPU: arcs inside swept light components read by the "
                           "sweeps, every in-arc of the component each sweep (`arc_updates` "
                           "counts only the arcs of vertices that pushed)",
        "scc_light_trace": "`scc` on a GPU with `GpuSccSettings(trace_light=True)` only: per "
                           "component, the global timer (ns) when its block took its queue slot, "
                           "got it, wrote its values, queued its successors; the slot, block, "
                           "multiprocessor and sweeps (an int64 array, a row each)",
        "scc_heavy_trace": "`scc` on a GPU with `GpuSccSettings(trace_heavy=True)` only: per heavy "
                           "group run in one launch, rows of (global timer in ns when the round's "
                           "pushes were done, when the round was done, arcs pushed so far) at its "
                           "start and for each round (a list of int64 arrays)",
        "time_condensation": "`scc`: building the condensation inside the engine (0 from "
                             "`digraph.run`, which builds it in `time_preprocess`)",
    })),
    Group("Path modes", "path", "path_", MappingProxyType({
        "path_sweeps": "linear systems (CPU, GPU, the path dispatcher): passes over the layers, "
                       "each after a failed final certification with a 4x lower budget "
                       "(`paths.PathSettings.max_sweeps`); written from 2 on",
        "fused_check": "CPU: the check of pending mass fused into the walk "
                       "(`paths.PathSettings.fuse_check`; not an option of `digraph.run`)",
        "layer_window": "CPU: `layer_window=` (1: layer by layer; W: the next W - 1 layers' split "
                        "SCC-vertices run ahead; 0: all layers)",
        "run_ahead_local": "CPU: whether running ahead takes whole-SCC partitions too "
                           "(`paths.PathSettings.run_ahead_local`; not an option of `digraph.run`)",
        "run_ahead_arc_updates": "CPU: arcs sent in layers above the lowest unfinished one "
                                 "(`layer_window` other than 1)",
        "short_path_push": "CPU: `short_path_push=` K (cold paths of at most K arcs are pushed per "
                           "vertex group, not walked)",
        "pushed_paths": "CPU: paths pushed per vertex group instead of walked",
        "pushed_arcs": "CPU: the arcs of those paths",
        "push_groups": "CPU: the (partition, source vertex) groups of those arcs, one mirror each",
        "vertex_pushes": "CPU: group pushes made",
        "groups_examined": "CPU: groups read by the checks and walks",
        "local_sweeps": "CPU: sweeps of locally converging partitions (whole SCC-vertices) beyond "
                        "their round's first",
        "ablation": "CPU: `{\"dag\": bool, \"skip\": bool}` when `paths.solve` ran without the DAG "
                    "order or without skipping idle partitions (benchmarks; not from "
                    "`digraph.run`)",
        "note": "a path engine given k-core directly ran `vertex-async` instead (`digraph.run` "
                "refuses k-core in the path modes)",
        "proxy_vertices": "GPU, linear: hub vertices whose in-arcs each block sums in shared "
                          "memory (in-degree `GpuSettings.proxy_min_in_degree` or more)",
        "processed_path_lengths": "CPU path modes: `{length: walks}` of the paths walked (last "
                                  "bin: 64 arcs or more); `{}` in `scc`",
        "path_graph_launches": "one GPU, path modes on linear systems: launches of the CUDA graph "
                               "of `GpuPathSettings.rounds_per_check` rounds (a kept work's "
                               "rounds replayed)",
        "path_graph_failed": "one GPU, path modes: why the rounds could not be captured into a "
                             "CUDA graph (they then launched one kernel at a time)",
        "time_representation": "CPU path modes: building the paths' representation (0 when kept "
                               "on the PathSet)",
        "workers": "workers, one per GPU",
        "exchange_messages": "batches sent from a worker to another vertex owner",
        "worker_arcs": "arcs walked by each worker over the run, a list",
        "worker_idle_share": "1 - a worker's arcs / the busiest worker's, averaged over the "
                             "rounds, a list",
        "steals": "partitions of a split SCC-vertex moved from the busiest worker to the least "
                  "loaded (written once one moved)",
    })),
    Group("`power`", "power", "power_", MappingProxyType({
        "gamma": "gamma1, the largest column sum of A (alpha for PageRank): the bound falls by it "
                 "a round; the affine iteration (one GPU, a cluster): the factor its route's "
                 "bound falls by (`1 - 1/dual_max` on the dual route, gamma_inf on the L-inf "
                 "route)",
        "power_map": "GPU and Dask cluster: the map the rounds iterate: `\"google\"` "
                     "(normalised systems: the Google matrix with its rank-one term) or "
                     "`\"affine\"` (one GPU or a cluster, systems not normalised: `x <- b + A "
                     "x`, `engines/power/gpu_affine.py`, `engines/power/cluster_maps.py`)",
        "dangling_vertices": "CPU, with `dangling=`: vertices without out-weight, whose mass "
                             "follows the dangling vector",
        "power_anderson": "the memory of the Anderson acceleration that ran (kept a history: "
                          "CPU from the round the rates slow down, a cluster's CPU workers the "
                          "round after, `power.PowerSettings.anderson_memory`; GPU from the start, "
                          "`PowerGpuSettings.anderson`, unless the third round's ratio switched it "
                          "off); 0: the plain iteration throughout (CPU: also near the floor)",
        "power_sweeps": "CPU: Gauss-Seidel sweeps that accelerated the rounds once their rate "
                        "slowed (`power.PowerSettings.accelerator`, `\"gauss-seidel\"`); each is "
                        "a round",
        "power_checks": "CPU: power rounds run to check a sweep that looked converged (the "
                        "answer is such a round's power step, the stop its bound); each reads "
                        "the arcs once more (in `arc_updates`)",
        "anderson_mixes": "rounds whose iterate was Anderson's mix rather than the last power "
                          "step",
        "anderson_restarts": "times the Anderson history was dropped (a difference grew, or an "
                             "untrusted solve)",
        "anderson_gave_up": "one GPU: Anderson switched off for the rest of the run after more "
                            "than `PowerGpuSettings.anderson_restarts` restarts (its mixes kept "
                            "overshooting)",
        "power_sum": "CPU: how the pull summed each vertex's terms: `\"plain\"` (its "
                     "rounding counted in the bound) or `\"compensated\"` (Neumaier's sum, where "
                     "the plain sum's rounding could reach `tol`: "
                     "`power.PowerSettings.plain_sum_margin`)",
        "power_group": "GPU: threads per vertex of the grouped pull (a power of two, 1 to 32)",
        "power_pull": "GPU: `\"grouped\"`, `\"binned\"` by in-degree (graphs of "
                      "`PowerGpuSettings.bin_arcs` arcs or more) or `\"cusparse\"` "
                      "(`PowerGpuSettings.cusparse_arcs`); several GPUs: per GPU when they differ",
        "power_graph_launches": "GPU: rounds whose pull and teleport ran as one CUDA graph "
                                "(`PowerGpuSettings.graph_rounds`)",
        "power_graph_failed": "GPU: why a round could not be captured into a CUDA graph (the "
                              "rounds then launched one kernel at a time)",
        "anderson_probe_ratio": "GPU: the third plain round's ratio of differences, which "
                                "switched Anderson off when below "
                                "`PowerGpuSettings.anderson_ratio` × γ",
        "power_packed": "several GPUs, `power`: whether a round copied to each GPU only the "
                        "entries of `z` its in-arcs read (`PowerGpuSettings.pack_share`)",
        "power_exchange": "several GPUs, `power`: how `z` went between GPUs: `\"peer writes\"` "
                          "(each GPU's kernel wrote the entries the others read into their "
                          "compact `z`, `PowerGpuSettings.shard_push`), `\"packed copies\"`, "
                          "`\"whole ranges\"` or `\"none\"`",
        "power_answer_early": "several GPUs, `power`: whether the answer's copies to the host "
                              "were queued behind the last round on the GPUs, before the host "
                              "read its bound (the last two differences foretold the stop)",
        "power_layout": "several GPUs, `power`: which vertices each GPU held (consecutive "
                        "ranges or blocks dealt, `PowerGpuSettings.shard_layout`) and why",
        "time_sync_wait": "sharded `power`: the host's time waiting for each round's sums, "
                          "read a round late (the rest of `sharded.time_rounds`: queueing)",
        "power_rounds_past_stop": "sharded `power`: rounds the GPUs ran past the stopping one "
                                  "(queued ahead of the host's read of the stop; 0 when the "
                                  "last two differences foretold the stop)",
    })),
    Group("`peel`", "peel", "peel_", renamed=MappingProxyType({"peel": "schedule"}),
          keys=MappingProxyType({
        "peel": "the schedule that ran: `\"bz\"` (Batagelj-Zaversnik) or `\"pkc\"` (parallel PKC) "
                "on the CPU, `\"gpu\"` (PKC's levels in one launch) on one GPU",
        "peel_scans": "level scans of PKC and of the GPU peel (levels, plus empty scans that "
                      "jumped ahead); 0 for BZ",
        "peel_blocks": "one GPU: thread blocks of the peel's one launch",
        "peel_barriers": "one GPU: grid barriers the peel's blocks passed (a level and each of "
                         "its spill steps end at one)",
        "peel_spilled": "one GPU: vertices peeled in spill steps, dealt out to every block: "
                        "those taken to a level beyond a block's shared queue, and hubs",
        "peel_tail_steps": "one GPU: steps block 0 ran alone, once the remaining vertices' "
                           "neighbour entries were at most `PeelGpuSettings.tail_arcs`",
    })),
    Group("`cluster` (one GPU, min/max systems)", "cluster", "cluster_", MappingProxyType({
        "clusters": "clusters the graph was cut into (`digraph.preprocess.clusters`)",
        "cluster_size": "the largest cluster allowed (threads per block)",
        "cluster_internal_share": "share of the arcs whose two ends lie in one cluster",
        "clusters_run": "cluster runs (a thread block relaxing one cluster to its local "
                        "fixpoint), summed over the rounds",
        "cluster_sweeps": "shared-memory sweeps of those runs, summed (a run's last sweep "
                          "changes nothing)",
        "cluster_delta": "Δ of the priority over clusters (`ClusterSettings.priority_hops` × the "
                         "mean arc weight); None: every queued cluster ran each round",
    })),
    Group("A Dask cluster (`cluster=`)", "dask", "dask_", MappingProxyType({
        "dask_workers": "workers the run used, one shard (vertex range) each",
        "dask_addresses": "their addresses, in the order of the shards, a list",
        "dask_arcs": "in-arcs of each worker's shard, a list",
        "dask_vertices": "vertices of each worker's range, a list",
        "dask_shards_reused": "True when every worker already held its shard of this graph "
                              "(an earlier run on the same graph and workers)",
        "dask_shard_loads": "shards this run cut and loaded onto the workers (0 when reused)",
        "dask_shard_runs": "runs each worker's shard has served, this one included, a list",
        "dask_bytes_between_workers": "bytes of values sent worker to worker over the run (the "
                                      "entries of `z` each other shard reads, the rounds' sums; "
                                      "the start's exchange included)",
        "dask_bytes_per_round": "`dask.bytes_between_workers` over the rounds and the start",
        "dask_exchange_s": "seconds a round each worker spent sending its entries and waiting "
                           "for the others', a list",
        "dask_idle_share": "1 - a worker's kernel seconds / the rounds' wall time on the "
                           "client, a list",
        "dask_round_s": "wall seconds a round on the client (a call over the rounds it ran)",
        "dask_batches": "calls that ran the power iteration's rounds (each a batch of rounds "
                        "the workers ran among themselves)",
        "dask_time_setup": "finding or loading the shards and starting the run (counted in "
                           "`time_preprocess`)",
        "dask_shard_bytes": "each shard's estimated bytes (in-arcs, offsets, the run's vectors), "
                            "checked against its worker's `memory_limit`, a list",
        "dask_checkpoint_every": "`checkpoint_every=`: rounds between two checkpoints of the "
                                 "iterate on the client",
        "dask_checkpoints": "checkpoints taken (the iterate's ranges gathered to the client)",
        "dask_checkpoint_bytes": "bytes gathered to the client for the checkpoints",
        "dask_checkpoint_s": "seconds the checkpoints took on the client",
        "dask_restarts": "restarts after a lost worker (re-cut, reload, resume from a checkpoint)",
        "dask_lost_workers": "addresses of the workers lost mid-run, in order, a list",
        "dask_rounds_redone": "rounds run again after the restarts (those since the checkpoint "
                              "each restart resumed from)",
    })),
    Group("`bsp` and `vertex-async`", "push", "", MappingProxyType({
        "vertices_scanned": "vertices whose residual the rounds read to find their frontier and "
                            "norms: every vertex for a full scan (and for a `bsp` push round "
                            "without a residual set), only the flagged ones while the residual "
                            "is non-zero on few vertices (`bsp.BspSettings.set_share`)",
        "queue": "the order of the small-frontier phases: `\"fifo\"`, or `\"heap\"` (best value "
                 "first: `plus` along non-negative arc values, as weighted SSSP)",
        "queue_phases": "small-frontier phases run on one thread (each one round)",
        "streamed_batches": "`bsp` on a linear system with the arcs streamed from host memory "
                            "(`batch_arcs=`, or arcs beyond free GPU memory): batches a round",
        "time_streamed_rounds": "GPU `bsp` streaming its arcs: the streamed rounds",
    })),
    Group("Several GPUs: the sharded rounds", "sharded", "gpu_", MappingProxyType({
        "gpu_arcs": "arcs of each GPU's shard, a list; `scc` over several GPUs: arcs inside the "
                    "components dealt to each",
        "gpu_components": "`scc` over several GPUs: components dealt to each GPU (a giant counted "
                          "on the first), a list",
        "gpu_vertices": "vertices of each GPU's range, a list",
        "gpu_busy_s": "kernel seconds of each GPU (CUDA events; the simulator: arc share times "
                      "`sharded.time_rounds`), a list",
        "gpu_idle_share": "1 - busy / `sharded.time_rounds` for each GPU, a list",
        "gpu_exchange_wait_s": "linear, real GPUs: seconds each GPU's pull waited for the "
                               "exchange, a list (when any waited)",
        "gpu_recuts": "linear: re-cuts of the shard ranges from earlier runs' kernel times on "
                      "this graph and these GPUs",
        "gpu_sends": "linear: vertices of each GPU's range whose sends are exchanged every round, "
                     "a list",
        "gpu_sends_first": "linear: the same in the first two rounds (sources without in-arcs "
                           "too), a list",
        "pipelined": "linear: rounds queued one ahead of the host (`MultiGpuSettings.pipeline`)",
        "overlapped": "linear: the exchange ran beside each GPU's sums of its own range's arcs "
                      "(real GPUs)",
        "time_setup": "sharded, linear: uploading the shards and preparing the rounds",
        "time_launch": "sharded, linear: the host's time queueing rounds",
        "time_rounds": "sharded: wall time of the rounds",
        "time_certify": "sharded, linear: the certificates",
        "time_gather": "sharded, linear: bringing `x` to the host (divided by its sum where the "
                       "algorithm asks)",
    })),
)
"""The keys of :class:`RunStats`, in groups: (title, read-only mapping key → one-line meaning)."""

"""The keys of a run's ``stats``, in groups (:class:`Group`), each key as an engine writes it →
its one-line meaning."""

STATS_KEYS = MappingProxyType({k: d for g in STATS_GROUPS for k, d in g.keys.items()})
"""Every key an engine may write into a run's ``stats`` → its meaning (read-only, in the order
of :data:`STATS_GROUPS`; ``tests/test_stats_keys.py`` checks that runs and sources stay within
it)."""

STATS_FIELDS = MappingProxyType({k: (g.key, g.field(k)) for g in STATS_GROUPS if g.key
                                 for k in g.keys})
"""Each engine-internal key as written → ``(group, field)``: where a finished run holds it,
``stats[group][field]``."""


def group_internals(stats):
    """Move the engine-internal keys of ``stats`` (those of :data:`STATS_FIELDS`) into their
    groups, in place: ``stats[group][field]``; the others stay at the top.  Returns ``stats``."""
    for written in [k for k in stats if k in STATS_FIELDS]:
        group, field = STATS_FIELDS[written]
        stats.setdefault(group, {})[field] = stats.pop(written)
    return stats


def stats_table():
    """The markdown table of :data:`STATS_KEYS` (docs/interface.md, "Run statistics"): one row
    per key, its group named on the group's first row; a grouped key as
    ``group.field`` (written by the engines as the name in parentheses, where it differs)."""
    rows = ["| group | key | meaning |", "|---|---|---|"]
    for g in STATS_GROUPS:
        for i, (k, d) in enumerate(g.keys.items()):
            name = f"`{k}`"
            if g.key:
                field = g.field(k)
                name = f"`{g.key}.{field}`" + ("" if field == k else f" (`{k}`)")
            title = g.title + (f": `stats[\"{g.key}\"]`" if g.key else "")
            rows.append(f"| {title if i == 0 else ''} | {name} | "
                        f"{d.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"
