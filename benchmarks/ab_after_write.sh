#!/usr/bin/env bash
# bench_after_write.py for several checkouts of the package side by side on one embedded store,
# interleaved (the order rotates per round). Each side is a git worktree put first on PYTHONPATH.
# Used for benchmarks/results/walk_cache_and_carry.md.
#
#   benchmarks/ab_after_write.sh SIZE WORKDIR ROUNDS WORKTREE...
#   e.g. benchmarks/ab_after_write.sh L /work/scaleL 2 /work/wt/old /work/wt/new
#   (QUESTIONS=10, WRITES=3 and PAUSE=0 seconds idle before each write by default)
#
# WORKDIR holds the store the scale suite built (scale-suite --size SIZE --store embedded --keep
# --workdir WORKDIR). Two checkouts whose snapshot formats differ each rebuild the snapshot when they
# open the store (and so does every open after the previous run's delete): "open+first" is not compared.
set -euo pipefail
SIZE=$1; WORKDIR=$2; ROUNDS=$3; shift 3
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/ab_rotate.sh"
one() {  # ROUND SIDE
  echo "== round=$1 side=$2 commit=$(git -C "$2" rev-parse --short HEAD) load=$(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)"
  (cd "$HERE" && PYTHONPATH="$2" python bench_after_write.py --size "$SIZE" --workdir "$WORKDIR" \
    --questions "${QUESTIONS:-10}" --writes "${WRITES:-3}" --pause "${PAUSE:-0}")
}
rotate "$ROUNDS" one "$@"
