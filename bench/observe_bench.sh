#!/usr/bin/env bash
# What watching a pipe costs: the same binlog backlog caught up by `chsync run --until-caught-up`
# without --http, and with --http while a client scrapes /metrics and renders the status page ten
# times a second (forty times what a 15 s Prometheus scrape plus an open status page ask). Not a
# test: it prints figures and asserts nothing.
#
#   bench/observe_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# CHSYNC_BINARY defaults to build/src/cli/chsync; WORK_DIR (default /tmp/observe-bench) receives a
# MariaDB (binlog_row_metadata=FULL) and the ClickHouse 18.16 server from scripts/test-servers,
# stopped and removed again on exit. ROWS (default 500000): rows inserted, then a fifth of them
# updated and a tenth deleted. ROUNDS (default 2) pairs of catch-ups, alternating which goes
# first; the best time of each kind counts. Every pipe's FINAL view is compared with the source by
# aggregates over every column.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/observe-bench}
rows=${ROWS:-500000}
rounds=${ROUNDS:-2}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_require_chsync "$chsync"
bench_fresh_dir observe "$dir"
scraper_pid=""
cleanup() {
  [[ -z "$scraper_pid" ]] || kill "$scraper_pid" 2>/dev/null || true
  bench_remove_dir "$dir"
}
trap cleanup EXIT
bench_start "$dir" mysql-full clickhouse
sql() { mariadb --no-defaults -S "$CHSYNC_TEST_MYSQL_FULL_SOCKET" -uroot "$@"; }
ch() { curl -sS --fail-with-body -u default:ch-pw "http://127.0.0.1:$CHSYNC_TEST_CLICKHOUSE_PORT/" --data-binary "$1"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

sql <<'SQL'
CREATE DATABASE bench;
CREATE TABLE bench.t (
  id BIGINT NOT NULL PRIMARY KEY, a INT NOT NULL, s VARCHAR(60) NOT NULL,
  amount DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL
);
SQL

run() {  # run NAME [EXTRA...]: one pipe into database NAME with state $dir/NAME
  local name=$1
  shift
  "$chsync" run --source "$CHSYNC_TEST_MYSQL_FULL" --dest "$CHSYNC_TEST_CLICKHOUSE" --tables 'bench.t' \
    --dest-database "$name" --state "$dir/$name" --server-id "${server_id[$name]}" \
    --until-caught-up "$@" >>"$dir/$name.log" 2>&1
}

# Every pipe records its position on the empty table first, so that all of them catch up the
# same backlog afterwards.
names=()
declare -A server_id
for ((r = 1; r <= rounds; r++)); do
  names+=("plain$r" "observed$r")
  server_id[plain$r]=$((9100 + 2 * r))
  server_id[observed$r]=$((9101 + 2 * r))
done
for name in "${names[@]}"; do run "$name" || { tail -20 "$dir/$name.log" >&2; exit 1; }; done

echo "writing the backlog: $rows inserts, $((rows / 5)) updates, $((rows / 10)) deletes ..." >&2
sql bench -e "INSERT INTO t SELECT seq, seq % 1000, CONCAT('row-', seq), seq / 100, '2024-01-01' + INTERVAL seq SECOND
              FROM seq_1_to_${rows};
              UPDATE t SET a = a + 1, s = CONCAT(s, '+') WHERE id % 5 = 0;
              DELETE FROM t WHERE id % 10 = 3;"
changes=$((rows + rows / 5 + rows / 10))
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

scrape_loop() {  # scrape_loop PORT OUT: /metrics and / every 0.1 s, latency of each /metrics
  local port=$1 out=$2
  while true; do
    curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics" >>"$out" 2>/dev/null || true
    curl -s -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null || true
    sleep 0.1
  done
}

best_plain="" best_observed=""
for ((r = 1; r <= rounds; r++)); do
  order=("plain$r" "observed$r")
  ((r % 2 == 0)) && order=("observed$r" "plain$r")
  for name in "${order[@]}"; do
    extra=()
    if [[ $name == observed* ]]; then
      port=$(free_port)
      extra=(--http "127.0.0.1:$port")
      scrape_loop "$port" "$dir/scrape-times" &
      scraper_pid=$!
    fi
    start=$(now)
    run "$name" "${extra[@]}" || { tail -20 "$dir/$name.log" >&2; exit 1; }
    took=$(calc "$(now) - $start")
    if [[ -n "$scraper_pid" ]]; then kill "$scraper_pid" 2>/dev/null || true; wait "$scraper_pid" 2>/dev/null || true; scraper_pid=""; fi
    echo "  $name: ${took} s" >&2
    if [[ $name == plain* ]]; then
      [[ -z "$best_plain" ]] || (($(awk "BEGIN{print ($took < $best_plain)}"))) && best_plain=$took
    else
      [[ -z "$best_observed" ]] || (($(awk "BEGIN{print ($took < $best_observed)}"))) && best_observed=$took
    fi
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

agg="count(), sum(a), sum(length(s)), sum(toInt64(amount * 100)), sum(toUInt32(created))"
source_agg=$(sql -N bench -e "SELECT COUNT(*), SUM(a), SUM(LENGTH(s)), SUM(CAST(amount * 100 AS SIGNED)), SUM(UNIX_TIMESTAMP(CONVERT_TZ(created, '+00:00', @@session.time_zone))) FROM t" | tr '\t' ' ')
same="identical to the source"
for name in "${names[@]}"; do
  got=$(ch "SELECT $agg FROM $name.t FINAL WHERE _chsync_is_deleted = 0" | tr '\t' ' ')
  [[ "$got" == "$source_agg" ]] || same="DIFFERENT in $name: [$got] vs source [$source_agg]"
done

scrapes=$(wc -l <"$dir/scrape-times" 2>/dev/null || echo 0)
p50=$(sort -n "$dir/scrape-times" | awk '{a[NR]=$1} END {if (NR) printf "%.1f", a[int(NR*0.5)+ (NR*0.5>int(NR*0.5))]*1000}')
p99=$(sort -n "$dir/scrape-times" | awk '{a[NR]=$1} END {if (NR) {i=int(NR*0.99); if (i<1) i=1; printf "%.1f", a[i]*1000}}')

echo
echo "observe benchmark: $changes row changes caught up, best of $rounds each (load before $load_before, after $load_after)"
printf '  without --http                        %8s s  %8.0f changes/s\n' "$best_plain" "$(calc "$changes / $best_plain")"
printf '  with --http, 10 scrapes + pages per s %8s s  %8.0f changes/s\n' "$best_observed" "$(calc "$changes / $best_observed")"
printf '  observed / plain time                 %8s\n' "$(calc "$best_observed / $best_plain")"
printf '  /metrics latency during catch-up      p50 %s ms, p99 %s ms over %s scrapes\n' "$p50" "$p99" "$scrapes"
echo "  destination: $same"
