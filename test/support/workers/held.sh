#!/bin/sh
# A worker that outlives the host that started it (test/runtimes-adopt.test.ts): it commits a
# first half, says so, waits for the file $1/go-<issue> (the test makes it once another host has
# adopted this worker), then commits the rest. $1 is a directory the test made; a sandboxed
# worker sees it through sandbox.allow_read.
cat > /dev/null
n=$AFK_ISSUE
echo "first half of $n, attempt $AFK_ATTEMPT"
echo "first half for $n" > "first-$n.txt"
git add "first-$n.txt" && git commit -qm "first half of #$n"
echo "waiting for go-$n"
while [ ! -e "$1/go-$n" ]; do sleep 0.2; done
echo "released: issue $n goes on"
echo "work for $n" > "work-$n.txt"
git add "work-$n.txt" && git commit -qm "work for #$n"
