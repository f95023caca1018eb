// Outside text made safe to show in markdown: control characters out, and a code fence no
// backtick run inside the text can close.

// C0 controls other than tab and newline, DEL, and lone carriage returns: terminal escapes and
// NULs have no business in a prompt and can confuse whatever displays the brief.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

export function clean(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(CONTROL, "");
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
