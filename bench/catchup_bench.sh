#!/usr/bin/env bash
# shellcheck disable=SC2154  # the m_* and i_* figures are assigned by backlog (read, printf -v)
# Catch-up of a binlog backlog against the sink's own limit, in one run (issue 20), on servers this
# script starts itself (a MariaDB with binlog_row_metadata=FULL and the ClickHouse 18.16 server,
# through scripts/test-servers) and on an embedded chDB store. Needs sysbench (Debian `sysbench`,
# installed by scripts/setup), mariadb-binlog, clickhouse-client and /usr/bin/time. Not a test: it
# prints figures and ratios and asserts nothing.
#
#   bench/catchup_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# CHSYNC_BINARY defaults to build/src/cli/chsync; WORK_DIR (default /tmp/catchup-bench) receives the
# servers' data directories and is stopped and removed again on exit. Environment knobs:
#   TABLES (4)              sysbench tables of each backlog
#   TABLE_SIZE (100000)     rows per table that `sysbench prepare` writes
#   SECONDS_RUN (60)        length of each sysbench run (the backlog)
#   THREADS (4)             sysbench threads
#   LIMIT_RUNS (3)          timed inserts per limit measurement; the best counts
#   BIG_ROWS (3000000)      rows of the single large transaction (5)
#
# (1) Mixed backlog: `sysbench oltp_write_only` (per transaction: an update of an indexed column, an
#     update of a string, a delete and an insert of the same key) on TABLES × TABLE_SIZE rows. After
#     `sysbench prepare`, `chsync run --until-caught-up` copies the tables once into the ClickHouse
#     server and once into an embedded store (file:DIR); then, with no chsync running, `sysbench run`
#     writes the backlog for SECONDS_RUN seconds; then `chsync run --until-caught-up` on each state
#     directory catches up (the timed run: start-up, reading the backlog, inserting, checkpoint,
#     exit). Figures: wall time; row changes/s, counted exactly with `mariadb-binlog -v` over the
#     backlog's binlog range (### INSERT/UPDATE/DELETE lines); binlog MB/s (bytes of that range);
#     chsync's CPU seconds (user + system, /usr/bin/time, embedded store's work included as it runs
#     in the process) per million row changes; peak RSS. chsync's own account, from its log, is
#     the time from "streaming from" to "caught up". Around it: how long the source alone takes to
#     send the same binlog range (`mariadb-binlog --read-from-remote-server --raw`, nothing
#     decoded), and the CPU seconds the MariaDB and ClickHouse server processes spent during the
#     catch-up (/proc/PID/stat), to see where the two cores go; and how long the source takes to
#     send the first event of a dump that starts at the backlog, asked by GTID (a MariaDB reads the
#     binlog file from its start to find the GTID; chsync asks so after a failover or when it cannot
#     check the position) and by file:position (as chsync asks the server its checkpoint came from).
# (2) Pure-insert backlog: `sysbench oltp_insert` (one row per autocommit transaction) on TABLES
#     fresh tables of another database, same procedure, into the server only.
# (3) The sink's limit: as many rows as each backlog's row changes (what chsync inserts: one row per
#     change, deletes as tombstones), with the columns chsync sends, into a table made from
#     `SHOW CREATE TABLE` of a replicated table (same engine, key and types) in another database,
#     from a file prepared before timing (the replicated rows repeated with shifted keys): over
#     HTTP as RowBinary (curl --data-binary, the goal's yardstick), over HTTP as Native, and
#     through `clickhouse-client --port NATIVE` as Native. One INSERT each into one fresh table,
#     after the server's merges finished (chsync spreads the same rows over TABLES tables, in
#     batches of --batch-rows). Printed: chsync ÷ each limit (goal ≥ 0.8 of HTTP
#     RowBinary), and the embedded store's catch-up ÷ the server's HTTP limit (there is no separate
#     limit tool for an embedded store).
# (4) After every catch-up the destination is compared with the source on aggregates of every
#     column (count, sums of keys and integers, string lengths and leading digits; FINAL WHERE
#     _chsync_is_deleted = 0): "identical" or "DIFFERENT".
# (5) Peak memory (max RSS) of `chsync run --until-caught-up` catching up ONE transaction of
#     BIG_ROWS inserted rows (one INSERT … SELECT FROM seq_1_to_N).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/catchup-bench}
tables=${TABLES:-4}
table_size=${TABLE_SIZE:-100000}
seconds_run=${SECONDS_RUN:-60}
threads=${THREADS:-4}
limit_runs=${LIMIT_RUNS:-3}
big_rows=${BIG_ROWS:-3000000}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_require_chsync "$chsync"
for tool in sysbench mariadb-binlog clickhouse-client /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (scripts/setup installs it)" >&2; exit 2; }
done
bench_fresh_dir catchup "$dir"
cleanup() {
  bench_remove_dir "$dir"
}
trap cleanup EXIT
bench_start "$dir" mysql-full clickhouse
ch_url="http://127.0.0.1:$CHSYNC_TEST_CLICKHOUSE_PORT"
ch_pw=${CHSYNC_TEST_CLICKHOUSE#*://*:}
ch_pw=${ch_pw%%@*}
store="file:$dir/store"
sql() { mariadb --no-defaults -S "$CHSYNC_TEST_MYSQL_FULL_SOCKET" -uroot "$@"; }
ch() { curl -sS --fail-with-body -u "default:$ch_pw" "$ch_url/" --data-binary "$1"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
sb() {  # sb LUA DATABASE COMMAND [ARGS…]: sysbench as root over the socket
  local lua=$1 db=$2 cmd=$3
  shift 3
  sysbench "$lua" --db-driver=mysql --mysql-socket="$CHSYNC_TEST_MYSQL_FULL_SOCKET" --mysql-user=root \
    --mysql-db="$db" --tables="$tables" --table-size="$table_size" "$@" "$cmd"
}
wait_merges() {  # until the ClickHouse server has no merge running (at most 120 s)
  for _ in $(seq 1 240); do
    [[ "$(ch 'SELECT count() FROM system.merges')" == 0 ]] && return 0
    sleep 0.5
  done
}
binlog_pos() { sql -N -e 'SHOW MASTER STATUS' | awk '{ print $1, $2 }'; }
# range_stats FILE0 POS0 FILE1 POS1: "inserts updates deletes transactions bytes" of the binlog
# between the two positions (mariadb-binlog -v prints one ### line per row change); with a fifth
# argument "bytes", only the bytes are counted (the rest is 0).
range_stats() {
  local f0=$1 p0=$2 f1=$3 p1=$4 files=() bytes=0 name size
  while read -r name size; do
    [[ "$name" < "$f0" || "$name" > "$f1" ]] && continue
    files+=("$CHSYNC_TEST_MYSQL_FULL_DATADIR/$name")
    if [[ "$name" == "$f0" && "$name" == "$f1" ]]; then bytes=$((p1 - p0))
    elif [[ "$name" == "$f0" ]]; then bytes=$((bytes + size - p0))
    elif [[ "$name" == "$f1" ]]; then bytes=$((bytes + p1))
    else bytes=$((bytes + size)); fi
  done < <(sql -N -e 'SHOW BINARY LOGS' | awk '{ print $1, $2 }')
  if [[ ${5:-} == bytes ]]; then echo "0 0 0 0 $bytes"; return; fi
  mariadb-binlog --no-defaults --base64-output=decode-rows -v --start-position="$p0" --stop-position="$p1" "${files[@]}" |
    awk -v bytes="$bytes" '/^### INSERT INTO / { i++ } /^### UPDATE / { u++ } /^### DELETE FROM / { d++ } /\tXid = / { x++ }
      END { printf "%d %d %d %d %d\n", i, u, d, x, bytes }'
}
ticks() { awk '{ print $14 + $15 }' "/proc/$(cat "$1")/stat"; }
ticks_per_s=$(getconf CLK_TCK)
# pipe NAME DEST TABLES SERVER_ID: one `chsync run --until-caught-up` of the pipe with state
# $dir/NAME, under /usr/bin/time; leaves "wall user sys maxrss_kb mariadb_cpu_s clickhouse_cpu_s"
# in $dir/NAME.time (the servers' CPU seconds over the same interval, from /proc).
pipe() {
  local name=$1 dest=$2 what=$3 id=$4
  local start m0 c0
  m0=$(ticks "$CHSYNC_TEST_MYSQL_FULL_PIDFILE")
  c0=$(ticks "$CHSYNC_TEST_CLICKHOUSE_PIDFILE")
  start=$(now)
  /usr/bin/time -o "$dir/$name.rusage" -f '%U %S %M' "$chsync" run --source "$CHSYNC_TEST_MYSQL_FULL" \
    --dest "$dest" --tables "$what" --dest-database "$name" --state "$dir/state-$name" --server-id "$id" \
    --until-caught-up >"$dir/$name.log" 2>&1 ||
    { echo "chsync run --until-caught-up ($name) failed:" >&2; tail -20 "$dir/$name.log" >&2; exit 1; }
  echo "$(calc "$(now) - $start") $(cat "$dir/$name.rusage")" \
    "$(calc "($(ticks "$CHSYNC_TEST_MYSQL_FULL_PIDFILE") - $m0) / $ticks_per_s")" \
    "$(calc "($(ticks "$CHSYNC_TEST_CLICKHOUSE_PIDFILE") - $c0) / $ticks_per_s")" >"$dir/$name.time"
}
# source_alone FILE POS: seconds the source takes to send its binlog from FILE:POS to its end to
# `mariadb-binlog --read-from-remote-server --raw` (over TCP, as chsync reads it; nothing decoded;
# the files it writes are links to /dev/null, so that no disk write is timed).
src_user=${CHSYNC_TEST_MYSQL_FULL#mysql://}
src_user=${src_user%%@*}
source_alone() {
  local start took name
  while read -r name; do
    [[ "$name" < "$1" ]] || ln -sf /dev/null "$dir/raw-$name"
  done < <(sql -N -e 'SHOW BINARY LOGS' | cut -f1)
  start=$(now)
  mariadb-binlog --no-defaults --read-from-remote-server --raw --result-file="$dir/raw-" --host=127.0.0.1 \
    --port="$CHSYNC_TEST_MYSQL_FULL_PORT" --user="${src_user%%:*}" --password="${src_user#*:}" \
    --start-position="$2" "$1" 2>/dev/null
  took=$(calc "$(now) - $start")
  rm -f "$dir"/raw-*
  echo "$took"
}
# first_event NAME FILE POS: "BY_GTID BY_POSITION", seconds until the source sends the first event
# of a dump that starts at the GTID of NAME's last catch-up and at FILE:POS
# (`chsync tail`, first line only). A MariaDB looks a GTID up by reading the binlog file from its
# start, so the first costs more the further into its file the backlog begins.
first_event() {
  local gtid by_gtid by_pos start
  # "reading … from GTID G (binlog …)", or by position: "reading … from F:P (…, GTID position G; …)".
  gtid=$(grep -oE 'from GTID [^ ]+|GTID position [^;) ]+' "$dir/$1.log" | tail -1 | awk '{ print $NF }')
  start=$(now)
  { "$chsync" tail --source "$CHSYNC_TEST_MYSQL_FULL" --from-gtid "$gtid" --until-caught-up --server-id 9399 2>/dev/null |
    head -1 >/dev/null; } || true
  by_gtid=$(calc "$(now) - $start")
  start=$(now)
  { "$chsync" tail --source "$CHSYNC_TEST_MYSQL_FULL" --from "$2:$3" --until-caught-up --server-id 9398 2>/dev/null |
    head -1 >/dev/null; } || true
  by_pos=$(calc "$(now) - $start")
  echo "$by_gtid $by_pos"
}
# own_account NAME: seconds from chsync's last "streaming from" line to its last "caught up" line.
own_account() {
  local a b
  a=$(grep 'INFO  streaming from' "$dir/$1.log" | tail -1 | cut -d' ' -f1)
  b=$(grep 'INFO  caught up' "$dir/$1.log" | tail -1 | cut -d' ' -f1)
  [[ -n "$a" && -n "$b" ]] || { echo "n/a"; return; }
  awk "BEGIN { printf \"%.2f\", $(date -d "$b" +%s.%N) - $(date -d "$a" +%s.%N) }"
}
# Aggregates of every column of a sysbench table (id, k, c, pad): source and destination.
src_agg() {
  sql -N -e "SELECT COUNT(*), SUM(id), SUM(k), SUM(LENGTH(c)), SUM(LENGTH(pad)),
    SUM(CAST(LEFT(c, 11) AS UNSIGNED)), SUM(CAST(LEFT(pad, 11) AS UNSIGNED)) FROM $1" | tr '\t' ' '
}
dst_query() {  # dst_query DEST SQL
  if [[ $1 == file:* ]]; then "$chsync" query --dest "$1" "$2"; else ch "$2"; fi
}
dst_agg() {  # dst_agg DEST TABLE
  dst_query "$1" "SELECT count(), sum(id), sum(k), sum(length(c)), sum(length(pad)),
    sum(toUInt64(substring(c, 1, 11))), sum(toUInt64(substring(pad, 1, 11)))
    FROM $2 FINAL WHERE _chsync_is_deleted = 0" | tr '\t' ' '
}
compare_sb() {  # compare_sb SOURCE_DB DEST DEST_DB: identical / DIFFERENT over every table
  local t a b out="identical"
  for ((t = 1; t <= tables; t++)); do
    a=$(src_agg "$1.sbtest$t")
    b=$(dst_agg "$2" "$3.sbtest$t")
    [[ "$a" == "$b" ]] || out="DIFFERENT ($1.sbtest$t: source [$a], destination [$b])"
  done
  echo "$out"
}
mib() { calc "$1 / 1024"; }

echo "load at start: $(uptime)"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------------------------------------
# backlog P WORKLOAD DB NAME ID [HOOK]: prepares DB with sysbench WORKLOAD and copies it into the
# server (pipe NAME, server id ID), writes a backlog with WORKLOAD while no chsync runs, and
# catches it up. The figures go into P_* variables: P_f0/P_p0 where the backlog starts, P_ins,
# P_upd, P_del, P_txn, P_bytes, P_changes, P_source, P_load, P_wall, P_user, P_sys, P_rss, P_mcpu,
# P_ccpu, P_own, P_same, P_first_gtid, P_first_pos. HOOK (if given) runs with "copy" after the
# first copy and with "catch-up" after the catch-up, for another destination to follow along.
backlog() {
  local p=$1 workload=$2 db=$3 name=$4 id=$5 hook=${6:-} f0 p0 f1 p1
  echo "preparing sysbench $workload: $tables tables x $table_size rows ..." >&2
  sb "$workload" "$db" prepare >"$dir/prepare-$name.log"
  pipe "$name" "$CHSYNC_TEST_CLICKHOUSE" "$db.*" "$id"
  [[ -z $hook ]] || "$hook" copy
  wait_merges
  read -r f0 p0 < <(binlog_pos)
  echo "$name backlog: sysbench $workload, $threads threads for ${seconds_run}s (no chsync running) ..." >&2
  sb "$workload" "$db" run --threads="$threads" --time="$seconds_run" >"$dir/run-$name.log"
  read -r f1 p1 < <(binlog_pos)
  printf -v "${p}_f0" '%s' "$f0"
  printf -v "${p}_p0" '%s' "$p0"
  read -r "${p}_ins" "${p}_upd" "${p}_del" "${p}_txn" "${p}_bytes" < <(range_stats "$f0" "$p0" "$f1" "$p1")
  local -n ins=${p}_ins upd=${p}_upd del=${p}_del
  printf -v "${p}_changes" '%s' "$((ins + upd + del))"
  printf -v "${p}_source" '%s' "$(source_alone "$f0" "$p0")"
  printf -v "${p}_load" '%s' "$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "catching up (server) ..." >&2
  pipe "$name" "$CHSYNC_TEST_CLICKHOUSE" "$db.*" "$id"
  read -r "${p}_wall" "${p}_user" "${p}_sys" "${p}_rss" "${p}_mcpu" "${p}_ccpu" <"$dir/$name.time"
  printf -v "${p}_own" '%s' "$(own_account "$name")"
  printf -v "${p}_same" '%s' "$(compare_sb "$db" "$CHSYNC_TEST_CLICKHOUSE" "$name")"
  read -r "${p}_first_gtid" "${p}_first_pos" < <(first_event "$name" "$f0" "$p0")
  [[ -z $hook ]] || "$hook" catch-up
}

# (1) mixed backlog, followed by the embedded store; (2) pure-insert backlog
embedded_too() {
  if [[ $1 == copy ]]; then
    pipe embedded "$store" 'sbmixed.*' 9302
    return
  fi
  wait_merges
  echo "catching up (embedded store) ..." >&2
  pipe embedded "$store" 'sbmixed.*' 9302
  read -r e_wall e_user e_sys e_rss e_mcpu e_ccpu <"$dir/embedded.time"
  e_own=$(own_account embedded)
  e_same=$(compare_sb sbmixed "$store" embedded)
}
sql -e 'CREATE DATABASE sbmixed; CREATE DATABASE sbinsert; CREATE DATABASE big'
backlog m oltp_write_only sbmixed mixed 9301 embedded_too
backlog i oltp_insert sbinsert insert 9303

# ---------------------------------------------------------------------------------------------
# (3) the sink's limit
ch 'CREATE DATABASE sink' >/dev/null
cols='id, k, c, pad, _chsync_version, _chsync_is_deleted'
schema=$(ch 'SHOW CREATE TABLE mixed.sbtest1 FORMAT TSVRaw')
# make_file NAME TABLE ROWS FORMAT: ROWS rows of TABLE (a replicated table: its rows repeated with
# shifted keys, in an order of no key), in FORMAT.
make_file() {
  local name=$1 table=$2 rows=$3 format=$4 have span
  have=$(ch "SELECT count() FROM $table")
  span=$(ch "SELECT max(id) + 1 FROM $table")
  ch "SELECT toInt32(src_id + n * $span) AS id, k, c, pad, _chsync_version, _chsync_is_deleted
      FROM (SELECT id AS src_id, k, c, pad, _chsync_version, _chsync_is_deleted FROM $table)
      CROSS JOIN (SELECT number AS n FROM system.numbers LIMIT $((rows / have + 1)))
      ORDER BY cityHash64(src_id, n) LIMIT $rows FORMAT $format" >"$dir/$name"
}
# limit_insert HOW FILE: best wall time of LIMIT_RUNS single INSERTs of FILE into a fresh copy of
# chsync's table; HOW is http-rowbinary, http-native or client-native.
limit_insert() {
  local how=$1 file=$2 best="" start took r format query
  format=RowBinary
  [[ $how == *native ]] && format=Native
  for ((r = 1; r <= limit_runs; r++)); do
    ch 'DROP TABLE IF EXISTS sink.t' >/dev/null
    ch "${schema/CREATE TABLE mixed.sbtest1 /CREATE TABLE sink.t }" >/dev/null
    wait_merges
    query="INSERT INTO sink.t ($cols) FORMAT $format"
    start=$(now)
    if [[ $how == http-* ]]; then
      curl -sS --fail-with-body -u "default:$ch_pw" "$ch_url/?query=$(urlencode "$query")" --data-binary @"$file" >/dev/null
    else
      clickhouse-client --host 127.0.0.1 --port "$CHSYNC_TEST_CLICKHOUSE_NATIVE_PORT" --user default \
        --password "$ch_pw" --query "$query" <"$file"
    fi
    took=$(calc "$(now) - $start")
    if [[ -z $best ]] || (($(awk "BEGIN { print ($took < $best) }"))); then best=$took; fi
  done
  echo "$best"
}
echo "the sink's limit: preparing files ..." >&2
make_file mixed.rowbinary mixed.sbtest1 "$m_changes" RowBinary
make_file mixed.native mixed.sbtest1 "$m_changes" Native
make_file insert.rowbinary insert.sbtest1 "$i_changes" RowBinary
make_file insert.native insert.sbtest1 "$i_changes" Native
echo "the sink's limit: timing inserts ..." >&2
lm_http=$(limit_insert http-rowbinary "$dir/mixed.rowbinary")
lm_httpn=$(limit_insert http-native "$dir/mixed.native")
lm_client=$(limit_insert client-native "$dir/mixed.native")
limit_rows=$(ch 'SELECT count() FROM sink.t')
li_http=$(limit_insert http-rowbinary "$dir/insert.rowbinary")
li_httpn=$(limit_insert http-native "$dir/insert.native")
li_client=$(limit_insert client-native "$dir/insert.native")
m_file_mb=$(calc "$(stat -c %s "$dir/mixed.rowbinary") / 1e6")
i_file_mb=$(calc "$(stat -c %s "$dir/insert.rowbinary") / 1e6")
rm -f "$dir"/*.rowbinary "$dir"/*.native

# ---------------------------------------------------------------------------------------------
# (5) one large transaction
echo "one transaction of $big_rows inserted rows ..." >&2
sql big -e 'CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, a INT NOT NULL, s VARCHAR(40) NOT NULL,
              amount DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL)'
pipe big "$CHSYNC_TEST_CLICKHOUSE" 'big.t' 9304
wait_merges
read -r bf0 bp0 < <(binlog_pos)
sql big -e "INSERT INTO t SELECT seq, seq % 100000, CONCAT('row-', seq), seq % 1000000 / 100,
              '2024-01-01' + INTERVAL seq SECOND FROM seq_1_to_$big_rows"
read -r bf1 bp1 < <(binlog_pos)
b_bytes=$(range_stats "$bf0" "$bp0" "$bf1" "$bp1" bytes | cut -d' ' -f5)
pipe big "$CHSYNC_TEST_CLICKHOUSE" 'big.t' 9304
read -r b_wall b_user b_sys b_rss _ _ <"$dir/big.time"
b_src=$(sql -N big -e "SELECT COUNT(*), SUM(id), SUM(a), SUM(LENGTH(s)), SUM(CAST(amount * 100 AS SIGNED)),
  SUM(UNIX_TIMESTAMP(CONVERT_TZ(created, '+00:00', @@session.time_zone))) FROM t" | tr '\t' ' ')
b_dst=$(ch "SELECT count(), sum(id), sum(a), sum(length(s)), sum(toInt64(amount * 100)), sum(toUInt32(created))
  FROM big.t FINAL WHERE _chsync_is_deleted = 0" | tr '\t' ' ')
b_same=$([[ "$b_src" == "$b_dst" ]] && echo identical || echo "DIFFERENT (source [$b_src], destination [$b_dst])")

# ---------------------------------------------------------------------------------------------
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
line() {  # line LABEL CHANGES BYTES WALL USER SYS RSS_KB OWN SAME MARIADB_CPU CLICKHOUSE_CPU
  printf '    %-26s %7.2f s  %8.0f changes/s  %6.1f MB/s of binlog  CPU %5.2f s (%4.2f s per million)  peak RSS %4.0f MiB\n' \
    "$1" "$4" "$(calc "$2 / $4")" "$(calc "$3 / 1e6 / $4")" "$(calc "$5 + $6")" "$(calc "($5 + $6) * 1e6 / $2")" "$(mib "$7")"
  printf '    %-26s streaming to caught up %s s by its log; meanwhile MariaDB %.2f, ClickHouse server %.2f CPU s; destination %s\n' \
    "" "$8" "${10}" "${11}" "$9"
}
limits() {  # limits ROWS MB HTTP HTTP_NATIVE CLIENT
  printf '    HTTP, RowBinary (curl)          %6.2f s  %8.0f rows/s  (%.1f MB file)\n' "$3" "$(calc "$1 / $3")" "$2"
  printf '    HTTP, Native (curl)             %6.2f s  %8.0f rows/s\n' "$4" "$(calc "$1 / $4")"
  printf '    clickhouse-client, Native       %6.2f s  %8.0f rows/s\n' "$5" "$(calc "$1 / $5")"
}
echo
echo "=== chsync catch-up benchmark ($(date -u +%F), $(nproc) cores, load $load_start at start, $load_end at the end) ==="
echo "ClickHouse $(ch 'SELECT version()'), MariaDB $(sql -N -e 'SELECT VERSION()'), sysbench $(sysbench --version | cut -d' ' -f2)"
# report P TITLE: the lines of backlog P's figures (see backlog)
report() {
  local -n changes=${1}_changes ins=${1}_ins upd=${1}_upd del=${1}_del txn=${1}_txn bytes=${1}_bytes
  local -n src=${1}_source f0=${1}_f0 p0=${1}_p0 first_gtid=${1}_first_gtid first_pos=${1}_first_pos
  local -n load=${1}_load wall=${1}_wall user=${1}_user sys=${1}_sys rss=${1}_rss own=${1}_own same=${1}_same
  local -n mcpu=${1}_mcpu ccpu=${1}_ccpu
  echo "$2 (load $load after it)"
  echo "    $changes row changes ($ins inserts, $upd updates, $del deletes) in $txn transactions, $(calc "$bytes / 1e6" | cut -d. -f1) MB of binlog"
  printf '    the source alone sends it (mariadb-binlog --read-from-remote-server --raw) in %.2f s; it starts at byte %s of\n' "$src" "$p0"
  printf '    %s: first event after %.2f s asked by GTID, %.2f s by file:position (as chsync asks here)\n' "$f0" "$first_gtid" "$first_pos"
  line "chsync -> ClickHouse 18.16" "$changes" "$bytes" "$wall" "$user" "$sys" "$rss" "$own" "$same" "$mcpu" "$ccpu"
}
report m "(1) mixed backlog: sysbench oltp_write_only, $tables tables x $table_size rows, $threads threads x ${seconds_run} s"
line "chsync -> embedded chDB" "$m_changes" "$m_bytes" "$e_wall" "$e_user" "$e_sys" "$e_rss" "$e_own" "$e_same" "$e_mcpu" "$e_ccpu"
report i "(2) insert backlog: sysbench oltp_insert, $tables tables, $threads threads x ${seconds_run} s"
echo "(3) the sink's limit: one INSERT of as many rows as row changes, from a file made before timing, into a copy"
echo "    of chsync's table (ReplacingMergeTree, the columns chsync sends), best of $limit_runs (the copy held $limit_rows rows"
echo "    after the last mixed insert)"
echo "    mixed backlog, $m_changes rows:"
limits "$m_changes" "$m_file_mb" "$lm_http" "$lm_httpn" "$lm_client"
echo "    insert backlog, $i_changes rows:"
limits "$i_changes" "$i_file_mb" "$li_http" "$li_httpn" "$li_client"
printf '    chsync / HTTP RowBinary limit:  mixed %.2f, insert %.2f  (goal >= 0.8)\n' \
  "$(calc "$lm_http / $m_wall")" "$(calc "$li_http / $i_wall")"
printf '    chsync / HTTP Native limit:     mixed %.2f, insert %.2f\n' "$(calc "$lm_httpn / $m_wall")" "$(calc "$li_httpn / $i_wall")"
printf '    chsync / clickhouse-client:     mixed %.2f, insert %.2f\n' "$(calc "$lm_client / $m_wall")" "$(calc "$li_client / $i_wall")"
printf '    embedded catch-up / the 18.16 HTTP RowBinary limit: %.2f (no separate limit tool for an embedded store)\n' \
  "$(calc "$lm_http / $e_wall")"
echo "(5) one transaction of $big_rows inserted rows ($(calc "$b_bytes / 1e6" | cut -d. -f1) MB of binlog):"
printf '    chsync run --until-caught-up  %.2f s, CPU %.2f s, peak RSS %.0f MiB; destination %s\n' \
  "$b_wall" "$(calc "$b_user + $b_sys")" "$(mib "$b_rss")" "$b_same"
echo "load at the end: $(uptime)"
