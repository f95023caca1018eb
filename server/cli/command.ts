// The shape of one CLI subcommand. `server/cli.ts` parses argv with node's parseArgs
// against `options`, prints `usage` for --help, and turns a UsageError into a one-line
// reason and exit code 2.
import type { ParseArgsConfig } from "node:util";

export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

export type ParsedValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The full --help text (synopsis, options, examples). */
  usage: string;
  options: OptionSpec;
  /** Whether positional arguments are accepted. */
  positionals?: boolean;
  /** Returns the process exit code. Throw UsageError for bad input. */
  run(values: ParsedValues, positionals: string[]): Promise<number>;
}
