# Sourced by scripts/test: each step's time, and lanes that run side by side.
#   step NAME CMD...   runs CMD in the foreground, timed
#   lane NAME CMD...   runs CMD in the background, its output kept in a log
#                      and printed whole when it ends (lanes never interleave)
#   lanes_wait         waits for every lane; fails if one did
# At exit the table of steps and lanes (seconds, wall clock) goes to stderr
# and to $CARGO_TARGET_DIR/ci-steps.txt, for docs/ci.md.

STEPS_T0=$SECONDS
STEPS_TABLE=()
LANE_PIDS=()
LANE_NAMES=()
LANE_LOGS="$(mktemp -d)"

# CMD is a program, not a shell function: inside `||` a function would run
# without errexit.
step() {
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "== step $name" >&2
  "$@" || rc=$?
  STEPS_TABLE+=("$(printf '%-22s %6d s   from %5d s%s' "$name" $((SECONDS - t0)) \
    $((t0 - STEPS_T0)) "$( ((rc == 0)) || echo "   FAILED (exit $rc)")")")
  return "$rc"
}

# A lane's commands run in a subshell of this script (functions work), each
# of its steps timed into the lane's own table file.
lane() {
  local name=$1
  shift
  (
    # errexit holds in here (no `||` around the lane's commands): its first
    # failing step ends it, and the table so far is still written.
    STEPS_TABLE=()
    trap 'printf "%s\n" "${STEPS_TABLE[@]}" >"$LANE_LOGS/'"$name"'.table"' EXIT
    "$@"
  ) >"$LANE_LOGS/$name.log" 2>&1 &
  LANE_PIDS+=($!)
  LANE_NAMES+=("$name")
  echo "== lane $name started (pid $!)" >&2
}

lanes_wait() {
  local i rc failed=()
  for i in "${!LANE_PIDS[@]}"; do
    rc=0
    wait "${LANE_PIDS[$i]}" || rc=$?
    echo "== lane ${LANE_NAMES[$i]}: exit $rc; its output:" >&2
    cat "$LANE_LOGS/${LANE_NAMES[$i]}.log"
    [[ -f "$LANE_LOGS/${LANE_NAMES[$i]}.table" ]] &&
      while IFS= read -r row; do [[ -n $row ]] && STEPS_TABLE+=("${LANE_NAMES[$i]}: $row"); done \
        <"$LANE_LOGS/${LANE_NAMES[$i]}.table"
    ((rc == 0)) || failed+=("${LANE_NAMES[$i]}")
  done
  LANE_PIDS=()
  LANE_NAMES=()
  if ((${#failed[@]})); then
    echo "test: lane(s) failed: ${failed[*]}" >&2
    return 1
  fi
}

steps_report() {
  local out="${CARGO_TARGET_DIR:-target}/ci-steps.txt"
  {
    echo "steps (wall clock; a lane's steps overlap the others'):"
    printf '  %s\n' "${STEPS_TABLE[@]}"
    echo "  total                  $((SECONDS - STEPS_T0)) s"
  } | tee "$out" >&2
}

# A lane still running when the script ends (a step failed) is stopped.
steps_exit() {
  local rc=$?
  for p in "${LANE_PIDS[@]}"; do kill -- "$p" 2>/dev/null || true; done
  steps_report
  rm -rf "$LANE_LOGS"
  exit "$rc"
}
trap steps_exit EXIT
