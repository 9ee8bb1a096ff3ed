# Sourced by the ab_*.sh scripts: rotate ROUNDS FUNCTION SIDE... calls FUNCTION ROUND SIDE for every
# side in every round, the order rotating per round (A B, B A, ...), as benchmarks/harness.py interleaves.
rotate() {
  local rounds=$1 fn=$2
  shift 2
  local sides=("$@") n=$# r k
  for r in $(seq 1 "$rounds"); do
    for k in $(seq 0 $((n - 1))); do
      "$fn" "$r" "${sides[$(((k + r - 1) % n))]}"
    done
  done
}
