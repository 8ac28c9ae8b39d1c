#!/usr/bin/env bash
# End-to-end pipe throughput: `chsync run` on servers this script starts itself (a MariaDB with
# binlog_row_metadata=FULL and the ClickHouse 18.16 server, through scripts/test-servers). Not a
# test: it prints figures and asserts nothing.
#
#   bench/pipe_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# CHSYNC_BINARY defaults to build/src/cli/chsync; WORK_DIR (default /tmp/pipe-bench) receives the
# servers' data directories and is stopped and removed again on exit. Environment knobs:
#   SNAPSHOT_ROWS (1000000)  rows of the snapshot table
#   STREAM_SECONDS (60)      length of the streaming workload
#   SESSIONS (4)             concurrent workload sessions at the source
#
# (a) Snapshot. bench.snap gets SNAPSHOT_ROWS rows (BIGINT key; INT, BIGINT, VARCHAR, DECIMAL and
#     DATETIME columns). chsync's rate is the wall-clock time of `chsync run --until-caught-up`
#     into a fresh database (start-up, snapshot, catch-up, exit), with its default snapshot
#     settings. The peer, in the same run on the same ClickHouse server, is ClickHouse's own
#     `INSERT INTO peer.snap SELECT * FROM mysql('host:port', 'bench', 'snap', user, password)`
#     into a MergeTree table with the column types chsync creates.
# (b) Streaming. `chsync run` (no --until-caught-up) replicates bench.stream; once it streams, a
#     stored procedure runs in SESSIONS sessions for STREAM_SECONDS at full speed: transactions of
#     20 inserted rows, 10 updated, 5 deleted, each row stamped with the source time of its change
#     in microseconds (ts_us = UNIX_TIMESTAMP(SYSDATE(6)) * 1e6). Figures:
#       - source rate: row changes the procedure counted (ROW_COUNT()) per second of workload;
#       - replicated rate: the same row changes divided by the time from the workload's start until
#         a marker row written after the workload appears at the destination;
#       - CPU: utime+stime of the chsync process (/proc/PID/stat) over the same interval, per
#         million row changes;
#       - lag: every 0.25 s while the workload runs, (local clock) − max(ts_us) at the destination,
#         i.e. the age of the newest source change visible in ClickHouse; p50 and p99 of those
#         samples (the samplers' own query time, a few ms, is included).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/pipe-bench}
snapshot_rows=${SNAPSHOT_ROWS:-1000000}
stream_seconds=${STREAM_SECONDS:-60}
sessions=${SESSIONS:-4}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_require_chsync "$chsync"
bench_fresh_dir pipe "$dir"
chsync_pid=""
cleanup() {
  if [[ -n "$chsync_pid" ]] && kill -0 "$chsync_pid" 2>/dev/null; then kill -KILL "$chsync_pid" 2>/dev/null || true; fi
  bench_remove_dir "$dir"
}
trap cleanup EXIT
bench_start "$dir" mysql-full clickhouse
source_url=$CHSYNC_TEST_MYSQL_FULL
dest_url=$CHSYNC_TEST_CLICKHOUSE
sql() { mariadb --no-defaults -S "$CHSYNC_TEST_MYSQL_FULL_SOCKET" -uroot "$@"; }
ch() { curl -sS --fail-with-body -u default:ch-pw "http://127.0.0.1:$CHSYNC_TEST_CLICKHOUSE_PORT/" --data-binary "$1"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
ticks_per_s=$(getconf CLK_TCK)

# ---------------------------------------------------------------------------------------------
# (a) snapshot
echo "creating bench.snap with $snapshot_rows rows ..." >&2
sql <<SQL
CREATE DATABASE bench;
CREATE DATABASE benchstats;
USE bench;
CREATE TABLE bench.snap (
  id BIGINT NOT NULL PRIMARY KEY,
  a INT NOT NULL, b INT NOT NULL, c BIGINT NOT NULL,
  name VARCHAR(40) NOT NULL, city VARCHAR(20) NOT NULL,
  amount DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL
);
INSERT INTO bench.snap
  SELECT seq, CAST(seq % 100000 AS SIGNED) - 50000, seq * 7 % 1000003, seq * 2654435761,
         CONCAT('customer-', seq), ELT(1 + seq % 5, 'Berlin', 'Paris', 'Lisbon', 'Oslo', 'Rome'),
         (seq % 1000000) / 100, '2020-01-01 00:00:00' + INTERVAL seq SECOND
  FROM seq_1_to_${snapshot_rows};
SQL

echo "snapshot: chsync run --until-caught-up ..." >&2
start=$(now)
"$chsync" run --source "$source_url" --dest "$dest_url" --tables 'bench.snap' --dest-database chsync_snap \
  --state "$dir/state-snap" --server-id 9001 --until-caught-up >"$dir/chsync-snap.log" 2>&1 \
  || { echo "chsync run --until-caught-up failed:" >&2; tail -20 "$dir/chsync-snap.log" >&2; exit 1; }
chsync_snap_s=$(calc "$(now) - $start")
chsync_snap_rows=$(ch "SELECT count() FROM chsync_snap.snap FINAL WHERE _chsync_is_deleted = 0")

echo "snapshot: INSERT … SELECT FROM mysql() ..." >&2
ch "CREATE DATABASE peer" >/dev/null
ch "CREATE TABLE peer.snap (id Int64, a Int32, b Int32, c Int64, name String, city String,
    amount Decimal(12, 2), created DateTime('UTC')) ENGINE = MergeTree ORDER BY id" >/dev/null
start=$(now)
ch "INSERT INTO peer.snap SELECT id, a, b, c, name, city, toDecimal64(amount, 2), created
    FROM mysql('127.0.0.1:$CHSYNC_TEST_MYSQL_FULL_PORT', 'bench', 'snap', 'chsync', 'chsync-pw')" >/dev/null
peer_snap_s=$(calc "$(now) - $start")
peer_snap_rows=$(ch "SELECT count() FROM peer.snap")

# Same content on both sides (aggregates over every column).
agg="count(), sum(a), sum(b), sum(c), sum(length(name)), sum(cityHash64(city)), sum(toInt64(amount * 100)), sum(toUInt32(created))"
chsync_agg=$(ch "SELECT $agg FROM chsync_snap.snap FINAL WHERE _chsync_is_deleted = 0")
peer_agg=$(ch "SELECT $agg FROM peer.snap")
same=$([[ "$chsync_agg" == "$peer_agg" ]] && echo "identical" || echo "DIFFERENT: chsync [$chsync_agg] peer [$peer_agg]")

# ---------------------------------------------------------------------------------------------
# (b) streaming
sql <<'SQL'
CREATE TABLE bench.stream (
  id BIGINT NOT NULL PRIMARY KEY,
  a INT NOT NULL, n BIGINT NOT NULL, s VARCHAR(200) NOT NULL,
  amount DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL,
  ts_us BIGINT NOT NULL
);
CREATE TABLE benchstats.changes (sess INT, row_changes BIGINT, transactions BIGINT);
INSERT INTO bench.stream VALUES (0, 0, 0, 'first marker', 0, NOW(), UNIX_TIMESTAMP(SYSDATE(6)) * 1000000);
DELIMITER //
CREATE PROCEDURE benchstats.work(IN sess INT, IN secs INT)
BEGIN
  DECLARE n BIGINT DEFAULT 0;
  DECLARE base BIGINT DEFAULT sess * 1000000000;
  DECLARE changes BIGINT DEFAULT 0;
  DECLARE txns BIGINT DEFAULT 0;
  DECLARE stop_at DATETIME(6) DEFAULT SYSDATE(6) + INTERVAL secs SECOND;
  WHILE SYSDATE(6) < stop_at DO
    START TRANSACTION;
    INSERT INTO bench.stream
      SELECT base + n + seq, seq, n, CONCAT('row ', n + seq), (n + seq) % 1000000 / 100, NOW(),
             UNIX_TIMESTAMP(SYSDATE(6)) * 1000000
      FROM seq_1_to_20;
    SET changes = changes + ROW_COUNT();
    UPDATE bench.stream SET a = a + 1, s = CONCAT(s, '+'), ts_us = UNIX_TIMESTAMP(SYSDATE(6)) * 1000000
      WHERE id BETWEEN base + n - 40 AND base + n - 31;
    SET changes = changes + ROW_COUNT();
    DELETE FROM bench.stream WHERE id BETWEEN base + n - 100 AND base + n - 96;
    SET changes = changes + ROW_COUNT();
    COMMIT;
    SET n = n + 20, txns = txns + 1;
  END WHILE;
  INSERT INTO benchstats.changes VALUES (sess, changes, txns);
END//
DELIMITER ;
SQL

echo "streaming: starting chsync run ..." >&2
"$chsync" run --source "$source_url" --dest "$dest_url" --tables 'bench.stream' --dest-database chsync_stream \
  --state "$dir/state-stream" --server-id 9002 >"$dir/chsync-stream.log" 2>&1 &
chsync_pid=$!
wait_marker() {  # wait_marker ID SECONDS: until row ID is at the destination
  local deadline=$(($(date +%s) + $2))
  while (($(date +%s) < deadline)); do
    kill -0 "$chsync_pid" 2>/dev/null || { echo "chsync run exited:" >&2; tail -20 "$dir/chsync-stream.log" >&2; exit 1; }
    if [[ "$(ch "SELECT count() FROM chsync_stream.stream WHERE id = $1" 2>/dev/null)" == 1 ]]; then return 0; fi
    sleep 0.05
  done
  echo "marker $1 did not reach the destination within $2 s" >&2
  tail -20 "$dir/chsync-stream.log" >&2
  exit 1
}
wait_marker 0 120
sql -e "INSERT INTO bench.stream VALUES (-1, 0, 0, 'streaming marker', 0, NOW(), UNIX_TIMESTAMP(SYSDATE(6)) * 1000000)"
wait_marker -1 60

echo "streaming: $sessions sessions of workload for ${stream_seconds}s ..." >&2
cpu0=$(cpu_ticks "$chsync_pid")
start=$(now)
workers=()
for s in $(seq 1 "$sessions"); do
  sql -e "CALL benchstats.work($s, $stream_seconds)" &
  workers+=($!)
done
lag_file="$dir/lag.txt"
: >"$lag_file"
sleep 1
while :; do
  alive=0
  for w in "${workers[@]}"; do kill -0 "$w" 2>/dev/null && alive=1; done
  ((alive)) || break
  t=$(date +%s%6N)
  m=$(ch "SELECT max(ts_us) FROM chsync_stream.stream" 2>/dev/null || echo "")
  [[ "$m" =~ ^[0-9]+$ ]] && echo $(((t - m) / 1000)) >>"$lag_file"
  sleep 0.25
done
for w in "${workers[@]}"; do wait "$w"; done
workload_end=$(now)
sql -e "INSERT INTO bench.stream VALUES (-2, 0, 0, 'end marker', 0, NOW(), UNIX_TIMESTAMP(SYSDATE(6)) * 1000000)"
wait_marker -2 600
caught_up=$(now)
cpu1=$(cpu_ticks "$chsync_pid")
kill -INT "$chsync_pid"
for _ in $(seq 1 300); do kill -0 "$chsync_pid" 2>/dev/null || break; sleep 0.1; done
stop_rc=0
wait "$chsync_pid" || stop_rc=$?
chsync_pid=""

row_changes=$(sql -N -e "SELECT SUM(row_changes) FROM benchstats.changes")
txns=$(sql -N -e "SELECT SUM(transactions) FROM benchstats.changes")
work_s=$(calc "$workload_end - $start")
repl_s=$(calc "$caught_up - $start")
cpu_s=$(calc "($cpu1 - $cpu0) / $ticks_per_s")
src_rows=$(sql -N -e "SELECT COUNT(*) FROM bench.stream")
dst_rows=$(ch "SELECT count() FROM chsync_stream.stream FINAL WHERE _chsync_is_deleted = 0")
pct() { sort -n "$lag_file" | awk -v p="$1" '{ v[NR] = $1 } END { if (NR == 0) { print "n/a"; exit }
  i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'; }
samples=$(wc -l <"$lag_file")

# ---------------------------------------------------------------------------------------------
echo
echo "=== chsync pipe benchmark ($(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)) ==="
echo "ClickHouse $(ch 'SELECT version()'), MariaDB $(sql -N -e 'SELECT VERSION()')"
echo "(a) snapshot of $snapshot_rows rows (BIGINT key, 3 ints, 2 varchars, DECIMAL(12,2), DATETIME)"
printf '    chsync run --until-caught-up       %8.2f s  %10.0f rows/s  (%s rows at the destination)\n' \
  "$chsync_snap_s" "$(calc "$chsync_snap_rows / $chsync_snap_s")" "$chsync_snap_rows"
printf '    INSERT SELECT FROM mysql()         %8.2f s  %10.0f rows/s  (%s rows)\n' \
  "$peer_snap_s" "$(calc "$peer_snap_rows / $peer_snap_s")" "$peer_snap_rows"
printf '    ratio chsync / mysql()             %8.2f     content: %s\n' "$(calc "$peer_snap_s / $chsync_snap_s")" "$same"
echo "    chsync's own account: $(grep -o 'snapshot of bench.snap: done.*' "$dir/chsync-snap.log" || echo 'n/a')"
echo "(b) streaming, $sessions sessions x ${stream_seconds} s of 20-insert/10-update/5-delete transactions"
printf '    source: %s row changes in %s transactions, %.0f row changes/s\n' "$row_changes" "$txns" \
  "$(calc "$row_changes / $work_s")"
printf '    replicated: %.0f row changes/s (workload start until the end marker arrived, %.1f s; workload %.1f s)\n' \
  "$(calc "$row_changes / $repl_s")" "$repl_s" "$work_s"
printf '    chsync CPU: %.2f s = %.2f CPU s per million row changes\n' "$cpu_s" "$(calc "$cpu_s * 1000000 / $row_changes")"
printf '    lag (age of the newest change at the destination, %s samples): p50 %s ms, p99 %s ms, max %s ms\n' \
  "$samples" "$(pct 50)" "$(pct 99)" "$(pct 100)"
printf '    rows: source %s, destination FINAL %s; chsync stopped by SIGINT with exit %s\n' "$src_rows" "$dst_rows" "$stop_rc"
