// When a registration lapses, in words shared by status's text and `afk-mcp daemon status`. A
// draining one (lapsed, stopped, or deregistered) is no longer renewed: it has no deadline left
// to state, whatever its row's renew_by holds.
export function renewalText(row: { state: string; renew_by: string | null }): string {
  if (row.state === "draining") return "- (draining: no longer renewed)";
  return row.renew_by ?? "never";
}
