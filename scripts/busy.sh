# Sourced by scripts/demo.sh and scripts/chaos.sh: BUSY=N runs N stress-ng CPU hogs beside the
# run for its whole length, so that a verdict is also seen on a busy machine (a fresh clone on a
# loaded laptop or CI runner). stress-ng comes from Debian (scripts/bootstrap.sh installs it
# when BUSY is set). The load average is sampled every 5 s; busy_stop prints what was seen.
#   busy_start NAME   start the hogs (nothing when BUSY is unset or 0)
#   busy_stop         stop them (only the process busy_start started) and print the load

BUSY=${BUSY:-0}
_busy_pid=""
_busy_sampler=""
_busy_log=""

busy_start() {
    [[ "$BUSY" =~ ^[0-9]+$ ]] || { echo "$1: BUSY must be a number of CPU hogs; got '$BUSY'" >&2; exit 2; }
    [ "$BUSY" -gt 0 ] || return 0
    command -v stress-ng >/dev/null 2>&1 \
        || { echo "$1: BUSY=$BUSY needs stress-ng (make bootstrap BUSY=$BUSY installs it)" >&2; exit 2; }
    _busy_log="$(mktemp /tmp/rfr-busy-load.XXXXXX)"
    stress-ng --cpu "$BUSY" --cpu-method matrixprod --timeout 0 --quiet &
    _busy_pid=$!
    ( while sleep 5; do cut -d' ' -f1 /proc/loadavg; done >>"$_busy_log" ) &
    _busy_sampler=$!
    echo "$1: BUSY=$BUSY: $BUSY stress-ng CPU hog(s) for the whole run (pid $_busy_pid), on $(nproc) CPUs"
}

busy_stop() {
    [ -n "$_busy_pid" ] || return 0
    kill "$_busy_pid" "$_busy_sampler" 2>/dev/null || true
    wait "$_busy_pid" "$_busy_sampler" 2>/dev/null || true
    if [ -s "$_busy_log" ]; then
        sort -n "$_busy_log" | awk -v hogs="$BUSY" -v cpus="$(nproc)" \
            '{a[NR]=$1} END {printf "busy: %d hog(s) on %d CPUs; 1-min load average over the run: median %s, max %s (%d samples)\n", hogs, cpus, a[int((NR+1)/2)], a[NR], NR}'
    fi
    rm -f "$_busy_log"
    _busy_pid=""
}
