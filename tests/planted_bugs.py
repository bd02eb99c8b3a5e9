"""Planted bugs: does the suite catch them?

Each entry below is a deliberate bug of a different kind, written as one exact replacement in one
library file.  ``python tests/planted_bugs.py`` copies the repository (its tracked files) to a
scratch folder once, then for each bug applies it, runs the README's test command there with
``-x`` (stop at the first failure), records the first failing test and the time it took, and
puts the file back.  The suite catches a bug when that run fails.

``--tests REV`` takes the ``tests/`` folder from git revision ``REV`` (the library stays the
working tree's): the same bugs against an older suite, to show a faster suite catches what the
old one caught.  ``--first`` runs each bug's likely test files first (the rest of the suite
follows, so a miss there is still looked for everywhere); it only shortens the runs.

Not collected by pytest (the name does not start with ``test_``)::

    python tests/planted_bugs.py --first --out /tmp/planted.json
    python tests/planted_bugs.py --first --tests ee97010 --out /tmp/planted-old.json
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BUGS = [
    # (id, kind, file, exact text, its replacement, test files to try first)
    ("bound", "a wrong error bound: the residual not amplified by 1/(1 - gamma)",
     "digraph/dispatch/convergence.py",
     "        e = r1 / (1.0 - g1)\n", "        e = r1\n",
     ["tests/dispatch/test_power.py", "tests/algorithms/test_algorithms.py"]),
    ("dangling", "a dropped dangling term: the mass of dangling vertices goes to p, not d",
     "digraph/dispatch/engines/power/cpu.py",
     "        sd = _gather_sum(d_idx, d_g, x)  #", "        sd = 0.0 * _gather_sum(d_idx, d_g, x)  #",
     ["tests/algorithms/test_pagerank_dangling.py"]),
    ("range-cut", "an off-by-one in a range cut: each shard boundary one vertex early",
     "digraph/dispatch/runtime/cuda/ranges.py",
     "np.concatenate([[0], np.clip(lo, 0, n), [n]])",
     "np.concatenate([[0], np.clip(lo - 1, 0, n), [n]])",
     ["tests/dispatch/cuda/test_sharded_ranges.py", "tests/dispatch/cuda/test_multi_gpu_balance.py"]),
    ("exchange", "a lost exchange: the last shard never receives the others' ranges",
     "digraph/dispatch/runtime/cuda/exchange.py",
     "                for h in range(len(sh)):\n                    if h != g:\n",
     "                for h in range(len(sh) - 1):\n                    if h != g:\n",
     ["tests/dispatch/cuda/test_multi_gpu.py", "tests/dispatch/cuda/test_multi_gpu_power.py"]),
    ("certificate", "a wrong certificate: a small residual accepted without its amplification",
     "digraph/dispatch/convergence.py",
     "    del r1  # kept in the signature for the engines; the bound already accounts for it\n"
     "    if bound <= tol:\n",
     "    if bound <= tol or r1 <= tol:\n",
     ["tests/dispatch/test_power.py", "tests/algorithms/test_algorithms.py"]),
    ("zero-weight", "SSSP: an arc of weight 0 relaxed as weight 1 (0 taken for 'unweighted')",
     "digraph/smx/cpu/bsp.py",
     "    if op == _PLUS:\n        return xu + a\n",
     "    if op == _PLUS:\n        return xu + (a if a != 0.0 else 1.0)\n",
     ["tests/algorithms/test_algorithms.py", "tests/dispatch/test_short_paths.py"]),
    ("peel", "k-core: a neighbour of equal degree decremented too (>= for >)",
     "digraph/smx/cpu/peel.py",
     "                if du > dv:  # false for u == v", "                if du >= dv:  # false for u == v",
     ["tests/dispatch/test_kcore_peel.py"]),
    ("path-arc", "path decomposition: the arc id recorded after the cursor moved (off by one)",
     "digraph/preprocess/decompose.py",
     "                    e = order[cursor[lu]]\n                    cursor[lu] += 1\n",
     "                    cursor[lu] += 1\n"
     "                    e = order[min(cursor[lu], out_offsets[lo + lu + 1] - a0 - 1)]\n",
     ["tests/preprocess/test_preprocess.py", "tests/dispatch/test_path_modes.py"]),
    ("cache-folder", "the cache writer takes a folder of files named like a cache's as its own",
     "digraph/paths/cache_folder.py",
     "    if not names or _is_lock_only(d, names) or _legacy_cache(d):\n",
     "    if not names or _is_lock_only(d, names) or _legacy_cache(d) or MANIFEST in names:\n",
     ["tests/paths/test_no_data_loss.py", "tests/paths/test_cache.py"]),
    ("decimal", "the loader drops the zeros after a decimal point ('0.05' read as 0.5)",
     "digraph/io/_scan.py",
     "            else:\n                exp10 -= 1\n            pos += 1\n",
     "            pos += 1\n",
     ["tests/io/test_load.py", "tests/io/test_load_fuzz.py"]),
    ("tarjan", "Tarjan's SCC: a back arc lowers low[u] by index[u], not by low[u]",
     "digraph/preprocess/scc.py",
     "                    if index[w] < low[u]:\n", "                    if index[w] < index[u]:\n",
     ["tests/preprocess/test_preprocess.py", "tests/paths/test_condensation_build.py"]),
    ("block-sum", "a GPU block sum that starts its tree at HB // 4 (half the threads dropped)",
     "digraph/smx/cuda/common.py",
     '    """Sum of ``val`` over the block\'s threads (every thread gets it)."""\n'
     "    tid = cuda.threadIdx.x\n    buf[tid] = val\n    cuda.syncthreads()\n"
     "    step = HB // 2\n",
     '    """Sum of ``val`` over the block\'s threads (every thread gets it)."""\n'
     "    tid = cuda.threadIdx.x\n    buf[tid] = val\n    cuda.syncthreads()\n"
     "    step = HB // 4\n",
     ["tests/dispatch/cuda/test_gpu_power.py", "tests/dispatch/cuda/test_gpu.py"]),
]


def _copy(dest, tests_rev):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)
    if tests_rev:
        shutil.rmtree(dest / "tests")
        archive = subprocess.run(["git", "archive", tests_rev, "tests"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def _first_failure(out):
    for line in out.splitlines():
        if line.startswith("FAILED ") or line.startswith("ERROR "):
            return line.split(" ", 1)[1].split(" - ")[0]
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", metavar="REV", help="take tests/ from this git revision")
    ap.add_argument("--first", action="store_true", help="run each bug's likely files first")
    ap.add_argument("--only", nargs="*", help="bug ids to run (default: all)")
    ap.add_argument("--marker", help="a pytest -m expression (default: none, as the README's)")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="planted-"))
    _copy(scratch, args.tests)
    env = dict(os.environ, PYTHONPATH=str(scratch))
    rows = []
    for bug, kind, path, old, new, first in BUGS:
        if args.only and bug not in args.only:
            continue
        target = scratch / path
        text = target.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"{bug}: the text to replace occurs {text.count(old)} times in {path}")
        target.write_text(text.replace(old, new))
        # Numba's cache=True does not see a change in another file a kernel calls: no kernel
        # compiled before (or with another bug) may run with this one
        for cached in scratch.rglob("*.nb[ic]"):
            cached.unlink()
        base = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
        base += ["-m", args.marker] if args.marker else []
        likely = [p.relative_to(scratch).as_posix() for f in (first if args.first else [])
                  for p in sorted((scratch / "tests").rglob(Path(f).name))]
        t0 = time.perf_counter()
        # pytest drops a file named inside a folder also named: the likely files run apart
        # first (an older suite may keep them elsewhere, hence by name), then the whole suite
        done = None
        if likely:
            done = subprocess.run(base + likely, cwd=scratch, env=env, capture_output=True,
                                  text=True)
        if done is None or done.returncode == 0:
            done = subprocess.run(base + ["tests"], cwd=scratch, env=env, capture_output=True,
                                  text=True)
        seconds = time.perf_counter() - t0
        target.write_text(text)
        row = {"bug": bug, "kind": kind, "file": path, "caught": done.returncode != 0,
               "first_failure": _first_failure(done.stdout), "seconds": round(seconds, 1),
               "tail": done.stdout.strip().splitlines()[-1:]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True).stdout.strip()
        Path(args.out).write_text(json.dumps({
            "command": " ".join(["python tests/planted_bugs.py"] + (argv or sys.argv[1:])),
            "library": head, "tests": args.tests or head,
            "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0 if all(r["caught"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
