// A registration's ordered selectors as one bounded line, for the status tool and `afk-mcp daemon
// status` alike: up to 20 selectors of up to thousands of issue numbers each must not become a
// screenful, so long lists are summarized with counts of what was left out.

/** Selectors shown in full; the rest are counted. */
const MAX_SELECTORS = 5;
/** Values of one facet shown (issue numbers, tags); the rest are counted. */
const MAX_VALUES = 8;
/** A facet's single value (a label, a milestone title) longer than this is cut. */
const MAX_VALUE_CHARS = 60;

/** Ordered selectors as "[label ready-for-agent] then [tags api, user bob]": only the facets set. */
export function selectorText(selectors: readonly Record<string, unknown>[]): string {
  if (selectors.length === 0) return "none";
  const shown = selectors.slice(0, MAX_SELECTORS).map((sel) => `[${Object.entries(sel).filter(isSet).map(facet).join(", ") || "any"}]`);
  const more = selectors.length - shown.length;
  return shown.join(" then ") + (more > 0 ? ` then ${more} more selector(s) (${selectors.length} in all)` : "");
}

function isSet([key, value]: [string, unknown]): boolean {
  // blockers: true is the default (an issues list pulls in its open blockers): said only when off.
  if (key === "blockers") return value === false;
  return value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0);
}

function facet([key, value]: [string, unknown]): string {
  if (key === "blockers") return "without their blockers";
  if (!Array.isArray(value)) return `${key} ${cut(String(value))}`;
  const shown = value.slice(0, MAX_VALUES).map((v) => cut(String(v)));
  const more = value.length - shown.length;
  return `${key} ${shown.join(",")}${more > 0 ? ` +${more} more (${value.length})` : ""}`;
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > MAX_VALUE_CHARS ? `${line.slice(0, MAX_VALUE_CHARS - 1)}…` : line;
}
