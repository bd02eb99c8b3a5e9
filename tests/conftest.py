"""Shared test helpers.

``dataset_path(name)`` gives the path of a file in ``../shared/datasets`` (next to the repository)
and skips the calling test when the folder or the file is absent, as it is in a fresh clone.
Tests that read these files are marked ``@pytest.mark.datasets``.  Import it with
``from conftest import dataset_path`` or use the ``datasets`` fixture (the folder itself).
"""

import os
from pathlib import Path

# Tests run with threads in {1, 2, 4}: start Numba with 4 threads (more than this machine's cores
# is fine) but default to 2 so the rest of the suite is not oversubscribed.
os.environ.setdefault("NUMBA_NUM_THREADS", "4")

# Without a GPU, the CUDA kernels run in Numba's CUDA simulator (set before numba is imported).
# On a GPU machine the real device is used unless NUMBA_ENABLE_CUDASIM=1 is set by the caller.
if not any(Path("/dev").glob("nvidia[0-9]*")):
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numba  # noqa: E402

if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    import cuda_simulator  # noqa: E402
    cuda_simulator.install()
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests draw the same examples at every run (CI must not pass or fail by luck); set
# HYPOTHESIS_PROFILE=explore to draw fresh ones, as a search for new counterexamples.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))

DATASETS = Path(os.environ.get("DIGRAPH_DATASETS") or
                Path(__file__).resolve().parents[1].parent / "shared" / "datasets")


def dataset_path(name):
    """Path of ``../shared/datasets/<name>``; ``pytest.skip`` when it does not exist.

    Parameters
    ----------
    name : str
        File name inside the datasets folder, e.g. ``"cnr-2000.txt.gz"``.

    Returns
    -------
    pathlib.Path
    """
    if not DATASETS.is_dir():
        pytest.skip(f"datasets folder {DATASETS} is absent")
    path = DATASETS / name
    if not path.is_file():
        pytest.skip(f"dataset {path} is absent")
    return path


def gpu_count():
    """GPUs a multi-GPU test may shard over: the machine's, or 3 under Numba's CUDA simulator
    (any number of shards share its device); skips the test when there is no GPU at all."""
    from digraph.dispatch.runtime.cuda.backend import backend
    from digraph.errors import NotAvailableError
    try:
        be = backend("cuda")
    except NotAvailableError as e:  # numba-cuda present but no GPU and no simulator
        pytest.skip(str(e))
    if be.sim:
        return 3
    from numba import cuda
    return len(cuda.gpus)


@pytest.fixture(scope="module")
def one_gpu():
    """One GPU's backend (``"cuda"``: the card, or Numba's CUDA simulator); skips the module's
    tests when neither is there.  ``pytestmark = pytest.mark.usefixtures("one_gpu")``."""
    from digraph.dispatch.runtime.cuda.backend import backend
    from digraph.errors import NotAvailableError
    try:
        return backend("cuda")
    except NotAvailableError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def ngpu():
    """:func:`gpu_count`, skipping tests that need two GPUs on a machine with one."""
    k = gpu_count()
    if k < 2:
        pytest.skip("one GPU: the multi-GPU engines need two")
    return k


@pytest.fixture
def datasets():
    """The ``../shared/datasets`` folder (skips the test when it is absent)."""
    if not DATASETS.is_dir():
        pytest.skip(f"datasets folder {DATASETS} is absent")
    return DATASETS


def write(tmp_path, name, text):
    """Write ``text`` (str or bytes) to ``tmp_path/name``, gzip-compressed when the name ends
    with .gz; returns the path."""
    import gzip
    path = tmp_path / name
    raw = text.encode() if isinstance(text, str) else text
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    return path


def random_graph(seed=0, n=200, m=900):
    """A directed multigraph of ``m`` uniform random arcs on ``n`` vertices (loops allowed)."""
    import numpy as np

    from digraph.graph import Graph
    rng = np.random.default_rng(seed)
    return Graph.from_arrays(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n)


def unprivileged(cmd):
    """``cmd`` run without the power to write into read-only folders: as it is for a normal
    user; for root, in a user namespace of its own (``unshare --user``), where root's capability
    to override permissions does not reach the host's files (skips when neither is possible)."""
    import shutil
    import subprocess
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return cmd
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--user", "true"], capture_output=True).returncode:
        pytest.skip("running as root without unshare: a read-only folder cannot be simulated")
    return [unshare, "--user", *cmd]


@pytest.fixture
def engine_settings():
    """``engine_settings(settings, **fields)``: run the rest of the test with ``settings`` (an
    engine's settings object; with ``fields``, the settings of its class in force with those
    fields changed) as every run's engine settings, through :func:`digraph.dispatch.settings.using`
    (as ``digraph.run(..., settings=)`` does for one run; no module default is replaced).
    Changes add up, and end with the test."""
    import contextlib
    import dataclasses

    from digraph.dispatch.settings import current, using
    with contextlib.ExitStack() as stack:
        def change(settings, **fields):
            if fields:
                settings = dataclasses.replace(current(settings), **fields)
            stack.enter_context(using([settings]))
            return settings
        yield change


@pytest.fixture(autouse=True)
def _threads_as_asked(request):
    """Every run uses the threads it may (``RouteSettings.thread_arcs`` and ``core_stall`` 0):
    the suite's graphs are small, and the threaded paths must run on them.  A test marked
    ``thread_rule`` keeps the default rule (:func:`digraph.dispatch.route.placing.cpu_threads`)."""
    if request.node.get_closest_marker("thread_rule"):
        yield
        return
    import dataclasses

    from digraph.dispatch.route import settings as route_settings
    from digraph.dispatch.settings import current, using
    with using([dataclasses.replace(current(route_settings.DEFAULT), thread_arcs=0,
                                   core_stall=0.0)]):
        yield


def local_dask_client(workers, processes=True):
    """A context manager: a ``distributed.Client`` of a ``LocalCluster`` of ``workers`` workers of
    one thread each (processes, or threads of this process), once they have all joined; the
    Dask tests' module fixtures."""
    import contextlib

    import distributed

    @contextlib.contextmanager
    def cluster():
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                      processes=processes, dashboard_address=":0",
                                      silence_logs=40) as c, distributed.Client(c) as client:
            client.wait_for_workers(workers)
            yield client
    return cluster()


def worker_killer(client, at):
    """A progress callback that SIGKILLs the second worker's process (by address) at round
    ``at``; returns (callback, the victim's address, a list that gets the kill's time)."""
    import signal
    import time
    pids = client.run(os.getpid)
    victim = sorted(pids)[1]
    killed = []

    def kill(rounds, bound, **info):
        if rounds == at and not killed:
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(time.perf_counter())
    return kill, victim, killed
