#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# From a fresh clone to a tuned database: installs missing dependencies, builds the gemmtune tool
# alone (Release; compiler output goes to a log unless the build fails), tunes one GEMM shape on
# the default device (first GPU, else first CPU) with a small budget, draws the pictures, and
# ends with a short summary of where everything is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${GEMMTUNE_BUILD_DIR:-$root/build}"
out_dir="${GEMMTUNE_QUICKSTART_DIR:-$root/gemmtune-results/quickstart}"
mkdir -p "$out_dir"
log="$out_dir/build.log"
start=$(date +%s)

step() {
  printf '%-28s' "$1"
  step_start=$(date +%s)
}
ok() { echo "ok ($(($(date +%s) - step_start)) s)"; }
quiet() {  # runs a step with its output in the log; shows the log when it fails
  if ! "$@" >>"$log" 2>&1; then
    echo "failed"
    tail -n 40 "$log"
    echo "quickstart: '$*' failed; the whole log is $log" >&2
    exit 1
  fi
}
: >"$log"
step "dependencies" && quiet "$root/scripts/install-deps.sh" build && ok
# The plotting packages (python3 and matplotlib: 107 of its 223 packages on a bare Debian 12, about
# a minute of the install measured alone) are needed only at the end, so they install while the
# tool builds; in the foreground where sudo would have to ask for a password.
plots_log="$out_dir/install-plots.log"
if [[ $(id -u) -eq 0 ]] || sudo -n true 2>/dev/null; then
  "$root/scripts/install-deps.sh" plots >"$plots_log" 2>&1 &
  plots_pid=$!
else
  "$root/scripts/install-deps.sh" plots >"$plots_log" 2>&1 && plots_pid= || plots_pid=failed
fi
# Ninja (installed with the dependencies) for a new build folder: it compiles a target's files
# while the libraries below it are still building, which Makefiles do not.
generator=()
if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
# Without the test suite, which needs Catch2 and python3 (scripts/test.sh turns it on again).
step "configure" && quiet cmake -S "$root" -B "$build_dir" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE="${GEMMTUNE_BUILD_TYPE:-Release}" -DGEMMTUNE_BUILD_TESTS=OFF && ok
step "build gemmtune" && quiet cmake --build "$build_dir" --target gemmtune -j "$(nproc)" && ok

gemmtune="$build_dir/gemmtune"
# Nothing else may run while kernels are timed.
plots_ready=1
case "$plots_pid" in
  "") ;;
  failed) plots_ready=0 ;;
  *) wait "$plots_pid" || plots_ready=0 ;;
esac
step "tune"
# A re-run starts a new journal; what the last run measured comes back from the evaluation cache.
rm -f "$out_dir/search.json" "$out_dir/journal.jsonl"
"$gemmtune" search --shapes "${GEMMTUNE_QUICKSTART_SHAPE:-256x256x256}" --strategy bayes \
  --max-evals "${GEMMTUNE_QUICKSTART_EVALS:-24}" --seed 1 \
  --output "$out_dir/search.json" --journal "$out_dir/journal.jsonl" --db "$out_dir/tuned.json" \
  >"$out_dir/search.log" 2>&1 || {
  echo "failed"
  tail -n 20 "$out_dir/search.log"
  echo "quickstart: the search failed; its log is $out_dir/search.log" >&2
  exit 1
}
ok
# Debian's python3-matplotlib (installed with the dependencies) belongs to the system python,
# which may not be the first python3 on PATH.
py=python3
"$py" -c "import matplotlib" 2>/dev/null || py=/usr/bin/python3
pictures="(matplotlib missing: no pictures)"
[[ $plots_ready == 1 ]] || pictures="(the plotting packages failed to install, see $plots_log: no pictures)"
if [[ $plots_ready == 1 ]] && "$py" "$root/scripts/plot.py" all "$out_dir/journal.jsonl" "$out_dir/tuned.json" \
  -d "$out_dir/pictures" >>"$log" 2>&1; then
  pictures="$out_dir/pictures/"
fi

echo
"$gemmtune" db show "$out_dir/tuned.json"
echo
echo "database: $out_dir/tuned.json"
echo "report:   $out_dir/tuned-report.md"
echo "pictures: $pictures"
echo "logs:     $log, $out_dir/search.log"
echo "time:     $(($(date +%s) - start)) s"
