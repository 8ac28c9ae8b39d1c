#!/usr/bin/env bash
# Backlog catch-up into one ClickHouse node and into a ClickHouse cluster, from the same binlog, in
# one run (docs/benchmarks.md, "Clusters"). Starts its own servers through scripts/test-servers
# (MariaDB with FULL row metadata, one ClickHouse 18.16, ZooKeeper and two more ClickHouse 18.16
# nodes that form the clusters `sharded` (2 shards × 1 replica) and `replicated` (1 × 2)). Not a
# test: it prints figures and asserts nothing but equal row counts.
#
#   bench/cluster_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# Environment knobs: ROWS (1000000) inserted rows of the backlog, UPDATES (300000) of them updated
# afterwards, DELETES (100000) deleted, CHSYNC_ARGS more `chsync run` options for every pipe (such
# as --batch-rows 400000), ROUNDS (3) backlogs, each caught up by every pipe (the
# ratios are the median of the rounds: this machine's timings vary by ±20% from run to run).
#
# Each destination has its own state directory. All pipes start on the empty table (so each
# creates its tables and saves a checkpoint there); then, each round, a backlog is written at the
# source and each pipe catches up with `chsync run --until-caught-up`, one after the other, timed
# from start to exit, after the servers finished merging. Printed per run: row changes/s and the CPU
# seconds of chsync and of every server; at the end the cluster ÷ one node ratios.
#
# The sharded pipe lists both nodes in --dest, so chsync sends each row to its shard itself. The
# last line times the sink alone for comparison: the final rows as one RowBinary file, inserted into
# one node, and into the sharded cluster (a) through the Distributed table with
# insert_distributed_sync=1 and (b) split by shard (the same sharding expression) into both local
# tables at once.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/cluster-bench}
rows=${ROWS:-1000000}
updates=${UPDATES:-300000}
deletes=${DELETES:-100000}
rounds=${ROUNDS:-3}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_require_chsync "$chsync"
bench_fresh_dir cluster "$dir"
cleanup() {
  bench_remove_dir "$dir"
}
trap cleanup EXIT
bench_start "$dir" mysql-full clickhouse zookeeper clickhouse-node1 clickhouse-node2
sql() { mariadb --no-defaults -S "$CHSYNC_TEST_MYSQL_FULL_SOCKET" -uroot "$@"; }
ch() { curl -sS --fail-with-body "$1/" --data-binary "$2"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

sql <<'SQL'
CREATE DATABASE bench;
CREATE TABLE bench.t (
  id BIGINT NOT NULL PRIMARY KEY,
  a INT NOT NULL, b BIGINT NOT NULL,
  name VARCHAR(40) NOT NULL, city VARCHAR(20) NOT NULL,
  amount DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL
) ENGINE=InnoDB;
SQL

# shellcheck disable=SC2206
common=(--source "$CHSYNC_TEST_MYSQL_FULL" --tables 'bench.*' --log-level warn ${CHSYNC_ARGS:-})
one=(--dest "$CHSYNC_TEST_CLICKHOUSE" --state "$dir/state-one" --server-id 51)
sharded=(--dest "$CHSYNC_TEST_CLICKHOUSE_NODES" --dest-cluster sharded
  --dest-replication-path '/clickhouse/tables/{sharded_shard}/{database}/{table}' --state "$dir/state-sharded"
  --server-id 52)
replicated=(--dest "$CHSYNC_TEST_CLICKHOUSE_NODES" --dest-cluster replicated --dest-database benchr
  --dest-replication-path '/clickhouse/tables/{replicated_shard}/{database}/{table}' --state "$dir/state-replicated"
  --server-id 53)
for d in one sharded replicated; do
  declare -n args=$d
  "$chsync" run "${common[@]}" "${args[@]}" --until-caught-up
done

# CPU seconds (user + system) a server process used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$(cat "$1")/stat"; }
servers=(CHSYNC_TEST_CLICKHOUSE CHSYNC_TEST_CLICKHOUSE_NODE1 CHSYNC_TEST_CLICKHOUSE_NODE2 CHSYNC_TEST_ZOOKEEPER)
# Waits until no ClickHouse server merges any more (so that no run pays for the previous one's
# background work), then a second for the rest to settle.
quiesce() {
  local url
  for url in "$CHSYNC_TEST_CLICKHOUSE" "$CHSYNC_TEST_CLICKHOUSE_NODE1" "$CHSYNC_TEST_CLICKHOUSE_NODE2"; do
    for _ in $(seq 600); do
      [[ "$(ch "$url" "SELECT count() FROM system.merges")" == 0 ]] && break
      sleep 0.1
    done
  done
  sleep 1
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

changes=$((rows + updates + deletes))
declare -A seconds ratios
for round in $(seq "$rounds"); do
  # Each round: new keys, then updates and deletes of some of them (the same changes every round).
  base=$(((round - 1) * rows))
  echo "round $round: writing the backlog: $rows inserts, $updates updates, $deletes deletes ..." >&2
  sql bench <<SQL
SET SESSION sql_log_bin = 1;
INSERT INTO t SELECT $base + seq, seq % 1000, seq * 7, CONCAT('name-', seq), CONCAT('city-', seq % 50),
  (seq % 100000) / 100, '2026-01-01' + INTERVAL (seq % 1000000) SECOND FROM seq_1_to_$rows;
UPDATE t SET a = a + 1, name = CONCAT(name, '+') WHERE id > $base AND id <= $base + $updates;
DELETE FROM t WHERE id > $base + $rows - $deletes;
SQL
  echo "round $round: backlog of $changes row changes; load $(cut -d' ' -f1-3 /proc/loadavg)"
  for d in one sharded replicated; do
    declare -n args=$d
    quiesce
    declare -A before=()
    for s in "${servers[@]}"; do pidfile=${s}_PIDFILE; before[$s]=$(cpu_of "${!pidfile}"); done
    start=$(now)
    TIMEFORMAT='%U %S'
    { time "$chsync" run "${common[@]}" "${args[@]}" --until-caught-up 2>&3; } 3>&2 2>"$dir/time.$d"
    seconds[$d]=$(calc "$(now) - $start")
    used=()
    for s in "${servers[@]}"; do
      pidfile=${s}_PIDFILE
      used+=("${s#CHSYNC_TEST_} $(calc "$(cpu_of "${!pidfile}") - ${before[$s]}")")
    done
    read -r user sys < "$dir/time.$d"
    printf '%-11s caught up in %6s s: %s row changes/s; CPU s: chsync %s, %s\n' "$d" "${seconds[$d]}" \
      "$(calc "$changes / ${seconds[$d]}")" "$(calc "$user + $sys")" "$(IFS=,; echo "${used[*]}" | sed 's/,/, /g')"
    quiesce
    total=0
    for s in "${servers[@]}"; do pidfile=${s}_PIDFILE; total=$(calc "$total + $(cpu_of "${!pidfile}") - ${before[$s]}"); done
    printf '%-11s servers CPU s until their merges ended: %s\n' "" "$total"
  done
  ratios[sharded]+=" $(calc "${seconds[one]} / ${seconds[sharded]}")"
  ratios[replicated]+=" $(calc "${seconds[one]} / ${seconds[replicated]}")"
done
binlog_mb=$(sql -N -e "SHOW BINARY LOGS" | awk '{ s += $2 } END { printf "%.0f", s / 1048576 }')
echo "binlog: about $binlog_mb MB over $rounds rounds"

expected=$(sql -N -e "SELECT count(*) FROM bench.t")
n1=$CHSYNC_TEST_CLICKHOUSE_NODE1
n2=$CHSYNC_TEST_CLICKHOUSE_NODE2
got_one=$(ch "$CHSYNC_TEST_CLICKHOUSE" "SELECT count() FROM bench.t FINAL WHERE _chsync_is_deleted = 0")
got_sharded=$(ch "$n1" "SELECT count() FROM bench.t FINAL WHERE _chsync_is_deleted = 0")
got_replicated=$(ch "$n2" "SELECT count() FROM benchr.t FINAL WHERE _chsync_is_deleted = 0")
echo "rows: source $expected, one node $got_one, sharded $got_sharded, replicated (node 2) $got_replicated"
# shellcheck disable=SC2086
echo "ratio sharded ÷ one node:    median $(median ${ratios[sharded]}) of${ratios[sharded]}"
# shellcheck disable=SC2086
echo "ratio replicated ÷ one node: median $(median ${ratios[replicated]}) of${ratios[replicated]}"

# The sink alone: the same rows through the Distributed table vs split by shard into the locals.
cols='id, a, b, name, city, amount, created, _chsync_version, _chsync_is_deleted'
# The rows of the first round (the keys it inserted, every version), so the files stay small.
ch "$n1" "SELECT $cols FROM bench_local.t WHERE id <= $rows FORMAT RowBinary" > "$dir/part1.bin"
ch "$n2" "SELECT $cols FROM bench_local.t WHERE id <= $rows FORMAT RowBinary" > "$dir/part2.bin"
cat "$dir/part1.bin" "$dir/part2.bin" > "$dir/all.bin"
for n in "$n1" "$n2"; do
  ch "$n" "CREATE DATABASE IF NOT EXISTS sink"
  ch "$n" "CREATE TABLE sink.t_local AS bench_local.t ENGINE = ReplacingMergeTree(_chsync_version) ORDER BY id"
done
ch "$n1" "CREATE TABLE sink.t ON CLUSTER sharded AS sink.t_local ENGINE = Distributed(sharded, sink, t_local, cityHash64(toString(tuple(id))))" >/dev/null
start=$(now)
curl -sS --fail-with-body "$n1/?insert_distributed_sync=1&query=$(printf 'INSERT INTO sink.t (%s) FORMAT RowBinary' "$cols" | sed 's/ /%20/g')" --data-binary @"$dir/all.bin"
distributed=$(calc "$(now) - $start")
start=$(now)
curl -sS --fail-with-body "$n1/?query=$(printf 'INSERT INTO sink.t_local (%s) FORMAT RowBinary' "$cols" | sed 's/ /%20/g')" --data-binary @"$dir/part1.bin" &
curl -sS --fail-with-body "$n2/?query=$(printf 'INSERT INTO sink.t_local (%s) FORMAT RowBinary' "$cols" | sed 's/ /%20/g')" --data-binary @"$dir/part2.bin"
wait
split=$(calc "$(now) - $start")
one_url=$CHSYNC_TEST_CLICKHOUSE
ch "$one_url" "CREATE DATABASE IF NOT EXISTS sink"
ch "$one_url" "CREATE TABLE sink.t AS bench.t ENGINE = ReplacingMergeTree(_chsync_version) ORDER BY id"
start=$(now)
curl -sS --fail-with-body "$one_url/?query=$(printf 'INSERT INTO sink.t (%s) FORMAT RowBinary' "$cols" | sed 's/ /%20/g')" --data-binary @"$dir/all.bin"
single=$(calc "$(now) - $start")
final_rows=$(ch "$n1" "SELECT count() FROM sink.t")
echo "sink alone ($final_rows rows, one INSERT each): one node ${single} s; sharded: through the Distributed table (sync) ${distributed} s, split by shard into both local tables at once ${split} s (one node ÷ split: $(calc "$single / $split"))"
