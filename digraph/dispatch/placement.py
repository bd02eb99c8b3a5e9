"""Where a run executes: a :class:`Placement`, chosen by the router and given to the engine.

A placement is one of four kinds: CPU threads (``"cpu"``), one GPU (``"gpu"``), several GPUs
of one host (``"gpus"``) or the workers of a Dask cluster (``"cluster"``, CPU workers, its
``distributed.Client`` held by the placement).  :func:`of` reads the ``device=``/``threads=`` a
user passed, :func:`on_cluster` a checked ``cluster=``;
:func:`digraph.dispatch.route.placing.place` narrows a placement of several GPUs to those a run uses
(:meth:`Placement.take`).  This module imports nothing of the engine, so that every layer may
use it.
"""

from dataclasses import dataclass, field

__all__ = ["Placement", "of", "on_cluster", "several", "KINDS"]

#: the kinds of placement, and how engine names spell each (``"<where>-<mode>"``)
KINDS = {"cpu": "cpu", "gpu": "gpu", "gpus": "multi-gpu", "cluster": "dask"}


@dataclass(frozen=True)
class Placement:
    """CPU threads, one GPU, several GPUs, or the workers of a Dask cluster.

    Attributes
    ----------
    kind : {"cpu", "gpu", "gpus", "cluster"}
    threads : int
        CPU threads of the Numba kernels (``"cpu"``; ``"cluster"``: the workers' threads, summed;
        0 on GPUs).
    devices : tuple of str
        The GPUs (``"cuda"``, ``"cuda:N"``), one for ``"gpu"``, two or more for ``"gpus"``.
    client : distributed.Client or None
        ``"cluster"``: the client the run talks to the cluster through.
    workers : tuple of str
        ``"cluster"``: the workers' addresses, one shard each, in the order of the shards.

    A cluster's ``devices`` is ``("cuda",)`` when each worker runs on its GPU, else empty (the
    workers' CPU threads).
    """

    kind: str
    threads: int = 0
    devices: tuple = ()
    client: object = field(default=None, compare=False, repr=False)
    workers: tuple = ()

    @property
    def where(self):
        """``"cpu"``, ``"gpu"`` or ``"multi-gpu"``: the first word of an engine's name."""
        return KINDS[self.kind]

    @property
    def device(self):
        """The ``device=`` string of this placement: ``"cpu"`` (CPU threads, or CPU workers of a
        cluster), ``"cuda:N"``, ``"cuda:0,1"``; ``"cuda"`` for a cluster's GPU workers."""
        if self.kind == "cluster":
            return self.devices[0] if self.devices else "cpu"
        if self.kind == "cpu":
            return "cpu"
        if self.kind == "gpu":
            return self.devices[0]
        return "cuda:" + ",".join(d[5:] for d in self.devices)

    def take(self, k):
        """The first ``k`` GPUs of this placement (one GPU when ``k`` is 1)."""
        devices = tuple(self.devices[:k])
        return Placement("gpus" if len(devices) > 1 else "gpu", devices=devices)

    def describe(self):
        """In words: ``"cpu, 2 threads"``, ``"cuda:0"``, ``"cuda:0,1 (2 GPUs)"``, ``"dask cluster,
        2 workers"``."""
        if self.kind == "cluster":
            k = len(self.workers)
            return (f"dask cluster, {k} worker{'s' if k != 1 else ''}"
                    + (", a GPU each" if self.devices else ""))
        if self.kind == "cpu":
            return f"cpu, {self.threads} thread{'s' if self.threads != 1 else ''}"
        if self.kind == "gpu":
            return self.devices[0]
        return f"{self.device} ({len(self.devices)} GPUs)"


def of(device, threads):
    """The placement a checked ``device`` string names (``threads``: the CPU's thread count).

    Parameters
    ----------
    device : str
        ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"cuda:0,1,..."`` (as ``digraph.run`` checked it).
    threads : int
        CPU threads the run uses.

    Returns
    -------
    Placement

    Raises
    ------
    InvalidParameterError
        ``"cuda:0,1,..."`` naming one GPU twice, or fewer than two.
    """
    if device == "cpu":
        return Placement("cpu", threads=int(threads))
    if "," not in device:
        return Placement("gpu", devices=(device,))
    return Placement("gpus", devices=several(device))


def on_cluster(client, workers, threads, device="cpu"):
    """The placement of a run on a Dask cluster: ``client`` (a ``distributed.Client``, checked by
    :func:`digraph.checks.check_cluster`), the ``workers``' addresses (one shard each), their
    threads, summed, and ``device`` (``"cpu"``, or ``"cuda"``: each worker's GPU)."""
    return Placement("cluster", threads=int(threads), client=client, workers=tuple(workers),
                     devices=() if device == "cpu" else (device,))


def several(device):
    """The GPUs ``"cuda:0,1,..."`` names, as ``("cuda:0", "cuda:1", ...)``.

    Raises
    ------
    InvalidParameterError
        Fewer than two GPUs, or one named twice.
    """
    from ..errors import InvalidParameterError
    ids = device[5:] if device.startswith("cuda:") else ""
    nums = [int(p) for p in ids.split(",") if p != ""]
    if len(nums) < 2:
        raise InvalidParameterError(f"device {device!r}: several GPUs are named 'cuda:0,1,...'")
    if len(set(nums)) != len(nums):
        raise InvalidParameterError(f"device {device!r} names a GPU twice")
    return tuple(f"cuda:{i}" for i in nums)
