#!/bin/sh
# The suite with two CPU burners beside it (issue 9, item 7): what a user's machine looks like
# while twenty agents compile. Passing here is the bar for "green": tests wait for events, not
# for time. Usage: npm run test:loaded [-- <test files>] (default: every file, as `npm test` runs them).
# BURNERS=n changes the number of burners.
set -eu
cd "$(dirname "$0")/.."
npm run build
npm run lint
burners=${BURNERS:-2}
pids=""
stop_burners() {
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
}
trap stop_burners EXIT INT TERM
i=0
while [ "$i" -lt "$burners" ]; do
  # A busy loop in its own process: one core's worth of load each, ended by the trap.
  node -e 'for (;;) {}' &
  pids="$pids $!"
  i=$((i + 1))
done
echo "test:loaded: $burners CPU burner(s) running (pids$pids); load before the suite: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)" >&2
if [ "$#" -eq 0 ]; then set -- $(node scripts/test-files.mjs all); fi
status=0
node scripts/test-run.mjs node --test --test-concurrency=2 "$@" || status=$?
echo "test:loaded: exit $status with $burners burner(s); load after the suite: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)" >&2
exit "$status"
