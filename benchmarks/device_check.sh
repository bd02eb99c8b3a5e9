#!/usr/bin/env bash
# One call on the GPU machine (the device tool): the GPU tests on the card, or a before/after of
# the defaults against the base tree in .base/ (git archive of the base commit's digraph/).
#   bash benchmarks/device_check.sh tests|gpu|cpu16|cpu2|threads|kcore     (results under $OUT)
# GRAPHS, ALGORITHMS, REPEAT and ROUNDS choose the cases; ``threads`` times the default, ``scc``
# and ``bsp`` at 2, 4, 8 and 16 threads (THREADS) on the CPU, for the router's thread model.
# Carry .whl (numpy 2.4.6, ../shared/gpu/wheels.sh), .data (the datasets) and .base.
# ``first`` times the first answer with an empty Numba cache, 2 threads on cores 2-3, for the
# trees in TREES (default: .base and this checkout).
# ``kcore`` times k-core on one GPU (``peel``, the default, ``bsp``, ``vertex-async``) beside the
# CPU peel on 1 and 2 threads and igraph's coreness, on KCORE_GRAPHS (absent ones skipped), 2
# Numba threads on cores 0-1; carry igraph's wheels for its rows and a fast reference
# (../shared/gpu/wheels.sh igraph==1.0.0 texttable).
set -euo pipefail
# once per machine: two calls of this script may run side by side (tests beside a timing)
[ -d .site/numpy ] || python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl
export PYTHONPATH=$PWD/.site:$PWD PYTHONUNBUFFERED=1 DIGRAPH_DATASETS=$PWD/.data
OUT=${OUT:-/tmp/device-check}
mkdir -p "$OUT"
GRAPHS=${GRAPHS:-wiki-Vote dblp-2010 cnr-2000}
ALGORITHMS=${ALGORITHMS:-pagerank adsorption sssp kcore}
REPEAT=${REPEAT:-5}
ROUNDS=${ROUNDS:-2}
AB="benchmarks/before_after.py --base .base --graphs $GRAPHS --algorithms $ALGORITHMS --repeat $REPEAT --rounds $ROUNDS"
case "${1:?tests, gpu, cpu16, cpu2, threads, first or kcore}" in
  tests) python3 -m pytest -q -p no:cacheprovider -m gpu "${@:2}" 2>&1 | tail -60 ;;
  gpu)   python3 $AB --device cuda --out "$OUT/before_after_gpu.json" ;;
  cpu16) NUMBA_NUM_THREADS=16 python3 $AB --threads 16 --out "$OUT/before_after_cpu16.json" ;;
  cpu2)  NUMBA_NUM_THREADS=2 taskset -c 0,1 python3 $AB --threads 2 --out "$OUT/before_after_cpu2.json" ;;
  threads)
    for T in ${THREADS:-2 4 8 16}; do
      NUMBA_NUM_THREADS=16 python3 benchmarks/harness.py --graphs $GRAPHS --algorithms $ALGORITHMS \
        --modes default scc bsp --threads "$T" --repeat "$REPEAT" --out "$OUT/threads.json"
    done ;;
  first) NUMBA_NUM_THREADS=2 taskset -c 2,3 python3 benchmarks/bench_first_run.py \
           --trees ${TREES:-.base .} --repeat "${REPEAT:-3}" --out "$OUT/first_run.json" ;;
  kcore) NUMBA_NUM_THREADS=2 taskset -c 0,1 python3 benchmarks/bench_gpu.py --algorithms kcore \
           --graphs ${KCORE_GRAPHS:-cnr-2000 dblp-2010 cit-HepPh soc-Slashdot0902 soc-Epinions1} \
           --repeat "$REPEAT" --out "$OUT/kcore_gpu.json" ;;
esac
