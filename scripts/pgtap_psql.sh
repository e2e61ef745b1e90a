#!/usr/bin/env bash
# pg_prove's psql in scripts/test.sh (pg_prove -j N --psql-bin scripts/pgtap_psql.sh): runs its
# test file on one of the N copies ${RFR_PGTAP_DB}_1..N of the migrated pgTAP database that no
# other file is using. A file empties the messenger tables and commits its dblink rows in its
# database, so two files at once need two databases; the lock, held by psql until it exits,
# is what says a copy is free. pg_prove runs at most N at a time: one is always free.
set -euo pipefail
for ((i = 1; i <= RFR_PGTAP_JOBS; i++)); do
    exec {fd}>>"$RFR_PGTAP_LOCKS/pgtap-$i.lock"
    if flock -n "$fd"; then
        # Line by line: pg_prove reads a whole line from whichever file has output, and a long
        # file's half line (psql's block-buffered pipe) would hold every other file back.
        PGDATABASE="${RFR_PGTAP_DB}_$i" exec stdbuf -oL psql "$@"
    fi
    exec {fd}>&-
done
echo "pgtap_psql.sh: all $RFR_PGTAP_JOBS pgTAP databases in use" >&2
exit 2
