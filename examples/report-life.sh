#!/usr/bin/env bash
# The life of a report, as the README tells it ("The life of a report", where
# tests/readme.rs checks each command's output): seal, correct, reissue, unseal, on the
# embedded default. Run it from an empty folder with sqlrun on
# PATH (or SQLRUN=path/to/sqlrun); it prints each command and what it printed.
set -euo pipefail
sqlrun=${SQLRUN:-sqlrun}
say() { printf '\n$ %s\n' "$*"; }
# The command as one would type it: an argument with a space in double quotes.
typed() {
    local out="" a
    for a in "$@"; do
        case $a in *' '*) out+=" \"$a\"" ;; *) out+=" $a" ;; esac
    done
    printf '%s' "${out# }"
}
run() { say "sqlrun $(typed "$@")"; "$sqlrun" "$@"; }
sql() { say "sqlite3 -header -column sqlrun.db \"$1\""; sqlite3 -header -column sqlrun.db "$1"; }

"$sqlrun" new shop >/dev/null && cd shop
"$sqlrun" generate --start 2026-02-01 --days 14 --per-day 50 --seed 7 >/dev/null
"$sqlrun" apply --interval 2026-02-01..2026-02-14 >/dev/null 2>&1
run seal --dry-run --interval 2026-02-01..2026-02-07 --reason "weekly report W06" --by finance
run seal --interval 2026-02-01..2026-02-07 --reason "weekly report W06" --by finance
printf 'order_id,order_date,amount\nlate-voucher,2026-02-03,350000\n' > voucher.csv
say 'cat voucher.csv'
cat voucher.csv
run load orders voucher.csv 2>&1
run apply --interval 2026-02-01..2026-02-07 --by ops 2>&1
run corrections --since 1
run seal --reissue --interval 2026-02-01..2026-02-07 --reason "restated W06" --by finance
sql "SELECT ds, version, action, revenue, sealed_by, reason FROM daily_revenue_sent_history WHERE ds = '2026-02-03'"
run corrections --since 2
run seal --interval 2026-02-08..2026-02-14 --reason "weekly report W07" --by finance
run unseal --interval 2026-02-08..2026-02-14 --reason "W07 went out by mistake: not final" --by finance
run status --interval 2026-02-01..2026-02-14
run seals
