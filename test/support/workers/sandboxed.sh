#!/bin/sh
# A worker under the sandbox runtime that tries what a prompt-injected agent would, writes what
# it got into sandbox-report-<issue>.txt, then does its issue's work and commits both with a
# plain `git add -A`. Arguments (test-made paths, never issue text):
#   $1 a credential file planted in the host's HOME   $2 a directory outside every worktree
#   $3 a loopback port nobody allowed                  $4 the fleet's state dir
#   $5 the work repository                             $6... every issue's branch
cat > /dev/null
cred=$1 outside=$2 port=$3 state=$4 workrepo=$5
shift 5
n=$AFK_ISSUE
report="sandbox-report-$n.txt"
{
  if cat "$cred" >/dev/null 2>&1; then echo "credential: read"; else echo "credential: denied"; fi
  if (echo pwned > "$outside/pwned-$n") 2>/dev/null; then echo "outside: written"; else echo "outside: denied"; fi
  echo "state files: $(find "$state" -type f 2>/dev/null | grep -v -e "/issue-$n/" -e "/issue-$n.sandbox/" -e "/objects/" | wc -l)"
  echo "sibling worktrees: $(ls -A "$AFK_WORKTREE/.." 2>/dev/null | grep -v -x "$(basename "$AFK_WORKTREE")" | wc -l)"
  moved=0
  for branch in "$@"; do
    [ "$branch" = "$AFK_BRANCH" ] && continue
    git update-ref "refs/heads/$branch" HEAD 2>/dev/null
    git --git-dir="$workrepo" update-ref "refs/heads/$branch" HEAD 2>/dev/null && moved=$((moved + 1))
  done
  echo "work repository refs moved: $moved"
  node -e '
    const net = require("node:net");
    const port = Number(process.argv[1]);
    const say = (what, text) => console.log(`${what}: ${text}`);
    const direct = net.connect(port, "127.0.0.1");
    direct.on("connect", () => { say("direct", "connected"); direct.destroy(); });
    direct.on("error", (e) => say("direct", e.code));
    for (const [what, target] of [["proxied", `127.0.0.1:${port}`], ["proxied name", "example.com:443"]]) {
      const proxy = net.connect(3128, "127.0.0.1", () => proxy.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
      proxy.once("data", (d) => { say(what, String(d).split("\r\n")[0]); proxy.destroy(); });
      proxy.on("error", (e) => say(what, e.code));
    }
  ' "$port"
} > "$report" 2>&1
echo "work for $n" > "work-$n.txt"
git add -A && git commit -qm "work for #$n"
