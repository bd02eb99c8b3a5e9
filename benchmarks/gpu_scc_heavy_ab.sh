#!/usr/bin/env bash
# The GPU scc engine's heavy rounds, old tree against new (issue 18 item 1), one device call:
#   OLD=<rev> bash benchmarks/gpu_scc_heavy_ab.sh   (the old tree unpacked in .old by the caller)
# 1. the simulator-free GPU tests of the engine on the real card; 2. profile_gpu_scc.py on the
# old tree (its defaults) and the new one (heavy rounds by launches or in one launch, 4-16
# blocks a multiprocessor), alternated twice; peers (bsp, power) once. Rows in $OUT/*.jsonl.
set -uo pipefail
G=${GRAPHS:-"cnr-2000 dblp-2010 cit-HepPh wiki-Vote email-Eu-core"}
R=${REPEAT:-5}
OUT=${OUT:-/tmp/out}
timeout 300 python -m pytest -q -m gpu tests/test_gpu_scc.py -p no:cacheprovider 2>&1 | tail -5
cp benchmarks/profile_gpu_scc.py .old/benchmarks/
for pass in 1 2; do
  PYTHONPATH=$PWD/.site:$PWD/.old timeout 200 python .old/benchmarks/profile_gpu_scc.py --heavy-blocks 0 \
    --graphs $G --blocks 4 --repeat $R --label old >> $OUT/old.jsonl
  timeout 300 python benchmarks/profile_gpu_scc.py --graphs $G --blocks 4 --repeat $R \
    --heavy-blocks ${HEAVY_BLOCKS:-4 8 16} --one-launch 0 1 --label new \
    $([ $pass = 1 ] && echo --peers) >> $OUT/new.jsonl
done
tail -n +1 $OUT/*.jsonl | cut -c1-400
