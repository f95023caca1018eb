// Outside text made safe to show in markdown: control characters out, and a code fence no
// backtick run inside the text can close.

import { CONTROL_CHARACTERS } from "./text.js";

/** Control characters out (text.ts), carriage returns made newlines: they can confuse whatever displays the text. */
export function clean(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(CONTROL_CHARACTERS, "");
}

/** A code fence longer than any backtick run inside `text`, so the text cannot close it. */
function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return "`".repeat(Math.max(3, longest + 1));
}

export function fenced(text: string, info = ""): string {
  const fence = fenceFor(text);
  return `${fence}${info}\n${text}${text.endsWith("\n") ? "" : "\n"}${fence}`;
}

export function code(text: string): string {
  // Inline code for paths and names we generated; a backtick would break it, so double up.
  return text.includes("`") ? `\`\` ${text} \`\`` : `\`${text}\``;
}
