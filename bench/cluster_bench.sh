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
# afterwards, DELETES (100000) deleted.
#
# Each destination has its own state directory. All pipes start on the empty table (so each
# creates its tables and saves a checkpoint there); then the backlog is written at the source;
# then each pipe catches up with `chsync run --until-caught-up`, one after the other, timed from
# start to exit. Printed: row changes/s per destination and the cluster ÷ one node ratio.
#
# Routing: chsync writes through the Distributed table with insert_distributed_sync=1. To see what
# routing rows to the shard-local tables itself would save, the script also times the sink alone:
# the final rows as one RowBinary file, inserted (a) through the Distributed table with
# insert_distributed_sync=1 and (b) split by shard (the same sharding expression) and inserted
# into both local tables at once.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/cluster-bench}
rows=${ROWS:-1000000}
updates=${UPDATES:-300000}
deletes=${DELETES:-100000}

[[ -x "$chsync" ]] || { echo "no chsync binary at $chsync (build the chsync target first)" >&2; exit 2; }
if [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" && ! -f "$dir/.cluster-bench" ]]; then
  echo "$dir exists and is not a previous cluster benchmark directory: choose another WORK_DIR" >&2
  exit 2
fi
"$root/scripts/test-servers" stop "$dir" 2>/dev/null || true
rm -rf "$dir"
mkdir -p "$dir"
touch "$dir/.cluster-bench"
cleanup() {
  "$root/scripts/test-servers" stop "$dir"
  rm -rf "$dir"
}
trap cleanup EXIT
"$root/scripts/test-servers" start "$dir" mysql-full clickhouse zookeeper clickhouse-node1 clickhouse-node2 >/dev/null
# shellcheck disable=SC1091
source "$dir/env.sh"
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

common=(--source "$CHSYNC_TEST_MYSQL_FULL" --tables 'bench.*' --log-level warn)
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

echo "writing the backlog: $rows inserts, $updates updates, $deletes deletes ..." >&2
sql bench <<SQL
SET SESSION sql_log_bin = 1;
INSERT INTO t SELECT seq, seq % 1000, seq * 7, CONCAT('name-', seq), CONCAT('city-', seq % 50),
  (seq % 100000) / 100, '2026-01-01' + INTERVAL (seq % 1000000) SECOND FROM seq_1_to_$rows;
UPDATE t SET a = a + 1, name = CONCAT(name, '+') WHERE id <= $updates;
DELETE FROM t WHERE id > $rows - $deletes;
SQL
changes=$((rows + updates + deletes))
binlog_mb=$(sql -N -e "SHOW BINARY LOGS" | awk '{ s += $2 } END { printf "%.0f", s / 1048576 }')
echo "backlog: $changes row changes, about $binlog_mb MB of binlog; load $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A seconds
for d in one sharded replicated; do
  declare -n args=$d
  start=$(now)
  "$chsync" run "${common[@]}" "${args[@]}" --until-caught-up
  seconds[$d]=$(calc "$(now) - $start")
  printf '%-11s caught up in %6s s: %s row changes/s\n' "$d" "${seconds[$d]}" "$(calc "$changes / ${seconds[$d]}")"
done

expected=$(sql -N -e "SELECT count(*) FROM bench.t")
n1=$CHSYNC_TEST_CLICKHOUSE_NODE1
n2=$CHSYNC_TEST_CLICKHOUSE_NODE2
got_one=$(ch "$CHSYNC_TEST_CLICKHOUSE" "SELECT count() FROM bench.t FINAL WHERE _chsync_is_deleted = 0")
got_sharded=$(ch "$n1" "SELECT count() FROM bench.t FINAL WHERE _chsync_is_deleted = 0")
got_replicated=$(ch "$n2" "SELECT count() FROM benchr.t FINAL WHERE _chsync_is_deleted = 0")
echo "rows: source $expected, one node $got_one, sharded $got_sharded, replicated (node 2) $got_replicated"
echo "ratio sharded ÷ one node:    $(calc "${seconds[one]} / ${seconds[sharded]}")"
echo "ratio replicated ÷ one node: $(calc "${seconds[one]} / ${seconds[replicated]}")"

# The sink alone: the same rows through the Distributed table vs split by shard into the locals.
cols='id, a, b, name, city, amount, created, _chsync_version, _chsync_is_deleted'
ch "$n1" "SELECT $cols FROM bench_local.t FORMAT RowBinary" > "$dir/part1.bin"
ch "$n2" "SELECT $cols FROM bench_local.t FORMAT RowBinary" > "$dir/part2.bin"
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
final_rows=$(ch "$n1" "SELECT count() FROM sink.t")
echo "sink alone ($final_rows rows twice): Distributed sync ${distributed} s, split into the locals ${split} s: routing would be $(calc "$distributed / $split")× as fast at the sink"
