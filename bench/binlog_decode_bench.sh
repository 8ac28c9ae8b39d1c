#!/usr/bin/env bash
# Binlog decoding throughput: `chsync decode` against `mariadb-binlog -v`, on the same file, in
# the same run. Not a test: it prints figures and asserts nothing.
#
#   bench/binlog_decode_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# CHSYNC_BINARY defaults to build/src/cli/chsync; WORK_DIR (default /tmp/bench-servers) receives
# a private MariaDB started with scripts/test-servers, stopped again on exit (its data directory
# is kept for reruns: set KEEP_BINLOG=1 and a later run reuses binlog.000001 when it is there).
#
# The MariaDB writes row events of mixed types (integers, DECIMAL, DOUBLE, VARCHAR, DATETIME(6),
# TIMESTAMP(3), ENUM, JSON, BLOB) in batches of inserts, updates and deletes until its first
# binlog file passes max_binlog_size (1 GiB) and rotates. Each decoder then reads that closed
# file with its output sent to /dev/null; the best of RUNS (default 3) wall-clock times counts,
# and the best CPU time (user + system) is printed beside it.
# The load average before and after the timed runs is printed too: on a shared machine, compare
# figures only within one run (the ratio) or at a similar load.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/bench-servers}
runs=${RUNS:-3}
batch=${BATCH_ROWS:-100000}

[[ -x "$chsync" ]] || { echo "no chsync binary at $chsync (build the chsync target first)" >&2; exit 2; }
command -v mariadb-binlog >/dev/null || { echo "mariadb-binlog is not installed" >&2; exit 2; }

binlog="$dir/mysql-full/data/binlog.000001"
started=0
if [[ "${KEEP_BINLOG:-0}" == 1 && -f "$binlog" && -f "$dir/mysql-full/data/binlog.000002" ]]; then
  echo "reusing $binlog" >&2
else
  if [[ -e "$dir" && ! -d "$dir/mysql-full" && -n "$(ls -A "$dir")" ]]; then
    echo "$dir exists and is not a previous benchmark directory: choose another WORK_DIR" >&2
    exit 2
  fi
  "$root/scripts/test-servers" stop "$dir" 2>/dev/null || true
  rm -rf "$dir/mysql-full" "$dir/env.sh" "$dir/.ports"
  "$root/scripts/test-servers" start "$dir" mysql-full >/dev/null
  started=1
  cleanup() {
    "$root/scripts/test-servers" stop "$dir"
    [[ "${KEEP_BINLOG:-0}" == 1 ]] || rm -rf "$dir/mysql-full"
  }
  trap cleanup EXIT
  sock="$dir/mysql-full/mysqld.sock"
  sql() { mariadb --no-defaults -S "$sock" -uroot "$@"; }
  sql <<'SQL'
SET GLOBAL max_binlog_size = 1073741824;
CREATE DATABASE bench;
CREATE TABLE bench.mixed (
  id BIGINT PRIMARY KEY,
  i INT, u BIGINT UNSIGNED, d DECIMAL(18,6), f DOUBLE,
  s VARCHAR(64), t DATETIME(6), ts TIMESTAMP(3) NULL,
  e ENUM('new', 'open', 'closed', 'archived'), j JSON, b BLOB
);
SQL
  echo "generating row events until binlog.000001 passes 1 GiB ..." >&2
  next=1
  while [[ $(sql -N -e "SHOW BINARY LOGS" | wc -l) -lt 2 ]]; do
    last=$((next + batch - 1))
    sql bench <<SQL
INSERT INTO mixed
  SELECT seq, CAST(seq % 2147483647 AS SIGNED) - 1073741824, seq * 2654435761, seq / 1000, seq * 1.0e-3 + 0.5,
         CONCAT('name-', seq, '-', REPEAT('x', seq % 23)),
         '2024-01-01 00:00:00' + INTERVAL seq SECOND + INTERVAL seq % 1000000 MICROSECOND,
         '2024-01-01 00:00:00' + INTERVAL seq % 100000000 SECOND,
         1 + seq % 4, CONCAT('{"k": ', seq, ', "tags": ["a", "b"], "ok": true}'), REPEAT(CHAR(seq % 256), seq % 40)
  FROM seq_${next}_to_${last};
UPDATE mixed SET i = -i, s = CONCAT(s, '!'), e = 'closed', d = d + 1 WHERE id BETWEEN $next AND $last;
DELETE FROM mixed WHERE id BETWEEN $next AND $last;
SQL
    next=$((last + 1))
    echo "  $((next - 1)) rows written, binlog $(stat -c %s "$binlog") bytes" >&2
  done
fi

size=$(stat -c %s "$binlog")
rows=$(mariadb-binlog --no-defaults -v "$binlog" 2>/dev/null | grep -c '^### \(INSERT INTO\|UPDATE\|DELETE FROM\) ' || true)

calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

best() {  # best COMMAND...: "WALL CPU", the smallest wall-clock and CPU (user + system) seconds
  local best_s="" best_cpu="" s user sys cpu times  # of $runs runs, output to /dev/null
  for _ in $(seq 1 "$runs"); do
    times=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>&1) || { echo "failed: $*" >&2; return 1; }
    read -r s user sys <<<"$times"
    cpu=$(calc "$user + $sys")
    if [[ -z "$best_s" ]] || [[ $(calc "$s < $best_s") == 1.000000 ]]; then best_s=$s; fi
    if [[ -z "$best_cpu" ]] || [[ $(calc "$cpu < $best_cpu") == 1.000000 ]]; then best_cpu=$cpu; fi
  done
  echo "$best_s $best_cpu"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
read -r chsync_s chsync_cpu <<<"$(best "$chsync" decode "$binlog")"
read -r chsync_json_s chsync_json_cpu <<<"$(best "$chsync" decode --format json "$binlog")"
read -r mariadb_s mariadb_cpu <<<"$(best mariadb-binlog --no-defaults -v "$binlog")"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

mb=$(calc "$size / 1048576")
report() {  # report NAME WALL_SECONDS CPU_SECONDS
  printf '%-28s %8.2f s  %8.1f MB/s  %11.0f rows/s   CPU %6.2f s  %8.1f MB/s\n' "$1" "$2" "$(calc "$mb / $2")" \
    "$(calc "$rows / $2")" "$3" "$(calc "$mb / $3")"
}
echo
echo "binlog: $binlog, $(printf '%.1f' "$mb") MiB, $rows row changes (best of $runs runs each, output to /dev/null)"
report "chsync decode" "$chsync_s" "$chsync_cpu"
report "chsync decode --format json" "$chsync_json_s" "$chsync_json_cpu"
report "mariadb-binlog -v" "$mariadb_s" "$mariadb_cpu"
printf 'speed of chsync decode relative to mariadb-binlog -v: %.2fx (target: 5x, and 300 MB/s)\n' \
  "$(calc "$mariadb_s / $chsync_s")"
printf 'the same in CPU time (user + system, less sensitive to a busy machine): %.2fx\n' \
  "$(calc "$mariadb_cpu / $chsync_cpu")"
echo "load average (1, 5, 15 min) before the timed runs: $load_before; after: $load_after ($(nproc) CPUs)"
if ((started)) && [[ "${KEEP_BINLOG:-0}" == 1 ]]; then
  echo "(data kept in $dir for KEEP_BINLOG=1 reruns)" >&2
fi
