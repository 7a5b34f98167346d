#!/usr/bin/env bash
# The process benchmark of issue 6: the 1M-row, 10-column file (16 batches of 62,500 rows of the
# shared ten-column table, about 80 MB) converted to NDJSON on stdout by `quiver json` and by
# arrow-rs's FileReader + LineDelimitedWriter (src/bin/arrow_rs_ndjson.rs), runs interleaved;
# prints the median wall time (a run on its own), peak RSS and CPU time (user + system, a run
# under `/usr/bin/time -v`) of each, and quiver's ratios to arrow-rs.
#
#   benches/process.sh [RUNS]          (default 7 runs of each)
#
# QUIVER_BENCH_FILE names the input (default /tmp/quiver-ten-columns.arrow; written when absent,
# never into the repository). QUIVER_BENCH_PROFILE names the cargo profile (default `release`,
# the binary `cargo install` builds; `profiling` is the same code with line tables, for
# `perf record` on $bin/quiver).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-7}
file=${QUIVER_BENCH_FILE:-/tmp/quiver-ten-columns.arrow}
profile=${QUIVER_BENCH_PROFILE:-release}
bin=target/$profile
# arrow-rs leaves null members out: quiver does the same work with --omit-nulls.
quiver="$bin/quiver json --omit-nulls"

cargo build --profile "$profile" --quiet -p quiver-cli -p quiver-benches --bins --features quiver-benches/arrow-tz
[ -f "$file" ] || "$bin/ten_columns_file" "$file"

if cmp -s <($quiver "$file") <("$bin/arrow_rs_ndjson" "$file"); then
  echo "same NDJSON from both programs ($(wc -c <"$file") bytes in)"
else
  echo "note: the two programs' NDJSON differ (see README.md, JSON conventions)"
fi

declare -A commands=(
  [quiver]="$quiver $file"
  [quiver-threads-1]="$quiver --threads 1 $file"
  [quiver-mmap]="$quiver --mmap $file"
  [arrow-rs]="$bin/arrow_rs_ndjson $file"
)
order=(quiver quiver-threads-1 quiver-mmap arrow-rs)
log=$(mktemp)
results=$(mktemp)
trap 'rm -f "$log" "$results"' EXIT

# One run: "name wall_seconds peak_kib cpu_seconds": the program run once on its own, timed by
# the shell's clock (`/usr/bin/time` gives wall time to 10 ms only, and starting it would add
# the same milliseconds to every program), then once under /usr/bin/time -v for its peak RSS
# and CPU time.
measure() {
  local name=$1 start end
  start=$EPOCHREALTIME
  # shellcheck disable=SC2086 # the command is split into words on purpose
  ${commands[$name]} >/dev/null
  end=$EPOCHREALTIME
  # shellcheck disable=SC2086
  /usr/bin/time -v ${commands[$name]} >/dev/null 2>"$log"
  awk -v name="$name" -v start="$start" -v end="$end" '
    /User time \(seconds\)|System time \(seconds\)/ { cpu += $NF }
    /Maximum resident set size/ { rss = $NF }
    END { print name, end - start, rss, cpu }' "$log"
}

for _ in $(seq "$runs"); do
  for name in "${order[@]}"; do
    measure "$name" >>"$results"
  done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '\n%-18s %12s %14s %12s\n' program "wall s (med)" "peak MiB (med)" "CPU s (med)"
declare -A wall rss cpu
for name in "${order[@]}"; do
  wall[$name]=$(awk -v n="$name" '$1 == n { print $2 }' "$results" | median)
  rss[$name]=$(awk -v n="$name" '$1 == n { print $3 / 1024 }' "$results" | median)
  cpu[$name]=$(awk -v n="$name" '$1 == n { print $4 }' "$results" | median)
  printf '%-18s %12.3f %14.1f %12.3f\n' "$name" "${wall[$name]}" "${rss[$name]}" "${cpu[$name]}"
done
echo
for name in quiver quiver-threads-1 quiver-mmap; do
  awk -v n="$name" -v q="${wall[$name]}" -v a="${wall[arrow-rs]}" -v qr="${rss[$name]}" -v ar="${rss[arrow-rs]}" \
    -v qc="${cpu[$name]}" -v ac="${cpu[arrow-rs]}" \
    'BEGIN { printf "%s / arrow-rs: wall %.3fx, peak RSS %.2fx, CPU %.2fx\n", n, q / a, qr / ar, qc / ac }'
done
echo "($runs runs each, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
