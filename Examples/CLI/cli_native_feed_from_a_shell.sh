#!/bin/sh
# CLI Native Feed prefetch, borrow and return from a shell
#
# Shows: the operator CLI as a scripting tool (a smoke test after a deploy, a cron check):
# prefetch a pool, borrow for a slot with a wait, borrow the slot again (the same lease:
# REUSED), return it shown, read the pool's counters. `--json` gives each answer as the proto3
# JSON mapping of its response message (BORROW_OUTCOME_LEASED; 64-bit numbers as strings);
# the exit status is 0 on success, 1 on an error status, 3 when the daemon is unreachable.
# Look at: `--json` and jq; `--slot`; the exit status checks.
# Run: Examples/run.sh cli-native-feed-prefetch-borrow-and-return-from-a-shell
#      or: ADLOADER_ENDPOINT=127.0.0.1:7411 sh Examples/CLI/cli_native_feed_from_a_shell.sh
#      (adloader on PATH: export PATH=$PWD/.build/release:$PATH after `make run` or `make release`,
#      $PWD/.build/debug after `make examples`; jq installed)
set -eu
unit="shell-feed-$$-$(date +%s)"   # fresh per run
fail() { echo "FAILED: $*" >&2; exit 1; }

echo "    prefetch: $(adloader prefetch "$unit" --loader feed)"
first=$(adloader --json borrow "$unit" --loader feed --slot "shell/position-1" --wait 1000)
lease=$(echo "$first" | jq -r .lease.leaseId)
echo "    borrowed: $(echo "$first" | jq -r '.outcome + " lease " + .lease.leaseId + ": " + .lease.ad.headline')"
[ "$(echo "$first" | jq -r .outcome)" = BORROW_OUTCOME_LEASED ] || fail "expected LEASED: $first"

again=$(adloader --json borrow "$unit" --loader feed --slot "shell/position-1")
[ "$(echo "$again" | jq -r .outcome)" = BORROW_OUTCOME_REUSED ] || fail "expected REUSED: $again"
[ "$(echo "$again" | jq -r .lease.leaseId)" = "$lease" ] || fail "expected the same lease"

returned=$(adloader --json return "$lease" --shown)
echo "    returned: $(echo "$returned" | jq -c .)"
[ "$(echo "$returned" | jq -r .outcome)" = RETURN_OUTCOME_CONSUMED ] || fail "expected CONSUMED: $returned"

# Returning it again is an error status: exit 1, and the message on stderr.
status=0
adloader return "$lease" 2>/dev/null || status=$?
[ "$status" = 1 ] || fail "a second return must exit 1, got $status"

stats=$(adloader --json stats --loader feed --ad-unit "$unit")
echo "    stats: $(echo "$stats" | jq -c '.pools[0] | {borrowHits, consumed, leased}')"
[ "$(echo "$stats" | jq -r '.pools[0].consumed')" = 1 ] || fail "expected 1 consumed: $stats"
