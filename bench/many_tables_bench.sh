#!/usr/bin/env bash
# One pipe over many tables (issue 36): a source with TENANTS databases of 3 tables each (users,
# orders, events; ROWS rows each), replicated in two layouts — "separate", one ClickHouse table per
# source table (TENANTS × 3 tables), and "merged", the tables of one name merged into one ClickHouse
# table through table_options' `source_column` (3 tables). Not a test: it prints figures and
# asserts nothing, except that each destination ends equal to the source (row counts and sums).
#
#   bench/many_tables_bench.sh [CHSYNC_BINARY] [WORK_DIR]
#
# CHSYNC_BINARY defaults to build/src/cli/chsync; WORK_DIR (default /tmp/many-tables-bench) receives
# the pipes' state directories and logs, and the servers when the script starts its own. Servers:
# with CHSYNC_TEST_MYSQL_FULL and CHSYNC_TEST_CLICKHOUSE set (scripts/test-servers' env.sh loaded),
# the running ones, in databases named after PREFIX (dropped again on exit); otherwise a MariaDB
# (binlog_row_metadata=FULL) and the ClickHouse 18.16 server started in WORK_DIR and removed on
# exit. Environment knobs:
#   TENANTS (1000)              source databases PREFIX"tenant_0001" …
#   ROWS (3)                    rows per table before the copy
#   CHANGES_PER_TABLE (10)      row changes per table in the backlog (TENANTS × 3 × this in all:
#                               30,000 by default), one transaction per table
#   LAYOUTS ("separate merged") which layouts to run
#   DEST (the ClickHouse server) another destination, e.g. file:DIR for an embedded store
#   PREFIX (mtb_)               prefix of every database this script creates
#
# For each layout, one pipe (its own state directory and server id), and these timed runs of
# `chsync run --until-caught-up` under /usr/bin/time (wall, CPU, peak RSS):
#   copy      the first run: finds the tables, creates the ClickHouse tables, copies every row.
#   catch-up  the backlog written while no chsync ran: CHANGES_PER_TABLE changes to every table
#             (half inserts, then updates and deletes), one transaction per table; changes/s.
#   alter     `ALTER TABLE PREFIXtenant_N.users ADD COLUMN note … DEFAULT` run on every tenant
#             while no chsync ran, then caught up: the time to apply one ADD COLUMN rolled out to
#             every tenant.
# Then `chsync run --http` until /readyz answers, and the sizes of /metrics and of the status page
# in bytes and lines, and the lines of `chsync status`. Each destination is compared with the
# source (rows per table name, and the sum of their keys) after each catch-up.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
chsync=${1:-$root/build/src/cli/chsync}
dir=${2:-/tmp/many-tables-bench}
tenants=${TENANTS:-1000}
rows=${ROWS:-3}
changes_per_table=${CHANGES_PER_TABLE:-10}
layouts=${LAYOUTS:-separate merged}
prefix=${PREFIX:-mtb_}
names=(users orders events)

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_require_chsync "$chsync"
command -v /usr/bin/time >/dev/null || { echo "/usr/bin/time is missing (Debian package time)" >&2; exit 2; }
bench_fresh_dir many-tables "$dir"
own_servers=0
if [[ -z "${CHSYNC_TEST_MYSQL_FULL:-}" || -z "${CHSYNC_TEST_CLICKHOUSE:-}" ]]; then
  own_servers=1
  bench_start "$dir" mysql-full clickhouse
fi
dest=${DEST:-$CHSYNC_TEST_CLICKHOUSE}
ch_url="http://127.0.0.1:$CHSYNC_TEST_CLICKHOUSE_PORT"
ch_pw=${CHSYNC_TEST_CLICKHOUSE#*://*:}
ch_pw=${ch_pw%%@*}
sql() { mariadb --no-defaults -S "$CHSYNC_TEST_MYSQL_FULL_SOCKET" -uroot "$@"; }
ch() { curl -sS --fail-with-body -u "default:$ch_pw" "$ch_url/" --data-binary "$1"; }
dst_query() {
  if [[ $dest == file:* ]]; then "$chsync" query --dest "$dest" "$1"; else ch "$1"; fi
}
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
tenant() { printf '%stenant_%04d' "$prefix" "$1"; }
http_pid=""
cleanup() {
  [[ -z "$http_pid" ]] || kill "$http_pid" 2>/dev/null || true
  if ((own_servers)); then
    bench_remove_dir "$dir"
    return
  fi
  # Shared servers: remove what this script made (source databases, ClickHouse databases).
  local i
  for ((i = 1; i <= tenants; i++)); do echo "DROP DATABASE IF EXISTS $(tenant "$i");"; done | sql 2>/dev/null || true
  if [[ $dest != file:* ]]; then
    ch "SELECT name FROM system.databases WHERE startsWith(name, '${prefix}')" 2>/dev/null |
      while read -r db; do ch "DROP DATABASE IF EXISTS \`$db\`" >/dev/null 2>&1 || true; done
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

echo "load at start: $(uptime)"
echo "creating $tenants databases x 3 tables x $rows rows ..." >&2
start=$(now)
python3 - "$tenants" "$rows" "$prefix" <<'PY' | sql
import sys
tenants, rows, prefix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for i in range(1, tenants + 1):
    db = f"{prefix}tenant_{i:04d}"
    print(f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db};")
    print(f"CREATE TABLE {db}.users (id BIGINT PRIMARY KEY, name VARCHAR(40) NOT NULL, created DATETIME NOT NULL);")
    print(f"CREATE TABLE {db}.orders (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, amount DECIMAL(12,2) NOT NULL);")
    print(f"CREATE TABLE {db}.events (id BIGINT PRIMARY KEY, kind VARCHAR(20) NOT NULL, at DATETIME NOT NULL);")
    v = lambda t, k: {"users": f"({k}, 'user-{k}', '2024-01-01 00:00:00')",
                      "orders": f"({k}, {k}, {k}.50)",
                      "events": f"({k}, 'login', '2024-01-01 00:00:00')"}[t]
    for t in ("users", "orders", "events"):
        print(f"INSERT INTO {db}.{t} VALUES " + ", ".join(v(t, k) for k in range(1, rows + 1)) + ";")
PY
echo "  source created in $(calc "$(now) - $start") s" >&2

# Each layout's configuration file.
for layout in $layouts; do
  {
    echo "tables: \"${prefix}tenant_*.*\""
    echo "table_options:"
    if [[ $layout == separate ]]; then
      echo "  \"${prefix}tenant_*.*\": {dest_database: \"${prefix}sep_{database}\"}"
    else
      for t in "${names[@]}"; do
        echo "  \"${prefix}tenant_*.$t\": {dest: ${prefix}merged.$t, source_column: _source}"
      done
    fi
  } >"$dir/$layout.yaml"
done

declare -A server_id=([separate]=9601 [merged]=9602)
# pipe LAYOUT STEP: one timed `chsync run --until-caught-up`; "wall user sys maxrss_kb" in
# $dir/LAYOUT-STEP.time.
pipe() {
  local layout=$1 step=$2 start
  start=$(now)
  /usr/bin/time -o "$dir/$layout-$step.rusage" -f '%U %S %M' "$chsync" run --config "$dir/$layout.yaml" \
    --source "$CHSYNC_TEST_MYSQL_FULL" --dest "$dest" --state "$dir/state-$layout" \
    --server-id "${server_id[$layout]}" --until-caught-up >"$dir/$layout-$step.log" 2>&1 ||
    { echo "chsync run --until-caught-up ($layout, $step) failed:" >&2; tail -20 "$dir/$layout-$step.log" >&2; return 1; }
  echo "$(calc "$(now) - $start") $(cat "$dir/$layout-$step.rusage")" >"$dir/$layout-$step.time"
}

# Source figures per table name: "rows sum(id)" of every tenant together.
source_figures() {
  local t=$1
  python3 - "$tenants" "$prefix" "$t" <<'PY' | sql -N | awk '{ n += $1; s += $2 } END { printf "%d %d\n", n, s }'
import sys
tenants, prefix, t = int(sys.argv[1]), sys.argv[2], sys.argv[3]
for i in range(1, tenants + 1):
    print(f"SELECT COUNT(*), COALESCE(SUM(id), 0) FROM {prefix}tenant_{i:04d}.{t};")
PY
}
# The same at the destination, per layout.
dest_figures() {
  local layout=$1 t=$2 i q=""
  if [[ $layout == merged ]]; then
    dst_query "SELECT count(), sum(id) FROM ${prefix}merged.$t FINAL WHERE _chsync_is_deleted = 0" | tr '\t' ' '
    return
  fi
  for ((i = 1; i <= tenants; i++)); do
    q+="${q:+ UNION ALL }SELECT count() AS n, sum(id) AS s FROM ${prefix}sep_$(tenant "$i").$t FINAL WHERE _chsync_is_deleted = 0"
    if ((i % 100 == 0 || i == tenants)); then
      dst_query "SELECT sum(n), sum(s) FROM ($q)" | tr '\t' ' '
      q=""
    fi
  done | awk '{ n += $1; s += $2 } END { printf "%d %d\n", n, s }'
}
compare() {  # compare LAYOUT: "equal" or what differs
  local layout=$1 t a b out="equal"
  for t in "${names[@]}"; do
    a=$(source_figures "$t")
    b=$(dest_figures "$layout" "$t" 2>&1 || true)
    [[ "$a" == "$b" ]] || out="DIFFERENT ($t: source [$a], destination [$b])"
  done
  echo "$out"
}

declare -A result
for layout in $layouts; do
  echo "$layout: copying ..." >&2
  if pipe "$layout" copy; then result[$layout-copy]=ok; else result[$layout-copy]=failed; fi
done

echo "writing the backlog: $changes_per_table changes to each of $((tenants * 3)) tables ..." >&2
python3 - "$tenants" "$rows" "$changes_per_table" "$prefix" <<'PY' | sql
import sys
tenants, rows, per, prefix = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
inserts = per - per // 2  # then updates and deletes share the rest
updates = (per - inserts + 1) // 2
deletes = per - inserts - updates
cols = {"users": "(id, name, created)", "orders": "(id, user_id, amount)", "events": "(id, kind, at)"}
vals = {"users": "({k}, 'new-{k}', '2024-02-01 00:00:00')", "orders": "({k}, {k}, 9.99)",
        "events": "({k}, 'click', '2024-02-01 00:00:00')"}
sets = {"users": "name = CONCAT(name, '+')", "orders": "amount = amount + 1", "events": "kind = 'seen'"}
for i in range(1, tenants + 1):
    db = f"{prefix}tenant_{i:04d}"
    for t in ("users", "orders", "events"):
        stmts = ["BEGIN"]
        base = rows + 1
        for k in range(base, base + inserts):
            stmts.append(f"INSERT INTO {db}.{t} {cols[t]} VALUES " + vals[t].format(k=k))
        for k in range(base, base + updates):
            stmts.append(f"UPDATE {db}.{t} SET {sets[t]} WHERE id = {k}")
        for k in range(base + inserts - deletes, base + inserts):
            stmts.append(f"DELETE FROM {db}.{t} WHERE id = {k}")
        stmts.append("COMMIT")
        print(";\n".join(stmts) + ";")
PY
total_changes=$((tenants * 3 * changes_per_table))
for layout in $layouts; do
  [[ ${result[$layout-copy]} == ok ]] || continue
  echo "$layout: catching up $total_changes changes ..." >&2
  if pipe "$layout" catchup; then result[$layout-catchup]=$(compare "$layout"); else result[$layout-catchup]=failed; fi
done

echo "ADD COLUMN on users of every tenant ..." >&2
for ((i = 1; i <= tenants; i++)); do
  echo "ALTER TABLE $(tenant "$i").users ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT 'none';"
done | sql
for layout in $layouts; do
  [[ ${result[$layout-catchup]:-failed} != failed ]] || continue
  echo "$layout: catching up the ALTERs ..." >&2
  if pipe "$layout" alter; then
    if [[ $layout == merged ]]; then
      cols=$(dst_query "SELECT count() FROM system.columns WHERE database = '${prefix}merged' AND table = 'users' AND name = 'note'")
    else
      cols=$(dst_query "SELECT count() FROM system.columns WHERE database LIKE '${prefix}sep_%' AND table = 'users' AND name = 'note'")
    fi
    result[$layout-alter]="$cols ClickHouse tables have the column"
  else
    result[$layout-alter]=failed
  fi
done

# /metrics and the status page of a running pipe, caught up.
for layout in $layouts; do
  [[ ${result[$layout-alter]:-failed} != failed ]] || continue
  port=$(free_port)
  "$chsync" run --config "$dir/$layout.yaml" --source "$CHSYNC_TEST_MYSQL_FULL" --dest "$dest" \
    --state "$dir/state-$layout" --server-id "${server_id[$layout]}" --http "127.0.0.1:$port" \
    >"$dir/$layout-http.log" 2>&1 &
  http_pid=$!
  for _ in $(seq 1 600); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)" == 200 ]] && break
    sleep 0.2
  done
  curl -s "http://127.0.0.1:$port/metrics" >"$dir/$layout.metrics" || true
  curl -s "http://127.0.0.1:$port/" >"$dir/$layout.page" || true
  kill -INT "$http_pid" 2>/dev/null || true
  wait "$http_pid" 2>/dev/null || true
  http_pid=""
  "$chsync" status --state "$dir/state-$layout" >"$dir/$layout.status" 2>&1 || true
  result[$layout-metrics]="$(wc -c <"$dir/$layout.metrics") bytes, $(grep -vc '^#' "$dir/$layout.metrics") series"
  result[$layout-page]="$(wc -c <"$dir/$layout.page") bytes"
  result[$layout-status]="$(wc -l <"$dir/$layout.status") lines"
done

line() {  # line LAYOUT STEP [CHANGES]
  local layout=$1 step=$2 n=${3:-} wall user sys rss
  if [[ ! -f "$dir/$layout-$step.time" ]]; then printf '    %-9s failed (log: %s)\n' "$step" "$dir/$layout-$step.log"; return; fi
  read -r wall user sys rss <"$dir/$layout-$step.time"
  printf '    %-9s %8.2f s  CPU %7.2f s  peak RSS %6.0f MiB' "$step" "$wall" "$(calc "$user + $sys")" "$(calc "$rss / 1024")"
  [[ -z $n ]] || printf '  %8.0f changes/s' "$(calc "$n / $wall")"
  echo
}
echo
echo "many-tables benchmark: $tenants databases x 3 tables x $rows rows, destination ${dest%%://*}"
for layout in $layouts; do
  if [[ $layout == separate ]]; then echo "  separate: $((tenants * 3)) ClickHouse tables"; else echo "  merged: 3 ClickHouse tables (source_column _source)"; fi
  line "$layout" copy
  line "$layout" catchup "$total_changes"
  echo "              $total_changes changes; destination ${result[$layout-catchup]:-not run}"
  line "$layout" alter
  echo "              $tenants ALTER TABLE … ADD COLUMN; ${result[$layout-alter]:-not run}"
  echo "    /metrics  ${result[$layout-metrics]:-not run}; status page ${result[$layout-page]:-not run}; chsync status ${result[$layout-status]:-not run}"
done
echo "load at the end: $(uptime)"
