#!/usr/bin/env bash
# One call on the GPU machine (the device tool): the GPU tests on the card, or a before/after of
# the defaults against the base tree in .base/ (git archive of the base commit's digraph/).
#   bash benchmarks/device_check.sh tests|gpu|cpu16|cpu2|threads|first|corpus|corpus16|adsorption|kcore|accel|spread|dask|dask-load|dask-gpu
#   (results under $OUT)
# GRAPHS, ALGORITHMS, REPEAT and ROUNDS choose the cases; ``threads`` times the default, ``scc``
# and ``bsp`` at 2, 4, 8 and 16 threads (THREADS) on the CPU, for the router's thread model.
# Carry .whl (numpy 2.4.6, ../shared/gpu/wheels.sh), .data (the datasets) and .base.
# ``first`` times the first answer with an empty Numba cache, 2 threads on cores 2-3, for the
# trees in TREES (default: .base and this checkout).
# ``corpus`` runs bench_cpu.py --classes on every class of benchmarks/corpus.py (CLASSES), 2
# threads each, four classes side by side on cores 0-1, 4-5, 8-9 and 12-13; ``corpus16`` the
# same classes one after another on 16 threads. Results: $OUT/corpus_cpu2_<class>.json.
# ``adsorption`` times on one GPU adsorption by ``power`` (the affine map's iteration), by
# ``bsp`` and by the default beside PageRank's ``power``, every answer verified (GRAPHS default:
# cnr-2000 dblp-2010 cit-HepPh soc-Slashdot0902 soc-Epinions1, those absent skipped; TOL 1e-8),
# each timed run after an untimed one of its own case (bsp's runs slow the GPU runs that follow).
# ``kcore`` times k-core on one GPU (``peel``, the default, ``bsp``, ``vertex-async``) beside the
# CPU peel on 1 and 2 threads and igraph's coreness, on KCORE_GRAPHS (absent ones skipped), 2
# Numba threads on cores 0-1; ``accel`` times PageRank's default and the CPU power iteration
# with Gauss-Seidel sweeps and with Anderson's mixes (PowerSettings.accelerator) beside the
# peers, on 1 and 2 threads side by side, then each other count of THREADS (default 1 2 16);
# carry igraph's wheels for its rows and a fast reference (../shared/gpu/wheels.sh igraph==1.0.0
# texttable).  ``spread`` times SPREAD_CASES (GRAPH:ALGORITHM:MODE, a peer's name as the mode for
# the host's witness) at each count of THREADS round-robin, RUNS runs each
# (bench_spread.py): whether runs fall in a fast and a slow mode, and at which thread counts.
# ``dask-gpu`` (a machine of several GPUs: nvidia-h100-x2/x4) times PageRank on GPUS GPU workers
# (one a GPU, WORKER_THREADS threads each, default 2) against one process's GPU and its GPUS GPUs
# sharded, at SCALES (default 22 24).
set -euo pipefail
# once per machine: two calls of this script may run side by side (tests beside a timing)
[ -d .site/numpy ] || python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl
export PYTHONPATH=$PWD/.site:$PWD PYTHONUNBUFFERED=1 DIGRAPH_DATASETS=$PWD/.data
OUT=${OUT:-/tmp/device-check}
mkdir -p "$OUT"
ADS_GRAPHS=${GRAPHS:-cnr-2000 dblp-2010 cit-HepPh soc-Slashdot0902 soc-Epinions1}
ACC_GRAPHS=${GRAPHS:-soc-Epinions1 soc-Slashdot0902 dblp-2010 cit-HepPh grid700 geo200000 cnr-2000}
GRAPHS=${GRAPHS:-wiki-Vote dblp-2010 cnr-2000}
ALGORITHMS=${ALGORITHMS:-pagerank adsorption sssp kcore}
REPEAT=${REPEAT:-5}
ROUNDS=${ROUNDS:-2}
AB="benchmarks/before_after.py --base .base --graphs $GRAPHS --algorithms $ALGORITHMS --repeat $REPEAT --rounds $ROUNDS"
CLASSES=${CLASSES:-web social collaboration citation peer-to-peer road rmat kronecker}
# the corpus's peers: networkx's core_number takes minutes on the larger graphs
PEERS="--peers ${CORPUS_PEERS:-scipy-power igraph-prpack scipy-dijkstra igraph-coreness}"
case "${1:?tests, gpu, cpu16, cpu2, threads, first, corpus, corpus16, adsorption, kcore, accel, spread, dask, dask-load or dask-gpu}" in
  tests) python3 -m pytest -q -p no:cacheprovider -m gpu "${@:2}" 2>&1 | tail -60 ;;
  gpu)   python3 $AB --device cuda --out "$OUT/before_after_gpu.json" ;;
  cpu16) NUMBA_NUM_THREADS=16 python3 $AB --threads 16 --out "$OUT/before_after_cpu16.json" ;;
  cpu2)  NUMBA_NUM_THREADS=2 taskset -c 0,1 python3 $AB --threads 2 --out "$OUT/before_after_cpu2.json" ;;
  threads)
    for T in ${THREADS:-2 4 8 16}; do
      NUMBA_NUM_THREADS=16 python3 benchmarks/harness.py --graphs $GRAPHS --algorithms $ALGORITHMS \
        --modes default scc bsp --threads "$T" --repeat "$REPEAT" --out "$OUT/threads.json"
    done ;;
  corpus)
    set -- $CLASSES
    while [ $# -gt 0 ]; do
      for core in 0 4 8 12; do
        [ $# -gt 0 ] || break
        algs=$ALGORITHMS  # no adsorption on R-MAT/Kronecker: its reference takes minutes there
        case $1 in rmat|kronecker) algs=$(echo " $ALGORITHMS " | sed 's/ adsorption / /') ;; esac
        NUMBA_NUM_THREADS=2 taskset -c $core,$((core + 1)) python3 benchmarks/bench_cpu.py \
          --classes "$1" --algorithms $algs --threads 2 --repeat "$REPEAT" $PEERS --warm-each \
          --out "$OUT/corpus_cpu2_$1.json" > "$OUT/corpus_cpu2_$1.log" 2>&1 &
        shift
      done
      wait
    done
    tail -n 40 "$OUT"/corpus_cpu2_*.log ;;
  corpus16)
    for C in $CLASSES; do
      algs=$ALGORITHMS
      case $C in rmat|kronecker) algs=$(echo " $ALGORITHMS " | sed 's/ adsorption / /') ;; esac
      NUMBA_NUM_THREADS=16 python3 benchmarks/bench_cpu.py --classes "$C" --algorithms $algs \
        --threads 16 --repeat "$REPEAT" $PEERS --warm-each --out "$OUT/corpus_cpu16_$C.json" 2>&1 | tail -n 30
    done ;;
  adsorption)
    python3 benchmarks/bench_gpu.py --graphs $ADS_GRAPHS --algorithms pagerank adsorption \
      --modes pagerank:power adsorption:power adsorption:bsp adsorption:default --no-peer \
      --tol "${TOL:-1e-8}" --repeat "$REPEAT" --warm-each --out "$OUT/adsorption_gpu.json" ;;
  first) NUMBA_NUM_THREADS=2 taskset -c 2,3 python3 benchmarks/bench_first_run.py \
           --trees ${TREES:-.base .} --repeat "${REPEAT:-3}" --out "$OUT/first_run.json" ;;
  accel)
    # the CPU power iteration's accelerators side by side: 1 thread on core 0 and 2 threads on
    # cores 2-3 at once, then 16 threads; the default and the peers, then power with
    # Gauss-Seidel sweeps and with Anderson's mixes
    acc() {  # threads cores out extra...
      local t=$1 c=$2 o=$3; shift 3
      NUMBA_NUM_THREADS=$t taskset -c $c python3 benchmarks/bench_cpu.py --graphs $ACC_GRAPHS \
        --algorithms pagerank --threads $t --repeat "$REPEAT" --warm-each --out "$OUT/$o" "$@"
    }
    both() {
      acc $1 $2 accel_cpu$1.json --modes default --peers igraph-prpack scipy-power
      for A in gauss-seidel anderson; do
        acc $1 $2 accel_cpu$1.json --modes power --peers --params settings=PowerSettings.accelerator=$A
      done
    }
    if [[ " ${THREADS:-1 2 16} " == *" 1 "*" 2 "* ]]; then
      both 1 0 > "$OUT/accel_cpu1.log" 2>&1 &
      both 2 2,3 > "$OUT/accel_cpu2.log" 2>&1
      wait
      tail -n 30 "$OUT/accel_cpu1.log" "$OUT/accel_cpu2.log"
    fi
    for T in ${THREADS:-1 2 16}; do  # other counts one after another, on cores 0..T-1
      case $T in 1|2) ;; *) both "$T" "0-$((T - 1))" 2>&1 | tail -n 30 ;; esac
    done ;;
  spread)
    NUMBA_NUM_THREADS=16 python3 benchmarks/bench_spread.py --cases ${SPREAD_CASES:-\
      cit-HepPh:pagerank:default cit-HepPh:pagerank:igraph-prpack \
      soc-Slashdot0902:adsorption:scc soc-Slashdot0902:adsorption:bsp} \
      --threads ${THREADS:-16 15 12 8} --runs "${RUNS:-15}" --out "$OUT/spread.json" ;;
  dask)
    # PageRank's rounds on a LocalCluster of 2, then 4, worker processes of one thread against one
    # process (needs dask and distributed: carry their wheels in .whl where the machine lacks them);
    # fit the round model with benchmarks/dask_model.py --measured $OUT/dask_*.json
    # (WORKER_THREADS threads a worker; the process on each of PROCESS_THREADS, default the same)
    WT=${WORKER_THREADS:-1}
    for W in ${WORKERS:-2 4}; do
      NUMBA_NUM_THREADS=16 python3 benchmarks/bench_dask_cluster.py --scales ${SCALES:-18 19 20} \
        --workers "$W" --worker-threads "$WT" --threads ${PROCESS_THREADS:-$WT} \
        --repeat "$REPEAT" --json "$OUT/dask_${W}x${WT}.json"
    done ;;
  dask-load)
    # a graph read from Parquet files by 4 workers x 4 threads under a memory_limit below the
    # whole CSR: PageRank, then k-core (its undirected lists built on the workers)
    NUMBA_NUM_THREADS=16 python3 benchmarks/bench_dask_load.py --scale "${SCALE:-24}" --workers 4 \
      --threads 4 --files 64 --kcore --json "$OUT/dask_load.json" ;;
  dask-gpu)
    G=${GPUS:-$(nvidia-smi -L | wc -l)}
    NUMBA_NUM_THREADS=16 python3 benchmarks/bench_dask_cluster.py --gpus "$G" \
      --scales ${SCALES:-22 24} --worker-threads "${WORKER_THREADS:-2}" --threads 16 \
      --repeat "$REPEAT" --json "$OUT/dask_gpu_${G}.json" ;;
  kcore) NUMBA_NUM_THREADS=2 taskset -c 0,1 python3 benchmarks/bench_gpu.py --algorithms kcore \
           --graphs ${KCORE_GRAPHS:-cnr-2000 dblp-2010 cit-HepPh soc-Slashdot0902 soc-Epinions1} \
           --repeat "$REPEAT" --out "$OUT/kcore_gpu.json" ;;
esac
