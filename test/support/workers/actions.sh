#!/bin/sh
# The engine of the `actions` runtime's tests, run by `afk-mcp worker` on the local forge's
# runner. $1 says what attempt 1 does (later attempts always do the work):
#   work     print, commit work-<issue>.txt, write a verdict-free exit 0
#   hostile  do the work, then push to a branch that is not the issue's (the run's token is in
#            the checkout's git config, as actions/checkout leaves it)
#   die      commit partial work, wait until the runner's beat pushed it, then kill the
#            `afk-mcp worker` process (a runner that dies mid-attempt)
#   slow     commit partial work, then sleep (the test cancels the run from outside)
#   hold     commit partial work, then wait for the file $2/go-<issue> (the test makes it once
#            the host that dispatched the run is dead and another has adopted it), then work
#   late     commit partial work, wait until it is on origin, then until origin's branch holds
#            something else (another run pushed onto it) or the file $2/go-<issue> exists,
#            then work and exit at once (its last push meets the foreign tip)
#   cross:V  wait until issue V's branch on origin holds V's partial work, push a commit of
#            its own (hostile-<issue>.txt) onto it with the job's token, then do its own work
#   after:V  as cross:V, but first wait for the file $2/go-<issue> (the test makes it once V's
#            run has ended and its PR waits), then for V's finished work on V's branch
cat > /dev/null
mode=$1
hold=$2
n=$AFK_ISSUE
[ "$AFK_ATTEMPT" -gt 1 ] && mode=work
victim=
wants=partial
case $mode in
cross:*) victim=${mode#cross:}; mode=cross ;;
after:*)
  victim=${mode#after:}
  mode=cross
  wants=work
  while [ ! -e "$hold/go-$n" ]; do sleep 0.2; done
  echo "released: issue $n pushes onto #$victim's branch"
  ;;
esac
echo "engine on the runner: issue $n attempt $AFK_ATTEMPT mode $mode"
echo "token in my environment: ${GITHUB_TOKEN:-none}"
case $mode in
die|slow|hold|late)
  echo "partial for $n" > "partial-$n.txt"
  git add "partial-$n.txt" && git commit -qm "partial work for #$n"
  head=$(git rev-parse HEAD)
  i=0
  while [ $i -lt 600 ]; do
    [ "$(git ls-remote origin "refs/heads/$AFK_BRANCH" | cut -f1)" = "$head" ] && break
    sleep 0.2
    i=$((i + 1))
  done
  echo "partial work is on origin"
  case $mode in
  slow) sleep 300; exit 0 ;;
  hold)
    while [ ! -e "$hold/go-$n" ]; do sleep 0.2; done
    echo "released: issue $n goes on"
    ;;
  late)
    while [ "$(git ls-remote origin "refs/heads/$AFK_BRANCH" | cut -f1)" = "$head" ] && [ ! -e "$hold/go-$n" ]; do sleep 0.2; done
    echo "origin's branch moved (or released): issue $n finishes now"
    ;;
  die)
    pid=$$
    while [ "$pid" -gt 1 ]; do
      pid=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$pid/status")
      if tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "bin.js worker"; then kill -9 "$pid"; break; fi
    done
    exit 0
    ;;
  esac
  ;;
cross)
  i=0
  ref=
  while [ $i -lt 900 ]; do
    ref=$(git ls-remote origin "refs/heads/afk/$victim-*" | cut -f2 | head -n 1)
    if [ -n "$ref" ] && git fetch -q origin "$ref" && git cat-file -e "FETCH_HEAD:$wants-$victim.txt" 2>/dev/null; then break; fi
    ref=
    sleep 0.2
    i=$((i + 1))
  done
  [ -n "$ref" ] || { echo "no branch of #$victim with its $wants work"; exit 1; }
  tip=$(git rev-parse FETCH_HEAD)
  blob=$(echo "hostile from $n" | git hash-object -w --stdin)
  tree=$( (git ls-tree "$tip"; printf '100644 blob %s\thostile-%s.txt\n' "$blob" "$n") | git mktree)
  commit=$(echo "hostile commit from #$n" | git commit-tree "$tree" -p "$tip")
  git push -q origin "$commit:$ref" && echo "pushed $commit into $ref"
  ;;
esac
echo "work for $n" > "work-$n.txt"
git add "work-$n.txt" && git commit -qm "work for #$n"
if [ "$mode" = hostile ]; then
  git push -q origin "HEAD:refs/heads/hijack-$n" && echo "pushed hijack-$n"
fi
echo "done with $n"
