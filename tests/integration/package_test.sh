#!/usr/bin/env bash
# The Debian package, end to end (issue 19). Run by ctest (package.cmake) with the variables of
# scripts/test; it fails, never skips, when a server, a tool or the build's packaging is missing.
#
#   tests/integration/package_test.sh BUILD_DIR
#
# 1. cpack builds the .deb from BUILD_DIR (chsync already built, prefix /usr); lintian finds no
#    error; its Depends are runtime libraries, no -dev package.
# 2. dpkg-deb -x puts it into a scratch root; `systemd-analyze verify --root` passes the unit with
#    no message (the host's targets and slices are copied into the root for it; no systemd runs
#    here, verify works offline).
# 3. The package's postinst creates the chsync system user (on this host: it stays).
# 4. A pipe "pkgtest" in the packaged layout: ROOT/etc/chsync/pkgtest.yaml made from the packaged
#    example.yaml (mode 0640, group chsync), the passwords in ROOT/etc/chsync/pkgtest.env (0600).
#    The installed binary runs `check --config` (also: the warning for a password others can
#    read, source_password_file, a missing password file), then the unit's ExecStart line as the
#    unit has it, paths moved under ROOT, as the chsync user, with --until-caught-up; the rows
#    arrive in ClickHouse and `chsync status` reads the state the service user wrote.
set -euo pipefail

build=${1:?usage: package_test.sh BUILD_DIR}
build=$(cd "$build" && pwd)
fail() {
  echo "package_test: FAILED: $*" >&2
  exit 1
}
step() { echo "=== package_test: $*"; }

for var in CHSYNC_TEST_MYSQL_FULL CHSYNC_TEST_CLICKHOUSE; do
  [[ -n "${!var:-}" ]] || fail "$var is not set: run scripts/test (or scripts/test-servers start DIR and source DIR/env.sh)"
done
for tool in cpack dpkg-deb lintian systemd-analyze setpriv getent mariadb; do
  command -v "$tool" >/dev/null || fail "$tool is missing: scripts/setup installs it"
done
[[ $(id -u) -eq 0 ]] || fail "needs root (it creates the chsync user and runs chsync as it)"
grep -q '^CMAKE_INSTALL_PREFIX:PATH=/usr$' "$build/CMakeCache.txt" ||
  fail "$build is not configured with -DCMAKE_INSTALL_PREFIX=/usr, which the package needs"

# mysql://USER:PASSWORD@HOST:PORT and http://USER:PASSWORD@HOST:PORT of the test servers.
url_re='^([a-z]+)://([^:@]+):([^@]+)@([^:/]+):([0-9]+)'
[[ $CHSYNC_TEST_MYSQL_FULL =~ $url_re ]] || fail "cannot parse CHSYNC_TEST_MYSQL_FULL"
my_user=${BASH_REMATCH[2]} my_pw=${BASH_REMATCH[3]} my_host=${BASH_REMATCH[4]} my_port=${BASH_REMATCH[5]}
[[ $CHSYNC_TEST_CLICKHOUSE =~ $url_re ]] || fail "cannot parse CHSYNC_TEST_CLICKHOUSE"
ch_user=${BASH_REMATCH[2]} ch_pw=${BASH_REMATCH[3]} ch_host=${BASH_REMATCH[4]} ch_port=${BASH_REMATCH[5]}

# The service user must be able to reach the scratch root: not under the 0700 test folder.
work=$(mktemp -d /tmp/chsync-package-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
root=$work/root

step "cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work"/pkg/chsync_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || { cat "$work/cpack.log"; fail "cpack made no chsync_*.deb"; }
deb=${debs[0]}
echo "$(basename "$deb"), $(stat -c %s "$deb") bytes"

step "lintian"
# lintian warns about running as root; its findings are what matter.
lintian --pedantic --display-info --fail-on error "$deb" 2>&1 | grep -v '^running with root privileges' | tee "$work/lintian.txt" ||
  fail "lintian found errors (above)"
if grep -q '^E:' "$work/lintian.txt"; then fail "lintian found errors (above)"; fi

step "dependencies"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libmariadb3 libcurl4 libzstd1 libyaml-cpp libssh-4 adduser procps; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib"
done
# Each dependency's package name, without version or alternatives' separators.
mapfile -t packages < <(tr ',|' '\n' <<<"$depends" | sed -e 's/(.*//' -e 's/ //g' | grep -v '^$')
for p in "${packages[@]}"; do
  case $p in
    *-dev | cmake | ninja-build | gcc | g++ | clang | pkg-config | build-essential)
      fail "Depends names $p, a build-time package" ;;
  esac
done

step "layout"
dpkg-deb -x "$deb" "$root"
for f in usr/bin/chsync lib/systemd/system/chsync@.service etc/chsync/example.yaml \
  usr/share/doc/chsync/install.md usr/share/doc/chsync/configuration.md usr/share/doc/chsync/copyright \
  usr/share/doc/chsync/changelog.gz usr/share/man/man1/chsync.1.gz; do
  [[ -f $root/$f ]] || fail "the package has no /$f"
done
[[ $(dpkg-deb -I "$deb" conffiles) == "/etc/chsync/example.yaml" ]] || fail "example.yaml is not the one conffile"
chsync=$root/usr/bin/chsync
version=$("$chsync" --version)
echo "$version"
[[ $version =~ ^chsync\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]{12}(-dirty)?\) ]] ||
  fail "chsync --version does not start with 'chsync X.Y.Z (commit HASH)'"
for lib in "MariaDB Connector/C" libcurl zstd chDB; do
  [[ $version == *"$lib"* ]] || fail "chsync --version does not name $lib"
done

step "systemd-analyze verify"
# verify loads the unit's dependencies (sysinit.target, the slices) from the root: give it the
# host's. Documentation=man:chsync(1) is looked up through MANPATH, in the package's man page.
cp -n /lib/systemd/system/*.target /lib/systemd/system/*.slice "$root/lib/systemd/system/" 2>/dev/null || true
# The commands the unit runs from other packages it depends on (procps' kill for ExecReload).
mkdir -p "$root/bin" && cp -n /bin/kill "$root/bin/"
verify_out=$(cd "$root" && MANPATH=$root/usr/share/man systemd-analyze verify --root="$root" chsync@pkgtest.service 2>&1) ||
  { echo "$verify_out"; fail "systemd-analyze verify failed"; }
[[ -z $verify_out ]] || { echo "$verify_out"; fail "systemd-analyze verify printed warnings"; }
echo "verify: no message"
systemd-analyze security --offline=yes --root="$root" chsync@pkgtest.service 2>&1 | tail -1 || true

step "postinst: the chsync user"
dpkg-deb -e "$deb" "$work/control"
"$work/control/postinst" configure ||
  fail "postinst configure failed"
"$work/control/postinst" configure || fail "postinst configure failed the second time"
passwd_line=$(getent passwd chsync) || fail "postinst created no chsync user"
echo "$passwd_line"
IFS=: read -r _ _ uid _ _ home shell <<<"$passwd_line"
((uid < 1000)) || fail "chsync is not a system user (uid $uid)"
[[ $home == /var/lib/chsync && $shell == /usr/sbin/nologin ]] || fail "chsync's home or shell is wrong"

step "the source"
db=chsync_package
mysql_run() { mariadb --protocol=tcp -h "$my_host" -P "$my_port" -u "$my_user" -p"$my_pw" -N -B -e "$1"; }
mysql_run "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db;
  CREATE TABLE $db.items (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2));
  INSERT INTO $db.items VALUES (1, 'kettle', 19.90), (2, 'teapot', 24.50), (3, 'cup', 4.20);"
ch_db=chsync_package_dest
curl -sf -u "$ch_user:$ch_pw" "http://$ch_host:$ch_port/" --data-binary "DROP DATABASE IF EXISTS $ch_db" >/dev/null ||
  fail "ClickHouse at $ch_host:$ch_port does not answer"

step "the pipe's files, in the packaged layout"
etc=$root/etc/chsync
state=$root/var/lib/chsync/pkgtest
sed -e "s#^source: .*#source: mysql://$my_user@$my_host:$my_port#" \
  -e "s#^dest: .*#dest: http://$ch_user@$ch_host:$ch_port#" \
  -e "s#^tables: .*#tables: \"$db.*\"#" \
  -e "s|^# dest_database: .*|dest_database: $ch_db|" \
  "$etc/example.yaml" >"$etc/pkgtest.yaml"
grep -q "^dest_database: $ch_db" "$etc/pkgtest.yaml" || fail "example.yaml has no '# dest_database:' line to fill in"
chgrp chsync "$etc/pkgtest.yaml"
chmod 0640 "$etc/pkgtest.yaml"
install -m 0600 /dev/null "$etc/pkgtest.env"
printf '# passwords of pipe pkgtest\nCHSYNC_SOURCE_PASSWORD=%s\nCHSYNC_DEST_PASSWORD=%s\n' "$my_pw" "$ch_pw" >"$etc/pkgtest.env"
# What StateDirectory=chsync/%i makes.
install -d -m 0755 "$root/var/lib/chsync"
install -d -m 0750 -o chsync -g chsync "$state"

# EnvironmentFile= as systemd reads it: NAME=VALUE lines, # comments.
read_env_file() {
  local line
  env_vars=()
  while IFS= read -r line || [[ -n $line ]]; do
    [[ -z $line || $line == \#* ]] && continue
    env_vars+=("$line")
  done <"$1"
}

step "chsync check --config (passwords from the environment file)"
read_env_file "$etc/pkgtest.env"
check_out=$(env -u CHSYNC_SOURCE_PASSWORD -u CHSYNC_DEST_PASSWORD "${env_vars[@]}" \
  "$chsync" check --config "$etc/pkgtest.yaml" 2>&1) || { echo "$check_out"; fail "check --config failed"; }
echo "$check_out" | tail -4
[[ $check_out == *"OK: a pipe can run"* ]] || fail "check did not say OK"
[[ $check_out != *"can read it"* ]] || fail "check warned about a file others cannot read"

step "chsync check warns about a password others can read"
sed -e "s#^source: .*#source: mysql://$my_user:$my_pw@$my_host:$my_port#" "$etc/pkgtest.yaml" >"$work/open.yaml"
chmod 0644 "$work/open.yaml"
out=$(env -u CHSYNC_SOURCE_PASSWORD -u CHSYNC_DEST_PASSWORD CHSYNC_DEST_PASSWORD="$ch_pw" \
  "$chsync" check --config "$work/open.yaml" 2>&1) || { echo "$out"; fail "check of open.yaml failed"; }
echo "$out" | grep "can read it" || fail "no warning for a world-readable file with a password"
[[ $out != *"$my_pw"* ]] || fail "check printed the password"
chmod 0640 "$work/open.yaml"
out=$(env -u CHSYNC_SOURCE_PASSWORD CHSYNC_DEST_PASSWORD="$ch_pw" "$chsync" check --config "$work/open.yaml" 2>&1) ||
  { echo "$out"; fail "check of open.yaml (0640) failed"; }
[[ $out != *"can read it"* ]] || fail "a warning for a file others cannot read"

step "source_password_file"
printf '%s\n' "$my_pw" >"$etc/pkgtest.source-password"
chgrp chsync "$etc/pkgtest.source-password"
chmod 0640 "$etc/pkgtest.source-password"
{
  cat "$etc/pkgtest.yaml"
  echo "source_password_file: pkgtest.source-password"
} >"$etc/pkgtest-file.yaml"
out=$(env -u CHSYNC_SOURCE_PASSWORD CHSYNC_DEST_PASSWORD="$ch_pw" "$chsync" check --config "$etc/pkgtest-file.yaml" 2>&1) ||
  { echo "$out"; fail "check with source_password_file failed"; }
[[ $out == *"OK: a pipe can run"* ]] || fail "check with source_password_file did not say OK"
chmod 0644 "$etc/pkgtest.source-password"
out=$(env -u CHSYNC_SOURCE_PASSWORD CHSYNC_DEST_PASSWORD="$ch_pw" "$chsync" check --config "$etc/pkgtest-file.yaml" 2>&1) ||
  { echo "$out"; fail "check with a world-readable password file failed"; }
echo "$out" | grep "source_password_file" | grep "can read it" || fail "no warning for a world-readable password file"
: >"$etc/pkgtest.source-password"
code=0
out=$("$chsync" check --config "$etc/pkgtest-file.yaml" 2>&1) || code=$?
echo "$out"
[[ $code -eq 2 && $out == *"'source_password_file'"*"which is empty"* ]] ||
  fail "an empty password file is not exit 2 naming the key (exit $code)"
rm "$etc/pkgtest.source-password"
code=0
out=$("$chsync" check --config "$etc/pkgtest-file.yaml" 2>&1) || code=$?
echo "$out"
[[ $code -eq 2 && $out == *"'source_password_file'"* && $out == *"pkgtest.source-password"* ]] ||
  fail "a missing password file is not exit 2 naming the key and the file (exit $code)"
rm "$etc/pkgtest-file.yaml"

step "the unit's ExecStart, by hand, as the chsync user"
unit=$root/lib/systemd/system/chsync@.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
env_file=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")
[[ -n $exec_start && -n $env_file ]] || fail "the unit has no ExecStart= or EnvironmentFile="
# %i is the instance; the unit's absolute paths are moved under the scratch root.
to_root() { sed -e 's/%i/pkgtest/g' -e "s#\\(^\\| \\)/\\(usr/bin\\|etc/chsync\\|var/lib/chsync\\)/#\\1$root/\\2/#g" <<<"$1"; }
exec_start=$(to_root "$exec_start")
env_file=$(to_root "$env_file")
echo "ExecStart: $exec_start --until-caught-up"
read_env_file "$env_file"
read -r -a argv <<<"$exec_start"
[[ ${argv[0]} == "$chsync" ]] || fail "ExecStart does not run the packaged /usr/bin/chsync"
# As systemd would: User=/Group=chsync, NoNewPrivileges, no capabilities, UMask=0027,
# WorkingDirectory= the state directory, only the environment file's variables.
run_as_service() {
  local code=0
  (cd "$state" && umask 0027 &&
    timeout 120 setpriv --reuid=chsync --regid=chsync --init-groups --no-new-privs --inh-caps=-all \
      --bounding-set=-all env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/var/lib/chsync "${env_vars[@]}" \
      "${argv[@]}" --until-caught-up) >"$work/run.log" 2>&1 || code=$?
  tail -15 "$work/run.log"
  [[ $code -eq 0 ]] || fail "ExecStart as chsync exited $code"
}
run_as_service
[[ $(find "$state" -mindepth 1 ! -user chsync | wc -l) -eq 0 ]] || fail "files in the state directory not owned by chsync"
[[ -n $(find "$state" -mindepth 1 -print -quit) ]] || fail "the pipe wrote nothing into its state directory"

rows=$(CHSYNC_DEST_PASSWORD=$ch_pw "$chsync" query --dest "http://$ch_user@$ch_host:$ch_port" \
  "SELECT count(), sum(price) FROM $ch_db.items FINAL WHERE _chsync_is_deleted = 0")
echo "ClickHouse: $rows"
[[ $rows == $'3\t48.6' || $rows == $'3\t48.60' ]] || fail "ClickHouse has '$rows', not 3 rows summing to 48.60"

status_out=$("$chsync" status --state "$state" 2>&1) || { echo "$status_out"; fail "chsync status failed"; }
echo "$status_out" | head -8
[[ $status_out == *"$db.items"* ]] || fail "chsync status does not list $db.items"

step "ExecStart again: the service resumes from its checkpoint and streams"
mysql_run "INSERT INTO $db.items VALUES (4, 'saucer', 3.10); UPDATE $db.items SET price = 21.00 WHERE id = 1;
  DELETE FROM $db.items WHERE id = 3;"
run_as_service
grep -q "snapshot of $db.items" "$work/run.log" && fail "the second run copied the table again instead of resuming"
rows=$(CHSYNC_DEST_PASSWORD=$ch_pw "$chsync" query --dest "http://$ch_user@$ch_host:$ch_port" \
  "SELECT groupArray(id), sum(price) FROM (SELECT id, price FROM $ch_db.items FINAL WHERE _chsync_is_deleted = 0 ORDER BY id)")
echo "ClickHouse: $rows"
[[ $rows == $'[1,2,4]\t48.6' || $rows == $'[1,2,4]\t48.60' ]] || fail "ClickHouse has '$rows', not ids 1, 2, 4 summing to 48.60"

mysql_run "DROP DATABASE $db"
echo "package_test: passed"
