// Just enough of git's pkt-line format to read the commands at the start of a push
// (`<old> <new> <ref>` lines, up to the first flush) and to answer a refused push with a
// report-status the git client prints as "! [remote rejected] main -> main (reason)".

export interface RefCommand {
  old: string;
  new: string;
  ref: string;
}

export interface PushCommands {
  commands: RefCommand[];
  capabilities: string[];
  /** Bytes of the body holding the command list (including its flush-pkt). */
  length: number;
}

/**
 * Parses the command list of a receive-pack request body. Returns null while more bytes
 * are needed, and throws on a body that is not pkt-lines.
 */
export function parsePushCommands(buf: Buffer): PushCommands | null {
  const commands: RefCommand[] = [];
  let capabilities: string[] = [];
  let at = 0;
  for (;;) {
    if (buf.length < at + 4) return null;
    const size = Number.parseInt(buf.subarray(at, at + 4).toString("latin1"), 16);
    if (Number.isNaN(size)) throw new Error("malformed pkt-line in push request");
    if (size === 0) return { commands, capabilities, length: at + 4 };
    if (size < 4) throw new Error("malformed pkt-line in push request");
    if (buf.length < at + size) return null;
    let line = buf.subarray(at + 4, at + size).toString("utf8");
    at += size;
    const nul = line.indexOf("\0");
    if (nul >= 0) {
      capabilities = line
        .slice(nul + 1)
        .trim()
        .split(" ")
        .filter(Boolean);
      line = line.slice(0, nul);
    }
    const [oldSha, newSha, ref] = line.trim().split(" ");
    // A shallow-info line or a push certificate is not a ref update: stop looking.
    if (!oldSha || !newSha || !ref || !/^[0-9a-f]{40}$/.test(oldSha)) return { commands, capabilities, length: at };
    commands.push({ old: oldSha, new: newSha, ref });
  }
}

function pkt(payload: Buffer | string): Buffer {
  const data = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  return Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, "0"), "latin1"), data]);
}

const FLUSH = Buffer.from("0000", "latin1");

/** The receive-pack result refusing every command, with `message` shown as "remote: ..." lines. */
export function refusalReport(cmds: PushCommands, reasons: Map<string, string>, message: string): Buffer {
  const report = Buffer.concat([
    pkt("unpack ok\n"),
    ...cmds.commands.map((c) => pkt(`ng ${c.ref} ${reasons.get(c.ref) ?? "pre-receive hook declined"}\n`)),
    FLUSH,
  ]);
  const sideband = cmds.capabilities.includes("side-band-64k") || cmds.capabilities.includes("side-band");
  if (!sideband) return report;
  const max = cmds.capabilities.includes("side-band-64k") ? 65515 : 995;
  const chunks: Buffer[] = [];
  const text = Buffer.from(message.endsWith("\n") ? message : `${message}\n`, "utf8");
  for (let i = 0; i < text.length; i += max) chunks.push(pkt(Buffer.concat([Buffer.from([2]), text.subarray(i, i + max)])));
  for (let i = 0; i < report.length; i += max) chunks.push(pkt(Buffer.concat([Buffer.from([1]), report.subarray(i, i + max)])));
  chunks.push(FLUSH);
  return Buffer.concat(chunks);
}
