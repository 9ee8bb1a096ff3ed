#!/usr/bin/env bash
# A new client process reading a Neo4j namespace over Bolt (empty copy cache): open + first hipporag2 query
# and its memory, for several checkouts of the package side by side, interleaved (the order rotates per
# round). Each side is a git worktree put first on PYTHONPATH; the process is the scale suite's own
# --child-cold step. Used for benchmarks/results/copy_memory_S_lts.md.
#
#   benchmarks/ab_copy_memory.sh SIZE ROUNDS QUESTION_JSON WORKTREE...
#   e.g. benchmarks/ab_copy_memory.sh S 3 '["Which ...?", ["a", "b"]]' /work/wt/copy-old /work/wt/copy-once
#
# Needs HIPPORAG_NEO4J_URI and HIPPORAG_NEO4J_PASSWORD, and the namespace scale_<SIZE> on that server
# (python benchmarks/run.py scale-suite --size SIZE --store neo4j --uri ... --keep).
set -euo pipefail
SIZE=$1; ROUNDS=$2; Q=$3; shift 3
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/ab_rotate.sh"
one() {  # ROUND SIDE
  local W out
  W=$(mktemp -d)
  out=$(cd "$HERE" && PYTHONPATH="$2" /usr/bin/time -f "maxrss_kb=%M wall=%e" python bench_scale_suite.py \
    --child-cold --size "$SIZE" --store neo4j --workdir "$W" --engines local --query "$Q" \
    --uri "$HIPPORAG_NEO4J_URI" 2>&1 | tail -2 | tr '\n' ' ')
  rm -rf "$W"
  echo "round=$1 side=$(basename "$2") commit=$(git -C "$2" rev-parse --short HEAD) load=$(cut -d' ' -f1 /proc/loadavg) $out"
}
rotate "$ROUNDS" one "$@"
