"""Where a run executes: a :class:`Placement`, chosen by the router and given to the engine.

A placement is one of three kinds: CPU threads (``"cpu"``), one GPU (``"gpu"``) or several GPUs
of one host (``"gpus"``).  :func:`of` reads the ``device=``/``threads=`` a user passed;
:func:`digraph.dispatch.route.placing.place` narrows a placement of several GPUs to those a run uses
(:meth:`Placement.take`).  This module imports nothing of the engine, so that every layer may
use it.
"""

from dataclasses import dataclass

__all__ = ["Placement", "of", "several", "KINDS"]

#: the kinds of placement, and how engine names spell each (``"<where>-<mode>"``)
KINDS = {"cpu": "cpu", "gpu": "gpu", "gpus": "multi-gpu"}


@dataclass(frozen=True)
class Placement:
    """CPU threads, one GPU, or several GPUs.

    Attributes
    ----------
    kind : {"cpu", "gpu", "gpus"}
    threads : int
        CPU threads of the Numba kernels (``"cpu"``; 0 on GPUs).
    devices : tuple of str
        The GPUs (``"cuda"``, ``"cuda:N"``), one for ``"gpu"``, two or more for ``"gpus"``.
    """

    kind: str
    threads: int = 0
    devices: tuple = ()

    @property
    def where(self):
        """``"cpu"``, ``"gpu"`` or ``"multi-gpu"``: the first word of an engine's name."""
        return KINDS[self.kind]

    @property
    def device(self):
        """The ``device=`` string of this placement: ``"cpu"``, ``"cuda:N"``, ``"cuda:0,1"``."""
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
        """In words: ``"cpu, 2 threads"``, ``"cuda:0"``, ``"cuda:0,1 (2 GPUs)"``."""
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
