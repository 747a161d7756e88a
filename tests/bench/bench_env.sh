# Sourced by the benchmark scripts of tests/bench/ (bash, after `set -euo pipefail`):
#   root    the repository
#   shared  ../shared, or $NUPHAR_SHARED_DIR (the models and the ONNX Runtime peer)
#   bin     build/bin, or $NUPHAR_BIN_DIR (the tools under test)
#   work    a scratch directory, removed when the script exits
# and take_rounds_iters, the option parser of the interleaved ours-vs-ORT benchmarks.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${NUPHAR_SHARED_DIR:-$root/../shared}
bin=${NUPHAR_BIN_DIR:-$root/build/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Leading "-r ROUNDS" and "-i ITERS" options into $rounds and $iters (the caller sets the
# defaults); the remaining arguments into the array $args.
take_rounds_iters() {
  while [ $# -gt 0 ]; do
    case $1 in
      -r) rounds=$2; shift 2 ;;
      -i) iters=$2; shift 2 ;;
      *) break ;;
    esac
  done
  args=("$@")
}
