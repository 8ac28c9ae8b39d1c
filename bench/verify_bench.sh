#!/usr/bin/env bash
# `chsync verify` throughput on a simple table, per side, on servers this script starts itself (a
# MariaDB with binlog_row_metadata=FULL and the ClickHouse 18.16 server, through
# scripts/test-servers) and on an embedded chDB store. Not a test: it prints figures and asserts
# nothing.
#
#   bench/verify_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# CHSYNC_BINARY defaults to build/src/cli/chsync; WORK_DIR (default /tmp/verify-bench) receives the
# servers' data directories and is stopped and removed again on exit. Environment knobs:
#   ROWS (2000000)         rows of the table
#   CHUNK_ROWS (100000)    verify --chunk-rows
#   RUNS (2)               verify runs per destination; the best is printed
#
# bench.simple (BIGINT key; INT, BIGINT, VARCHAR(40), DECIMAL(12,2) columns) is copied by
# `chsync run --until-caught-up` into each destination, then `chsync verify` compares it. Its last
# line per table gives the rows and the time spent in each database's queries (the two sides of a
# chunk run at the same time, so the wall time is about the slower side's; with two lanes, the
# per-side figures add up both lanes' query times, and the wall rate is the one to read). The goal
# (issue 18) is 1M rows/s per side; the ratio printed is rows/s ÷ 1M.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/verify-bench}
rows=${ROWS:-2000000}
chunk_rows=${CHUNK_ROWS:-100000}
runs=${RUNS:-2}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_require_chsync "$chsync"
bench_fresh_dir verify "$dir"
cleanup() {
  bench_remove_dir "$dir"
}
trap cleanup EXIT
bench_start "$dir" mysql-full clickhouse
sql() { mariadb --no-defaults -S "$CHSYNC_TEST_MYSQL_FULL_SOCKET" -uroot; }

echo "creating bench.simple with $rows rows ..." >&2
sql <<SQL
CREATE DATABASE bench;
USE bench;
CREATE TABLE bench.simple (
  id BIGINT NOT NULL PRIMARY KEY, a INT NOT NULL, b BIGINT NOT NULL, name VARCHAR(40) NOT NULL,
  amount DECIMAL(12,2) NOT NULL);
INSERT INTO bench.simple SELECT seq, seq % 1000, seq * 7, CONCAT('name-', seq), seq / 100 FROM seq_1_to_$rows;
SQL

echo "load before: $(uptime)"
# The server with one and with two lanes (--parallel); the embedded store has one.
for case in server:1 server:2 embedded:1; do
  dest=${case%:*}
  parallel=${case#*:}
  if [[ $dest == server ]]; then url=$CHSYNC_TEST_CLICKHOUSE; else url="file:$dir/store"; fi
  state="$dir/state-$dest"
  if [[ ! -d $state ]]; then
    echo "replicating into the $dest destination ..." >&2
    "$chsync" run --source "$CHSYNC_TEST_MYSQL_FULL" --dest "$url" --tables bench.simple --state "$state" \
      --server-id $((4200 + RANDOM % 100)) --until-caught-up >"$dir/run-$dest.log" 2>&1 ||
      { echo "chsync run failed:"; cat "$dir/run-$dest.log"; exit 1; }
  fi
  best_wall=""
  best_line=""
  for ((i = 1; i <= runs; i++)); do
    start=$(date +%s.%N)
    "$chsync" verify --source "$CHSYNC_TEST_MYSQL_FULL" --dest "$url" --tables bench.simple --state "$state" \
      --chunk-rows "$chunk_rows" --parallel "$parallel" >"$dir/verify-$dest.log" 2>&1 ||
      { echo "chsync verify did not find the tables equal:"; cat "$dir/verify-$dest.log"; exit 1; }
    wall=$(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $start }")
    line=$(grep 'bench.simple: equal' "$dir/verify-$dest.log")
    if [[ -z $best_wall ]] || awk "BEGIN { exit !($wall < $best_wall) }"; then
      best_wall=$wall
      best_line=$line
    fi
  done
  # "bench.simple: equal — source N rows in X s (R rows/s), destination N rows in Y s (S rows/s); …"
  src_rate=$(sed -E 's/.*source [0-9]+ rows in [0-9.]+ s \(([0-9]+) rows\/s\).*/\1/' <<<"$best_line")
  dst_rate=$(sed -E 's/.*destination [0-9]+ rows in [0-9.]+ s \(([0-9]+) rows\/s\).*/\1/' <<<"$best_line")
  wall_rate=$(awk "BEGIN { printf \"%.0f\", $rows / $best_wall }")
  printf '%s, %s lane(s): %s rows; wall %s s (%s rows/s); source %s rows/s (%.2f× goal); destination %s rows/s (%.2f× goal)\n' \
    "$dest" "$parallel" "$rows" "$best_wall" "$wall_rate" "$src_rate" "$(awk "BEGIN { print $src_rate / 1e6 }")" \
    "$dst_rate" "$(awk "BEGIN { print $dst_rate / 1e6 }")"
  echo "  $best_line"
done
echo "load after: $(uptime)"
