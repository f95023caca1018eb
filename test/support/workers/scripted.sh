#!/bin/sh
# A scripted stand-in for a coding agent, run by the fleet exactly as a real one is: the
# project's worker_command (`sh .../scripted.sh`) in the issue's worktree, the brief on stdin.
# What it does for an issue is read from the plan directory named by AFK_USER_PLAN (a variable
# the default env_passthrough hands on): the file `<issue>.<attempt>`, else `<issue>`, holds one
# line, "<behaviour> [argument]", optionally prefixed by "await " (wait for the test's go-ahead).
# It records what it saw in the plan directory for the test: its pid, its stdin (the brief), the
# names of its environment. Nothing it reads is ever evaluated: issue text is data.
set -u
plan=${AFK_USER_PLAN:?AFK_USER_PLAN must name the plan directory}
n=${AFK_ISSUE:?}
a=${AFK_ATTEMPT:?}
spec=$(cat "$plan/$n.$a" 2>/dev/null || cat "$plan/$n" 2>/dev/null || echo commit)
behaviour=${spec%% *}
arg=${spec#"$behaviour"}
arg=${arg# }

echo $$ >"$plan/$n.$a.pid"
cat >"$plan/$n.$a.brief"
env | sed 's/=.*//' | sort >"$plan/$n.$a.env"
if [ "${GITHUB_TOKEN+set}" = set ] || [ "${GH_TOKEN+set}" = set ]; then echo leaked >"$plan/$n.$a.token"; fi
if [ "$behaviour" = await ]; then
  # "await <behaviour> [argument]": quietly wait for the test's go-ahead, <issue>.<attempt>.go.
  while [ ! -e "$plan/$n.$a.go" ]; do sleep 0.1; done
  behaviour=${arg%% *}
  arg=${arg#"$behaviour"}
  arg=${arg# }
fi

commit() {
  printf '%s\n' "$2" >"$1"
  git add -- "$1" &&
    git -c user.name=scripted-worker -c user.email=worker@example.com -c commit.gpgsign=false commit -q -m "$3"
}

verdict() {
  printf '{"verdict": "%s", "reason": "%s"%s}\n' "$1" "$2" "$3" >"$AFK_VERDICT_FILE"
}

case $behaviour in
  commit)
    echo "working on #$n (attempt $a)"
    commit "issue-$n.txt" "done $n" "fix #$n"
    echo "committed"
    ;;
  shared)
    # "shared <file>": edit a file other issues edit too (a conflict waiting to happen).
    commit "$arg" "#$n was here" "fix #$n in $arg"
    ;;
  dirty)
    # Commits a first step, then leaves a modified and two untracked files (one in a new
    # directory) uncommitted and gives up: what escalation must not lose.
    commit "issue-$n.txt" "step 1 of $n" "step 1 of #$n"
    printf 'step 2 of %s, uncommitted\n' "$n" >"issue-$n.txt"
    mkdir -p notes && printf 'draft for %s\n' "$n" >notes/draft.txt
    printf 'scratch\n' >"scratch-$n.txt"
    verdict giving-up "Ran out of ideas halfway." ""
    ;;
  satisfied)
    echo "nothing to do for #$n"
    verdict already-satisfied "The behaviour already exists." ""
    ;;
  giving-up)
    echo "giving up on #$n"
    verdict giving-up "Tried twice; attempt $a could not make it work." ""
    ;;
  blocked)
    echo "#$n needs #$arg first"
    verdict blocked "Needs #$arg, which is still open." ", \"blocked_by\": [$arg]"
    ;;
  hang)
    # Says one thing, then nothing, forever: a hung agent. The sleep is a child in the group.
    echo "thinking about #$n"
    sleep 600 &
    echo $! >"$plan/$n.$a.child"
    wait
    ;;
  busy)
    # Quiet, but a child keeps half a core busy (a long compile or test run) until the test
    # creates <issue>.<attempt>.go in the plan directory; then it commits.
    node -e "
      const fs = require('fs');
      const burn = () => { const end = Date.now() + 50; while (Date.now() < end) {} if (!fs.existsSync(process.argv[1])) setTimeout(burn, 50); };
      burn();" "$plan/$n.$a.go"
    # Says so as the build ends, as an agent does: between the busy child's end and the commit a
    # loaded machine can take seconds, and a worker quiet past the kill threshold with no busy
    # child is killed (CI at load 6 saw 'kill after 21s quiet' there).
    echo "build done for #$n; committing"
    commit "issue-$n.txt" "built $n" "fix #$n after a long build"
    ;;
  die)
    echo "scripted worker: cannot start for #$n (simulated)" >&2
    exit 1
    ;;
  print)
    # "print <file> [exit code]": what a real agent CLI prints when it cannot work (the test
    # writes the file into the plan directory; see test/support/runtime-texts.ts), then exit.
    file=${arg%% *}
    code=${arg#"$file"}
    code=${code# }
    cat "$plan/$file"
    exit "${code:-1}"
    ;;
  loop)
    # "loop <file>": print it again and again, as an agent retrying without a network does.
    while :; do
      cat "$plan/$arg"
      sleep 0.2
    done
    ;;
  quota)
    echo "You've hit your usage limit. Try again in 5m."
    exit 1
    ;;
  two-step)
    # The first run commits step 1 and then hangs (it is killed with its host); a continued run
    # finds step 1 in its worktree, adds step 2 and exits.
    if git log --format=%s | grep -q "^step 1 of #$n\$"; then
      echo "continuing #$n from step 1"
      commit "step-2.txt" "two" "step 2 of #$n"
    else
      commit "step-1.txt" "one" "step 1 of #$n"
      touch "$plan/$n.step1"
      sleep 600 &
      wait
    fi
    ;;
  *)
    echo "scripted worker: unknown behaviour '$behaviour'" >&2
    exit 2
    ;;
esac
