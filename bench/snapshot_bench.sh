#!/usr/bin/env bash
# Snapshot throughput: `chsync run --until-caught-up` against ClickHouse's own
# `INSERT … SELECT FROM mysql()` on three tables, in the same run on the same servers, which this
# script starts itself (a MariaDB with binlog_row_metadata=FULL and the ClickHouse 18.16 server,
# through scripts/test-servers). Not a test: it prints figures and ratios and asserts nothing.
#
#   bench/snapshot_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# CHSYNC_BINARY defaults to build/src/cli/chsync; WORK_DIR (default /tmp/snapshot-bench) receives
# the servers' data directories and is stopped and removed again on exit. Environment knobs:
#   MIXED_ROWS (3000000)   rows of bench.mixed: BIGINT key; INT, BIGINT, 2 VARCHAR(40),
#                          DECIMAL(12,2), DATETIME, DATE, DOUBLE, TINYINT, ENUM, nullable VARCHAR
#   WIDE_ROWS (500000)     rows of bench.wide: 40 columns (10 INT, 5 BIGINT, 8 DECIMAL(14,3),
#                          10 VARCHAR(32), 6 DATETIME and the BIGINT key)
#   LOB_ROWS (15000)       rows of bench.lob: a TEXT of LOB_BYTES (MD5 and SHA1 text, compressible)
#   LOB_BYTES (20480)      and a BLOB of LOB_BYTES (random bytes) each; 15000 x 2 x 20 KiB = 615 MB
#   TABLES ("mixed wide lob")  which of the three to run
#   RUNS (1)               timed runs of each side per table (each into a fresh copy); all printed,
#                          the speed-up taken from each side's best
#   KNOBS                  ';'-separated sets of extra `chsync run` flags, each timed once per
#                          table after the default runs (default: parallelism 1, chunk rows 5000,
#                          25000 and 400000); KNOBS="" skips them. A knob whose run fails is
#                          reported as failed and the others still run
#   LOB_KNOBS              the same for bench.lob (default: parallelism 1, chunk rows 1000 and
#                          3000, since its 15000 rows fit in one default chunk; KNOBS if set)
#
# Per table, chsync copies it with `chsync run --until-caught-up` (default snapshot settings for
# the headline figure) into a fresh state directory and database, start-up to exit: "wall" is that
# time, "copy" the time between its own "snapshot of T: starting" and "…: done" log lines (the copy
# alone, without start-up, table creation and the catch-up that follows). chsync runs with
# --log-level debug, which adds one line per chunk read and per insert (the "where the time goes"
# line adds them up: time reading chunks, time the reader waited for a free writer, time in inserts,
# RowBinary bytes sent). The peer is `INSERT INTO peer.T (columns…) SELECT columns…, 0, 0 FROM
# mysql('127.0.0.1:PORT', 'bench', 'T', user, password)` into a table made with `CREATE TABLE
# peer.T AS chsync_T.T` (the column types, engine and sorting key chsync created; its extra columns
# _chsync_version and _chsync_is_deleted get the constants chsync writes in a snapshot, 0 and 0,
# and _chsync_synced_at its default). Every run waits until ClickHouse has no merge running first.
# CPU: user+system seconds of chsync (/usr/bin/time), of mariadbd and of clickhouse-server
# (/proc/PID/stat before and after) over each run; with chsync's peak RSS.
# Ceiling: the copy cannot be shorter than the CPU of the processes working in it spread over every
# core, so with MariaDB and ClickHouse as busy as in chsync's best run, a pipe using no CPU of its
# own would take (their CPU-s) / cores plus the time outside the copy; printed with the speed-up
# over mysql() that would be, and the CPU that 1.5x leaves for the pipe itself.
# MB/s: MB are the uncompressed bytes of the source's columns in ClickHouse (system.columns of the
# peer's copy, the same for both sides), divided by the run's wall time.
#
# Content: both copies are compared on count() and, per column, sum() of integers, sum(length())
# and sum(cityHash64()) of strings and enums, sum(cityHash64(toString())) of everything else.
# ClickHouse 18.16's mysql() reads a NULL as '' (its column is not Nullable), so nullable columns
# are compared as ifNull(c, '') and their NULL counts are printed separately against the source's.
# Its text parser of doubles is not exact either (0.142857142 becomes 0.14285714200000002, and
# 318,674 of a million values n / 8 come out a bit off), so the DOUBLE column holds halves (n / 2),
# which it reads exactly.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/snapshot-bench}
mixed_rows=${MIXED_ROWS:-3000000}
wide_rows=${WIDE_ROWS:-500000}
lob_rows=${LOB_ROWS:-15000}
lob_bytes=${LOB_BYTES:-20480}
tables=${TABLES:-mixed wide lob}
runs=${RUNS:-1}
knobs=${KNOBS---snapshot-parallelism 1;--snapshot-chunk-rows 5000;--snapshot-chunk-rows 25000;--snapshot-chunk-rows 400000}
lob_knobs=${LOB_KNOBS-${KNOBS---snapshot-parallelism 1;--snapshot-chunk-rows 1000;--snapshot-chunk-rows 3000}}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_require_chsync "$chsync"
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }
bench_fresh_dir snapshot "$dir"
cleanup() {
  bench_remove_dir "$dir"
}
trap cleanup EXIT
bench_start "$dir" mysql-full clickhouse
port=$CHSYNC_TEST_MYSQL_FULL_PORT
sql() { mariadb --no-defaults -S "$CHSYNC_TEST_MYSQL_FULL_SOCKET" -uroot "$@"; }
ch() { curl -sS --fail-with-body -u default:ch-pw "http://127.0.0.1:$CHSYNC_TEST_CLICKHOUSE_PORT/" --data-binary "$1"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
ticks_per_s=$(getconf CLK_TCK)
mysqld_pid=$(cat "$dir/mysql-full/server.pid")
clickhouse_pid=$(cat "$dir/clickhouse/server.pid")
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Waits until ClickHouse runs no merge (at most 120 s), so that one run's merges do not land in
# the next run's figures.
quiet() {
  local deadline=$(($(date +%s) + 120))
  while (($(date +%s) < deadline)); do
    [[ "$(ch "SELECT count() FROM system.merges")" == 0 ]] && break
    sleep 0.5
  done
  sleep 1
}

# ---------------------------------------------------------------------------------------------
# Source tables
sql -e "CREATE DATABASE bench"
make_mixed() {
  echo "creating bench.mixed with $mixed_rows rows ..." >&2
  sql bench <<SQL
CREATE TABLE bench.mixed (
  id BIGINT NOT NULL PRIMARY KEY,
  a INT NOT NULL, b BIGINT NOT NULL,
  name VARCHAR(40) NOT NULL, city VARCHAR(40) NOT NULL,
  amount DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL, day DATE NOT NULL,
  score DOUBLE NOT NULL, flag TINYINT NOT NULL,
  status ENUM('new', 'paid', 'shipped', 'returned', 'cancelled') NOT NULL,
  note VARCHAR(40) NULL
);
INSERT INTO bench.mixed
  SELECT seq, CAST(seq % 100000 AS SIGNED) - 50000, seq * 2654435761,
         CONCAT('customer-', seq), ELT(1 + seq % 5, 'Berlin', 'Paris', 'Lisbon', 'Oslo', 'Rome'),
         (seq % 1000000) / 100, '2020-01-01 00:00:00' + INTERVAL seq SECOND,
         '2000-01-01' + INTERVAL (seq % 10000) DAY, (seq % 1000003) / 2e0 - 250000, CAST(seq % 128 AS SIGNED) - 64,
         1 + seq % 5, IF(seq % 3 = 0, NULL, CONCAT('note ', seq % 1000))
  FROM seq_1_to_${mixed_rows};
SQL
}
make_wide() {
  echo "creating bench.wide with $wide_rows rows ..." >&2
  local cols="id BIGINT NOT NULL PRIMARY KEY" vals="seq" k
  for k in $(seq 1 10); do cols+=", i$k INT NOT NULL"; vals+=", CAST(seq * $k % 1000003 AS SIGNED) - 500000"; done
  for k in $(seq 1 5); do cols+=", b$k BIGINT NOT NULL"; vals+=", seq * $((2654435761 + k))"; done
  for k in $(seq 1 8); do cols+=", d$k DECIMAL(14,3) NOT NULL"; vals+=", (seq * $k % 10000000) / 1000"; done
  for k in $(seq 1 10); do cols+=", s$k VARCHAR(32) NOT NULL"; vals+=", CONCAT('s$k-', LEFT(MD5(seq + $k), $((4 + k * 2))))"; done
  for k in $(seq 1 6); do cols+=", t$k DATETIME NOT NULL"; vals+=", '2020-01-01 00:00:00' + INTERVAL (seq * $k) SECOND"; done
  sql bench <<SQL
CREATE TABLE bench.wide ($cols);
INSERT INTO bench.wide SELECT $vals FROM seq_1_to_${wide_rows};
SQL
}
make_lob() {
  echo "creating bench.lob with $lob_rows rows of 2 x $lob_bytes bytes ..." >&2
  local blob="" k step=1000 from
  for ((k = 0; k < lob_bytes / 1024; k++)); do blob+="RANDOM_BYTES(1024), "; done
  blob+="RANDOM_BYTES($((lob_bytes % 1024 > 0 ? lob_bytes % 1024 : 1)))"
  sql bench -e "CREATE TABLE bench.lob (id BIGINT NOT NULL PRIMARY KEY, title VARCHAR(64) NOT NULL,
    body TEXT NOT NULL, data BLOB NOT NULL)"
  # In statements of 1000 rows (one transaction of 600 MB strains the 64 MB redo log).
  for ((from = 1; from <= lob_rows; from += step)); do
    sql bench -e "INSERT INTO bench.lob
      SELECT seq, CONCAT('document ', seq),
             LEFT(REPEAT(CONCAT(MD5(seq), ' ', SHA1(seq), ' '), $((lob_bytes / 74 + 1))), $lob_bytes),
             LEFT(CONCAT($blob), $lob_bytes)
      FROM seq_${from}_to_$((from + step - 1 < lob_rows ? from + step - 1 : lob_rows))"
  done
}

# ---------------------------------------------------------------------------------------------
# One table
server_id=9100
# "2026-12-03T10:36:46.181Z …" → seconds of the day
log_time() { awk '{ split(substr($1, 12, 12), t, ":"); printf "%.3f", t[1] * 3600 + t[2] * 60 + t[3] }' <<<"$1"; }
results="$dir/results.txt"
: >"$results"

# aggregates T DB: the comparison query's columns for table T (types from chsync's copy in DB)
aggregates() {
  local t=$1 db=$2 name type expr list="count()"
  while IFS=$'\t' read -r name type; do
    case $name in _chsync_*) continue ;; esac
    case $type in
      Nullable*) expr="ifNull(toString($name), '')"; list+=", sum(length($expr)), sum(cityHash64($expr))" ;;
      String | FixedString* | Enum*) list+=", sum(length(toString($name))), sum(cityHash64(toString($name)))" ;;
      Int* | UInt*) list+=", sum($name)" ;;
      *) list+=", sum(cityHash64(toString($name)))" ;;
    esac
  done < <(ch "SELECT name, type FROM system.columns WHERE database = '$db' AND table = '$t' FORMAT TSVRaw")
  echo "$list"
}

# run_chsync T LABEL DB [FLAGS…]: one timed `chsync run --until-caught-up`; prints a result line
run_chsync() {
  local t=$1 label=$2 db=$3
  shift 3
  local state="$dir/state-$db" log="$dir/$db.log" m0 c0 start wall m1 c1
  server_id=$((server_id + 1))
  ch "DROP DATABASE IF EXISTS $db" >/dev/null
  rm -rf "$state"
  quiet
  m0=$(cpu_ticks "$mysqld_pid")
  c0=$(cpu_ticks "$clickhouse_pid")
  start=$(now)
  /usr/bin/time -f '%U %S %M' -o "$dir/$db.time" \
    "$chsync" run --source "$CHSYNC_TEST_MYSQL_FULL" --dest "$CHSYNC_TEST_CLICKHOUSE" --tables "bench.$t" \
    --dest-database "$db" --state "$state" --server-id "$server_id" --until-caught-up --log-level debug "$@" \
    >"$log" 2>&1 || {
    echo "chsync run --until-caught-up failed ($label):" >&2
    tail -20 "$log" >&2
    [[ $label == default ]] && exit 1
    # A knob's failure is a result too: reported, and the other settings still run.
    local msg
    msg=$(grep -m1 -i 'error' "$log" || head -n1 "$log")
    printf '%s\tfailed\t%s\t%s\n' "$t" "$label" "${msg:0:300}" >>"$dir/content.txt"
    return 1
  }
  wall=$(calc "$(now) - $start")
  m1=$(cpu_ticks "$mysqld_pid")
  c1=$(cpu_ticks "$clickhouse_pid")
  local started done_line copy user sys rss reads waits inserts rb
  started=$(grep -m1 "snapshot of bench.$t: starting" "$log")
  done_line=$(grep -m1 "snapshot of bench.$t: done" "$log")
  copy=$(calc "$(log_time "$done_line") - $(log_time "$started")")
  # Before the copy: start-up, preflight, table creation (the log's clock is UTC, like date +%s).
  local before after
  before=$(calc "$(log_time "$started") - ($start - int($start / 86400) * 86400)")
  after=$(calc "$wall - $before - $copy")
  read -r user sys rss <"$dir/$db.time"
  reads=$(grep -o 'read [0-9]* rows in [0-9]* ms' "$log" | awk '{ s += $5 } END { printf "%.2f", s / 1000 }')
  waits=$(grep -o 'after waiting [0-9]* ms' "$log" | awk '{ s += $3 } END { printf "%.2f", s / 1000 }')
  inserts=$(grep -o 'inserted [0-9]* rows ([0-9]* bytes) in [0-9]* ms' "$log" |
    awk '{ s += $7; b += substr($4, 2) } END { printf "%.2f %.1f", s / 1000, b / 1e6 }')
  rb=${inserts#* }
  inserts=${inserts% *}
  printf '%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$t" "$label" "$db" "$wall" "$copy" \
    "$(calc "$user + $sys")" "$(calc "($m1 - $m0) / $ticks_per_s")" "$(calc "($c1 - $c0) / $ticks_per_s")" \
    "$((rss / 1024))" "$reads" "$waits" "$inserts" "$rb" "$before" "$after" >>"$results"
}

# run_peer T DB: one timed INSERT … SELECT FROM mysql() into peer.T, shaped like DB.T
run_peer() {
  local t=$1 db=$2 cols m0 c0 start wall m1 c1
  cols=$(sql -N -e "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS
    WHERE TABLE_SCHEMA = 'bench' AND TABLE_NAME = '$t'")
  ch "CREATE DATABASE IF NOT EXISTS peer" >/dev/null
  ch "DROP TABLE IF EXISTS peer.$t" >/dev/null
  ch "CREATE TABLE peer.$t AS $db.$t" >/dev/null
  quiet
  m0=$(cpu_ticks "$mysqld_pid")
  c0=$(cpu_ticks "$clickhouse_pid")
  start=$(now)
  ch "INSERT INTO peer.$t ($cols, _chsync_version, _chsync_is_deleted) SELECT $cols, 0, 0
      FROM mysql('127.0.0.1:$port', 'bench', '$t', 'chsync', 'chsync-pw')" >/dev/null
  wall=$(calc "$(now) - $start")
  m1=$(cpu_ticks "$mysqld_pid")
  c1=$(cpu_ticks "$clickhouse_pid")
  printf '%s|mysql()|peer|%s|||%s|%s|||||||\n' "$t" "$wall" "$(calc "($m1 - $m0) / $ticks_per_s")" \
    "$(calc "($c1 - $c0) / $ticks_per_s")" >>"$results"
}

# same T DB: identical / DIFFERENT, chsync's copy in DB against peer.T
same() {
  local t=$1 db=$2 agg a b
  agg=$(aggregates "$t" "$db")
  a=$(ch "SELECT $agg FROM $db.$t FINAL WHERE _chsync_is_deleted = 0")
  b=$(ch "SELECT $agg FROM peer.$t")
  if [[ "$a" == "$b" ]]; then echo identical; else echo "DIFFERENT: chsync [$a] mysql() [$b]"; fi
}

bench_table() {
  local t=$1 r i=0 flags
  "make_$t"
  sleep 2
  echo "$t: copies (default settings, $runs run(s) each) ..." >&2
  for ((r = 1; r <= runs; r++)); do
    run_chsync "$t" default "chsync_${t}_$r"
    run_peer "$t" "chsync_${t}_1"
  done
  for ((r = 1; r <= runs; r++)); do
    printf '%s\tcontent\tchsync_%s_%s\t%s\n' "$t" "$t" "$r" "$(same "$t" "chsync_${t}_$r")" >>"$dir/content.txt"
  done
  if [[ -n "$knobs" || ( $t == lob && -n "$lob_knobs" ) ]]; then
    if [[ $t == lob ]]; then IFS=';' read -ra sets <<<"$lob_knobs"; else IFS=';' read -ra sets <<<"$knobs"; fi
    for flags in "${sets[@]}"; do
      i=$((i + 1))
      echo "$t: chsync $flags ..." >&2
      # shellcheck disable=SC2086  # the flags are words
      run_chsync "$t" "$flags" "chsync_${t}_k$i" $flags || continue
      printf '%s\tcontent\tchsync_%s_k%s\t%s\n' "$t" "$t" "$i" "$(same "$t" "chsync_${t}_k$i")" >>"$dir/content.txt"
      ch "DROP DATABASE chsync_${t}_k$i" >/dev/null
    done
  fi
  # NULLs of nullable columns: source, chsync, mysql()
  local name nulls_src nulls_ch nulls_peer
  while IFS=$'\t' read -r name _; do
    nulls_src=$(sql -N -e "SELECT COUNT(*) - COUNT($name) FROM bench.$t")
    nulls_ch=$(ch "SELECT countIf(isNull($name)) FROM chsync_${t}_1.$t FINAL WHERE _chsync_is_deleted = 0")
    nulls_peer=$(ch "SELECT countIf(isNull($name)) FROM peer.$t")
    printf '%s\tnulls\t%s\tsource %s, chsync %s, mysql() %s\n' "$t" "$name" "$nulls_src" "$nulls_ch" "$nulls_peer" >>"$dir/content.txt"
  done < <(ch "SELECT name, type FROM system.columns WHERE database = 'chsync_${t}_1' AND table = '$t'
    AND type LIKE 'Nullable%' AND name NOT LIKE '\\_chsync%' FORMAT TSVRaw")
  # Uncompressed bytes of the source's columns, once merges are over.
  quiet
  local rows mb
  rows=$(ch "SELECT count() FROM peer.$t")
  mb=$(ch "SELECT sum(data_uncompressed_bytes) / 1e6 FROM system.columns WHERE database = 'peer' AND table = '$t'
    AND name NOT LIKE '\\_chsync%'")
  printf '%s\tsize\t%s\t%s\n' "$t" "$rows" "$mb" >>"$dir/sizes.txt"
  for ((r = 1; r <= runs; r++)); do ch "DROP DATABASE chsync_${t}_$r" >/dev/null; done
  ch "DROP TABLE peer.$t" >/dev/null
}

load_before=$(uptime)
: >"$dir/content.txt"
: >"$dir/sizes.txt"
for t in $tables; do bench_table "$t"; done
load_after=$(uptime)

# ---------------------------------------------------------------------------------------------
echo
cores=$(nproc)
echo "=== chsync snapshot benchmark ($(date -u +%F), $cores cores) ==="
echo "ClickHouse $(ch 'SELECT version()'), MariaDB $(sql -N -e 'SELECT VERSION()'), chsync $("$chsync" --version 2>/dev/null | head -1)"
echo "load before: $load_before"
echo "load after:  $load_after"
describe() {
  case $1 in
    mixed) echo "bench.mixed: BIGINT key, INT, BIGINT, 2 VARCHAR(40), DECIMAL(12,2), DATETIME, DATE, DOUBLE, TINYINT, ENUM, nullable VARCHAR" ;;
    wide) echo "bench.wide: 40 columns (BIGINT key, 10 INT, 5 BIGINT, 8 DECIMAL(14,3), 10 VARCHAR(32), 6 DATETIME)" ;;
    lob) echo "bench.lob: BIGINT key, VARCHAR(64), TEXT of $lob_bytes bytes, BLOB of $lob_bytes random bytes" ;;
  esac
}
for t in $tables; do
  read -r _ _ rows mb < <(grep -P "^$t\tsize\t" "$dir/sizes.txt")
  echo
  echo "$(describe "$t"): $rows rows, $(printf '%.1f' "$mb") MB uncompressed in ClickHouse"
  best_chsync=""
  best_copy=""
  best_peer=""
  while IFS='|' read -r _ label _ wall copy ccpu mcpu hcpu rss reads waits inserts rb before after; do
    if [[ $label == "mysql()" ]]; then
      printf '  %-34s wall %7.2f s %9.0f rows/s %7.1f MB/s                   CPU: MariaDB %5.2f s, ClickHouse %5.2f s\n' \
        "INSERT SELECT FROM mysql()" "$wall" "$(calc "$rows / $wall")" "$(calc "$mb / $wall")" "$mcpu" "$hcpu"
      if [[ -z $best_peer ]] || awk "BEGIN { exit !($wall < $best_peer) }"; then best_peer=$wall; fi
      continue
    fi
    printf '  %-34s wall %7.2f s %9.0f rows/s %7.1f MB/s (copy %6.2f s) CPU: MariaDB %5.2f s, ClickHouse %5.2f s, chsync %5.2f s (peak RSS %s MB)\n' \
      "chsync run ${label/default/(default)}" "$wall" "$(calc "$rows / $wall")" "$(calc "$mb / $wall")" "$copy" \
      "$mcpu" "$hcpu" "$ccpu" "$rss"
    printf '  %-34s   before the copy %.2f s, after it %.2f s; in the copy: reading chunks %s s, reader waiting for a writer %s s, inserts %s s (%s MB RowBinary)\n' \
      "" "$before" "$after" "$reads" "$waits" "$inserts" "$rb"
    if [[ $label == default ]]; then
      if [[ -z $best_chsync ]] || awk "BEGIN { exit !($wall < $best_chsync) }"; then
        best_chsync=$wall
        # The servers' CPU in this run and the time outside the copy, for the ceiling below.
        best_servers=$(calc "$mcpu + $hcpu")
        best_fixed=$(calc "$before + $after")
        best_ccpu=$ccpu
      fi
      if [[ -z $best_copy ]] || awk "BEGIN { exit !($copy < $best_copy) }"; then best_copy=$copy; fi
    fi
  done < <(grep "^$t|" "$results")
  printf '  speed-up chsync (default) / mysql(): %.2f× on wall time (best %.2f s vs %.2f s), %.2f× on the copy alone (goal ≥ 1.5×)\n' \
    "$(calc "$best_peer / $best_chsync")" "$best_chsync" "$best_peer" "$(calc "$best_peer / $best_copy")"
  # The ceiling (see the header); for 1.5x the pipe's own CPU must fit into what the servers leave
  # of the cores in 1/1.5 of the peer's time.
  printf '  ceiling on %s cores: a pipe using no CPU itself, with the servers as busy as in that run (%.2f CPU-s), would take %.2f s: %.2f× mysql(); 1.5× leaves the pipe %.2f CPU-s (chsync used %.2f)\n' \
    "$cores" "$best_servers" "$(calc "$best_servers / $cores + $best_fixed")" \
    "$(calc "$best_peer / ($best_servers / $cores + $best_fixed)")" \
    "$(calc "($best_peer / 1.5 - $best_fixed) * $cores - $best_servers")" "$best_ccpu"
  while IFS=$'\t' read -r _ kind what verdict; do
    case $kind in
      content) echo "  content $what vs mysql(): $verdict" ;;
      nulls) echo "  NULLs in $what: $verdict" ;;
      failed) echo "  chsync run $what FAILED: $verdict" ;;
    esac
  done < <(grep -P "^$t\t(content|nulls|failed)\t" "$dir/content.txt")
done
