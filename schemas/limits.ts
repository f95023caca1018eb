// The limits of one tool call, held before its schema parses it (in the MCP server, in the dry
// run and in the daemon alike), so that an input too large to be useful is refused cheaply,
// naming the limit, instead of passing a dry run and then failing for another reason further on
// (a message to the daemon over its cap). Each bounded field has its own limit in the schema
// (selectors: 20; issue numbers per selector: MAX_SELECTOR_ISSUES); these bound the whole call.

/** Issue numbers one selector may list (the config's selectors and the tools' alike). */
export const MAX_SELECTOR_ISSUES = 1_000;
/** The bytes of one call's arguments as JSON: 20 selectors of 1,000 issue numbers fit four times over. */
export const MAX_CALL_BYTES = 256 * 1024;
/** Object keys in one call's arguments, at every depth (a whole config is a few hundred). */
export const MAX_CALL_KEYS = 2_000;
/** How deep one call's arguments may nest (the deepest config key is 4 levels down). */
export const MAX_CALL_DEPTH = 32;

/** Why `args` is over a limit of one call, naming the limit and the fix; null when within every limit. */
export function callLimitProblem(args: unknown): string | null {
  let keys = 0;
  let depth = 0;
  const stack: [unknown, number][] = [[args, 1]];
  while (stack.length > 0) {
    const [node, level] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    depth = Math.max(depth, level);
    if (depth > MAX_CALL_DEPTH) return `the arguments nest more than ${MAX_CALL_DEPTH} levels deep, the limit of one call: no argument is nested that deep`;
    const children = Array.isArray(node) ? node : Object.values(node);
    if (!Array.isArray(node)) keys += Object.keys(node).length;
    if (keys > MAX_CALL_KEYS) return `the arguments hold more than ${MAX_CALL_KEYS} keys, the limit of one call: send only the keys you mean to set`;
    for (const child of children) stack.push([child, level + 1]);
  }
  const bytes = Buffer.byteLength(JSON.stringify(args ?? {}), "utf8");
  if (bytes > MAX_CALL_BYTES) {
    return `the arguments are ${bytes} bytes of JSON, over the limit of ${MAX_CALL_BYTES} bytes (256 KiB) for one call: send fewer or shorter values (a selector lists at most ${MAX_SELECTOR_ISSUES} issue numbers; a label or a milestone picks more)`;
  }
  return null;
}
