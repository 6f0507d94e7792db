#!/usr/bin/env bash
# From a fresh clone to a tuned database: installs missing dependencies, builds the gemmtune tool
# alone (Release; compiler output goes to a log unless the build fails), tunes one GEMM shape on
# the default device (first GPU, else first CPU) with a small budget, draws the pictures, and
# ends with a short summary of where everything is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${GEMMTUNE_BUILD_DIR:-$root/build}"
out_dir="${GEMMTUNE_QUICKSTART_DIR:-$root/results/quickstart}"
mkdir -p "$out_dir"
log="$out_dir/build.log"
start=$(date +%s)

step() { printf '%-28s' "$1"; }
quiet() {  # runs a step with its output in the log; shows the log when it fails
  if ! "$@" >>"$log" 2>&1; then
    echo "failed"
    tail -n 40 "$log"
    echo "quickstart: '$*' failed; the whole log is $log" >&2
    exit 1
  fi
}
: >"$log"
step "dependencies" && quiet "$root/scripts/install-deps.sh" && echo "ok"
# Ninja (installed with the dependencies) for a new build folder: it compiles a target's files
# while the libraries below it are still building, which Makefiles do not.
generator=()
if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
step "configure" && quiet cmake -S "$root" -B "$build_dir" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE="${GEMMTUNE_BUILD_TYPE:-Release}" && echo "ok"
step "build gemmtune" && quiet cmake --build "$build_dir" --target gemmtune -j "$(nproc)" && echo "ok"

gemmtune="$build_dir/gemmtune"
step "tune" && echo "(a few minutes on a CPU)"
# A re-run starts a new journal; what the last run measured comes back from the evaluation cache.
rm -f "$out_dir/search.json" "$out_dir/journal.jsonl"
"$gemmtune" search --shapes "${GEMMTUNE_QUICKSTART_SHAPE:-256x256x256}" --strategy bayes \
  --max-evals "${GEMMTUNE_QUICKSTART_EVALS:-24}" --seed 1 \
  --output "$out_dir/search.json" --journal "$out_dir/journal.jsonl" --db "$out_dir/tuned.json" \
  >"$out_dir/search.log" 2>&1 || {
  tail -n 20 "$out_dir/search.log"
  echo "quickstart: the search failed; its log is $out_dir/search.log" >&2
  exit 1
}
# Debian's python3-matplotlib (installed with the dependencies) belongs to the system python,
# which may not be the first python3 on PATH.
py=python3
"$py" -c "import matplotlib" 2>/dev/null || py=/usr/bin/python3
pictures="(matplotlib missing: no pictures)"
if "$py" "$root/scripts/plot.py" all "$out_dir/journal.jsonl" "$out_dir/tuned.json" \
  -d "$out_dir/pictures" >>"$log" 2>&1; then
  pictures="$out_dir/pictures/"
fi

echo
python3 - "$out_dir/tuned.json" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
device = db.get("device", {})
print(f"device:   {device.get('name', '?')} ({device.get('profile', 'generic')})")
for e in db.get("entries", []):
    key = e.get("key", {})
    print(f"best:     {e.get('gflops', 0):.1f} GFLOPS at {key.get('m')}x{key.get('n')}x{key.get('k')}"
          f" ({key.get('kernel', '?')})")
PY
echo "database: $out_dir/tuned.json"
echo "report:   $out_dir/tuned-report.md"
echo "pictures: $pictures"
echo "logs:     $log, $out_dir/search.log"
echo "time:     $(($(date +%s) - start)) s"
