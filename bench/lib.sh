# shellcheck shell=bash
# Shared by the benchmark scripts (sourced, not run). Each script sets `root` (the repository) first.
# shellcheck disable=SC2154

# bench_require_chsync BINARY: stops the script unless BINARY is an executable.
bench_require_chsync() {
  [[ -x "$1" ]] || { echo "no chsync binary at $1 (build the chsync target first)" >&2; exit 2; }
}

# bench_fresh_dir KIND DIR: DIR, emptied, becomes the folder of this benchmark's servers. A DIR that
# holds anything but a previous run of the same benchmark (its .KIND-bench marker) is refused, so
# that no other folder is removed.
bench_fresh_dir() {
  local kind=$1 dir=$2
  if [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" && ! -f "$dir/.$kind-bench" ]]; then
    echo "$dir exists and is not a previous $kind benchmark directory: choose another WORK_DIR" >&2
    exit 2
  fi
  "$root/scripts/test-servers" stop "$dir" 2>/dev/null || true
  rm -rf "$dir"
  mkdir -p "$dir"
  touch "$dir/.$kind-bench"
}

# bench_remove_dir DIR: stops the servers started in DIR and removes it (for the scripts' exit traps).
bench_remove_dir() {
  "$root/scripts/test-servers" stop "$1"
  rm -rf "$1"
}

# bench_start DIR SERVER...: starts the servers (names as scripts/test-servers takes them) in DIR, in
# one call, and loads their environment (CHSYNC_TEST_*).
bench_start() {
  local dir=$1
  shift
  "$root/scripts/test-servers" start "$dir" "$@" >/dev/null
  # shellcheck disable=SC1091
  source "$dir/env.sh"
}
