// What an operator should do about a runtime failure the fleet recognised (a login, a refusal, a
// lost network), and the last lines a worker printed: the words that explain a fast death.
import { stripAnsi, type QuotaDetection, type AgentRuntime } from "./quota.js";
import { oneLine } from "../text/text.js";

/** Per runtime: how its login is renewed, and the variable that carries a key instead. */
const LOGIN: Readonly<Record<AgentRuntime, string>> = {
  claude: "run `claude` once as the user the fleet runs as and sign in with /login (or name ANTHROPIC_API_KEY in worker.env_passthrough)",
  codex: "run `codex login` as the user the fleet runs as (or name OPENAI_API_KEY in worker.env_passthrough)",
  gemini: "run `gemini` once and choose an auth method, or name GEMINI_API_KEY in worker.env_passthrough",
  cursor: "run `cursor-agent login`, or name CURSOR_API_KEY in worker.env_passthrough (print mode may ignore the stored login)",
  aider: "give aider the provider's key: name it (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) in worker.env_passthrough",
  unknown: "sign the agent in as the user the fleet runs as, or name its API key variable in worker.env_passthrough",
};

/** One sentence: what went wrong (with the runtime's own words) and how to fix it. */
export function pauseReason(detection: QuotaDetection, until: Date | null): string {
  const quoted = oneLine(detection.text, 300);
  const resume = until ? `births paused until ${until.toISOString()}` : "births paused until project_reset";
  switch (detection.kind) {
    case "auth":
      return `the worker's login expired, is missing or was refused (${quoted}): ${LOGIN[detection.runtime]}; then project_reset`;
    case "refusal":
      return (
        `the agent refused to start (${quoted}): Claude Code will not bypass permissions as root — run the fleet as a normal user, ` +
        "or, inside a container or VM that is itself the sandbox, set IS_SANDBOX=1 in the worker command; then project_reset"
      );
    case "network":
      return `the agent cannot reach its API and keeps retrying (${quoted}): check this machine's network, DNS and proxy; ${resume}, or project_reset once it is back`;
    case "quota":
      return `usage limit reached (${quoted})${until ? `: births paused until ${until.toISOString()}` : ""}`;
  }
}

/** One line a worker printed, and where. */
export interface SaidLine {
  stream: "stdout" | "stderr";
  line: string;
}

/**
 * The newest `n` lines, stderr first: the last `n` of stderr (where a shell says "not found"
 * and a program its error), then, to fill up, the last of stdout; each in the order printed.
 */
export function stderrFirst(lines: readonly SaidLine[], n: number): string[] {
  if (n <= 0) return [];
  const errors = lines.filter((l) => l.stream === "stderr").slice(-n);
  const rest = n - errors.length;
  const out = rest > 0 ? lines.filter((l) => l.stream !== "stderr").slice(-rest) : [];
  return [...errors, ...out].map((l) => l.line);
}

/** The last lines a worker printed, bounded in count and width, without terminal escapes. */
export class OutputTail {
  private readonly lines: SaidLine[] = [];

  constructor(
    private readonly keep = 12,
    private readonly width = 240,
  ) {}

  push(line: string, stream: SaidLine["stream"] = "stdout"): void {
    const clean = stripAnsi(line.length > this.width * 4 ? line.slice(0, this.width * 4) : line).replace(/\s+$/, "");
    if (clean.trim() === "") return;
    this.lines.push({ stream, line: clean.length > this.width ? `${clean.slice(0, this.width)}…` : clean });
    if (this.lines.length > this.keep) this.lines.shift();
  }

  /** The kept lines with their streams, in the order printed. */
  said(): SaidLine[] {
    return this.lines.map((l) => ({ ...l }));
  }

  /** The last `n` lines, stderr first (stderrFirst). */
  last(n = this.keep): string[] {
    return stderrFirst(this.lines, n);
  }
}
