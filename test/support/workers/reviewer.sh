#!/bin/sh
# A scripted stand-in for a review-stage agent, started by the fleet exactly as a real one is:
# review.command (`sh .../reviewer.sh`) in the issue's worktree at the PR head, the review brief
# on stdin. Its behaviour for round k of an issue is read from the plan directory
# (AFK_USER_PLAN): `<issue>.review.<k>`, else `<issue>.review`, else "approve". One line:
# approve | fix | refute <findings> | hang | none. It records its brief as `<issue>.review.<k>.brief`.
set -u
plan=${AFK_USER_PLAN:?AFK_USER_PLAN must name the plan directory}
n=${AFK_ISSUE:?}
k=$(( $(cat "$plan/$n.reviews" 2>/dev/null || echo 0) + 1 ))
echo "$k" >"$plan/$n.reviews"
cat >"$plan/$n.review.$k.brief"
echo $$ >"$plan/$n.review.$k.pid"
spec=$(cat "$plan/$n.review.$k" 2>/dev/null || cat "$plan/$n.review" 2>/dev/null || echo approve)
behaviour=${spec%% *}
arg=${spec#"$behaviour"}
arg=${arg# }

verdict() {
  printf '{"verdict": "%s", "findings": "%s"}\n' "$1" "$2" >"$AFK_VERDICT_FILE"
}

echo "reviewing #$n (round $k)"
case $behaviour in
  approve) verdict approve "Looks right." ;;
  fix)
    printf 'reviewed %s\n' "$n" >"review-fix-$n.txt"
    git add -- "review-fix-$n.txt" &&
      git -c user.name=scripted-reviewer -c user.email=reviewer@example.com -c commit.gpgsign=false commit -q -m "review fix for #$n"
    verdict fix "Added the missing file."
    ;;
  refute) verdict refute "$arg" ;;
  hang)
    sleep 600 &
    echo $! >"$plan/$n.review.$k.child"
    wait
    ;;
  none) ;;
  *)
    echo "scripted reviewer: unknown behaviour '$behaviour'" >&2
    exit 2
    ;;
esac
