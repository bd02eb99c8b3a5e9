"""The engines: which mode runs which families on which placement, and where its code is.

One :class:`Engine` a mode and placement kind (``"cpu"``: CPU threads, ``"gpu"``: one GPU,
``"gpus"``: several GPUs of one host, ``"cluster"``: the workers of a Dask cluster).  The router refuses what no engine runs
(:func:`refusal`); the placement runners (:mod:`.on_cpu`, :mod:`.on_gpu`, :mod:`.on_gpus`) find
a plan's engine here (:func:`find`) and call its entry, whose convention is the placement's:

* ``"cpu"``: ``entry(graph, system, *, tol, max_iter, stats, **extra)`` → (state, converged),
  ``extra`` what the mode's ``prepare(req, extra)`` made (the condensation's priority, the
  PathSet), timed as preprocessing;
* ``"gpu"``: ``entry(be, graph, system, *, mode, tol, max_iter, stats, options)`` → (device
  state, converged), on the backend :func:`digraph.dispatch.engines.one_gpu.solve` set up,
  ``options`` those of that function and what ``prepare`` made; the power iteration sets up its
  own (``resident=False``: ``entry(graph, system, *, tol, max_iter, stats, device)``);
* ``"gpus"``: ``entry(req, devices)`` → a function of no argument that solves, once the
  engine's kernels are warm and its structures built;
* ``"cluster"``: ``entry(req)`` → a function of no argument that solves on the plan's cluster
  (:attr:`~digraph.dispatch.placement.Placement.client` and ``workers``).

Adding an engine is one package under ``digraph/dispatch/engines/`` (its placements' modules)
and one :class:`Engine` row here; ``tests/dispatch/test_conformance.py`` then runs it on the
placements it names.  ``after_stall`` names the mode a stalled linear run goes on in, from the
state it reached (the hand-over of :mod:`digraph.dispatch.engines.push.cpu` and of the engines
that finish by vertex-level push).
"""

import importlib
import sys
from dataclasses import dataclass

from ..placement import KINDS

__all__ = ["Engine", "Estimate", "ENGINES", "find", "refusal", "FAMILIES"]

FAMILIES = ("linear", "monotone", "hindex")
_ALL = FAMILIES
_SUMS_AND_MINMAX = ("linear", "monotone")


@dataclass(frozen=True)
class Estimate:
    """What an engine's :attr:`Engine.estimate` says of a run: its modelled ``cost`` (in the unit
    its placement's estimates share: on the CPU, one thread's pass over the arcs) and the
    ``reason`` (the inputs that gave it, in words)."""

    cost: float
    reason: str


@dataclass(frozen=True)
class Engine:
    """One mode on one placement kind.

    Attributes
    ----------
    mode : str
        One of :data:`digraph.dispatch.route.modes.MODES`.
    kind : {"cpu", "gpu", "gpus", "cluster"}
    families : tuple of str
        The system families it runs (``"linear"``, ``"monotone"``, ``"hindex"``).
    entry : str
        ``"module:function"``, the module relative to :mod:`digraph.dispatch.engines`.
    prepare : str, optional
        ``"module:function"`` run before the rounds, timed as preprocessing (CPU).
    after_stall : str, optional
        The mode a stalled linear run goes on in, from the state it reached.
    resident : bool
        One GPU: the entry runs on the backend :func:`digraph.dispatch.engines.one_gpu.solve` sets
        up (False: it sets up its own).
    takes : tuple of str
        The options of :func:`digraph.run` only this engine takes besides the path modes' (one
        GPU's ``bsp``: ``batch_arcs``, linear systems).
    one_shard : tuple of str
        One GPU: the families whose systems of
        :attr:`~digraph.dispatch.engines.path.gpu_settings.GpuSettings.shard_arcs` arcs or more
        (that fit in the GPU's memory) run as one shard of the sharded engine instead: a leaner
        set-up and fused dense rounds (``bsp``: linear systems).
    estimate : str, optional
        ``"module:function"``: ``function(shape, settings)`` → :class:`Estimate`, the engine's
        modelled cost for a graph's shape (a dict: ``arcs``, ``threads``, ``split_share``) under
        the router's :class:`~digraph.dispatch.route.settings.RouteSettings`; the router weighs
        the estimates of the engines that may run a system (CPU linear systems: ``scc`` and
        ``bsp``, and ``power`` for normalised ones where no power probe runs).
    """

    mode: str
    kind: str
    families: tuple
    entry: str
    prepare: str = None
    after_stall: str = None
    resident: bool = True
    takes: tuple = ()
    one_shard: tuple = ()
    estimate: str = None

    @property
    def name(self):
        """``"<where>-<mode>"``: ``"cpu-scc"``, ``"gpu-bsp"``, ``"multi-gpu-path"``."""
        return f"{KINDS[self.kind]}-{self.mode}"

    def load(self, what="entry"):
        """The function ``entry`` (or ``prepare``, ``estimate``) names, its module imported on
        first use (and
        read from ``sys.modules`` after: no import machinery on a run's path)."""
        module, function = getattr(self, what).split(":")
        name = f"{__package__}.{module}"
        return getattr(sys.modules.get(name) or importlib.import_module(name), function)


def _each(modes, kind, families, entry, **kw):
    return [Engine(m, kind, families, entry, **kw) for m in modes]


ENGINES = (
    # CPU threads
    Engine("scc", "cpu", ("linear",), "scc.cpu:solve", prepare="on_cpu:prepare_scc",
           after_stall="vertex-async", estimate="scc.cpu_cost:estimate"),
    Engine("power", "cpu", ("linear",), "power.cpu:solve", estimate="power.cpu_cost:estimate"),
    Engine("bsp", "cpu", _ALL, "push.cpu:solve_bsp", after_stall="vertex-async",
           estimate="push.cpu_cost:estimate"),
    Engine("vertex-async", "cpu", _ALL, "push.cpu:solve_vertex_async", after_stall="bsp"),
    *_each(("path", "path-nopriority"), "cpu", _SUMS_AND_MINMAX, "path.cpu:solve",
           prepare="on_cpu:prepare_paths", after_stall="vertex-async"),
    Engine("peel", "cpu", ("hindex",), "peel.cpu:solve"),
    # one GPU
    Engine("power", "gpu", ("linear",), "power.gpu:solve", resident=False),
    Engine("scc", "gpu", ("linear",), "scc.gpu:run_on", after_stall="bsp"),
    Engine("bsp", "gpu", _ALL, "push.gpu:run_on", after_stall="vertex-async",
           takes=("batch_arcs",), one_shard=("linear",)),
    Engine("vertex-async", "gpu", _ALL, "push.gpu:run_on", after_stall="bsp"),
    *_each(("path", "path-nopriority"), "gpu", _SUMS_AND_MINMAX, "path.gpu:run_on",
           prepare="on_gpu:prepare_paths", after_stall="vertex-async"),
    Engine("cluster", "gpu", ("monotone",), "cluster.gpu:run_on"),
    Engine("peel", "gpu", ("hindex",), "peel.gpu:run_on"),
    # several GPUs of one host
    Engine("power", "gpus", ("linear",), "power.gpus:prepare"),
    Engine("scc", "gpus", ("linear",), "scc.gpus:prepare"),
    *_each(("bsp", "vertex-async"), "gpus", _ALL, "push.gpus:prepare"),
    *_each(("path", "path-nopriority"), "gpus", _SUMS_AND_MINMAX, "path.gpus:prepare"),
    # the workers of a Dask cluster
    Engine("power", "cluster", ("linear",), "power.cluster:prepare"),
    Engine("bsp", "cluster", ("monotone", "hindex"), "push.cluster_entry:prepare"),
)

_BY_KEY = {(e.mode, e.kind): e for e in ENGINES}


def find(mode, kind):
    """The :class:`Engine` of ``mode`` on placement ``kind``, or None."""
    return _BY_KEY.get((mode, kind))


#: what a mode runs, in words, for refusals of another family
_RUNS = {
    "scc": "solves linear systems (PageRank, adsorption, a LinearSystem)",
    "cluster": "relaxes min/max systems (SSSP and the like)",
    "power": "answers linear systems (normalised ones; on one GPU also the others)",
    "peel": "peels k-cores (the hindex family)",
}
#: where a mode runs, in words, for refusals of another placement
_WHERE = {"cluster": "runs on one GPU (device='cuda' or 'cuda:N')",
          "peel": "runs on the CPU or one GPU (device='cpu', 'cuda' or 'cuda:N')"}


def refusal(mode, family, kind):
    """Why no engine runs ``mode`` on a system of ``family`` on placement ``kind``, or None when
    one does (whether the power iteration fits the system itself is checked apart:
    :func:`digraph.dispatch.engines.power.cpu.applies`, and on one GPU for systems that are not
    normalised :func:`digraph.dispatch.engines.power.gpu_affine.applies`)."""
    kinds = [e for e in ENGINES if e.mode == mode]
    if not any(family in e.families for e in kinds):
        if mode in _RUNS:
            return f"mode={mode!r} {_RUNS[mode]}, not the {family} family"
        return (f"mode={mode!r} walks directed paths, but k-core depends on in- and "
                "out-neighbours alike: no DAG orders it")
    engine = find(mode, kind)
    if kind == "cluster" and (engine is None or family not in engine.families):
        runs = sorted({e.mode for e in ENGINES if e.kind == "cluster" and family in e.families})
        if not runs:
            return (f"mode={mode!r} does not run on a Dask cluster (cluster=) yet: no mode runs "
                    f"the {family} family there; run it without cluster=")
        return (f"mode={mode!r} does not run on a Dask cluster (cluster=) yet for the {family} "
                f"family; there {' and '.join(repr(m) for m in runs)} "
                f"{'does' if len(runs) == 1 else 'do'}")
    if engine is None:
        return f"mode={mode!r} {_WHERE[mode]}"
    return None
