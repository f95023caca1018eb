// `afk-mcp config`: validate a fleet config and print its canonical form (every key present,
// defaults filled), the JSON that the rest of the fleet runs on.
import { fleetConfigJsonSchema } from "../../schemas/config.js";
import { CONFIG_FILE_PATH, loadConfigFile, loadRepoConfig, mergeConfig, overridesFromAssignments } from "../host/config-load.js";
import { UsageError } from "../gh/errors.js";
import type { Command } from "./command.js";
import { printJson } from "./print.js";

const usage = `Usage: afk-mcp config [--file <path>] [--set <key.path>=<value>]... [--defaults]
       afk-mcp config --schema

Validate the fleet config and print its canonical JSON: every key present, defaults
filled in. Without --file it reads ./${CONFIG_FILE_PATH} when that exists (the config a
repository commits), else it starts from the defaults.

Options:
  -f, --file <path>         Read this config file instead of ./${CONFIG_FILE_PATH}.
  -s, --set <key.path=value>
                            Override one key; repeatable, later wins. The value is read
                            by the type the schema has at the key: a number, true/false,
                            null or a JSON list where the key takes one, else the text
                            as is (gate.local_command=true is the command "true").
                            Lists replace the file's list.
      --defaults            Ignore ./${CONFIG_FILE_PATH} and start from the defaults.
      --schema              Print the JSON Schema of the config file instead (the one
                            editors use through "$schema").
  -h, --help                Show this help.

Exit status: 0 when the config is valid; 2 with a one-line reason that names the key
when it is not.

Examples:
  afk-mcp config
  afk-mcp config --set concurrency=5 --set gate.ci=local --set 'gate.local_command=npm test'
  afk-mcp config --file ci/afk.json --set 'selectors=[{"tags":["api"]},{}]'
  afk-mcp config --defaults > ${CONFIG_FILE_PATH}`;

export const configCommand: Command = {
  name: "config",
  summary: `validate the fleet config (./${CONFIG_FILE_PATH}) and print it with every default filled in`,
  usage,
  options: {
    file: { type: "string", short: "f" },
    set: { type: "string", short: "s", multiple: true },
    defaults: { type: "boolean" },
    schema: { type: "boolean" },
  },
  async run(values) {
    const file = typeof values.file === "string" ? values.file : undefined;
    const sets = Array.isArray(values.set) ? values.set.filter((v): v is string => typeof v === "string") : [];
    if (values.schema === true) {
      if (file !== undefined || sets.length > 0 || values.defaults === true) {
        throw new UsageError("--schema prints the schema of every config; it takes no --file, --set or --defaults");
      }
      printJson(fleetConfigJsonSchema());
      return 0;
    }
    if (file !== undefined && values.defaults === true) {
      throw new UsageError("--file and --defaults contradict each other: pick one");
    }
    const overrides = overridesFromAssignments(sets);
    const config =
      file !== undefined
        ? await loadConfigFile(file, overrides, "--set")
        : values.defaults === true
          ? mergeConfig({}, overrides, { overrides: "--set" })
          : await loadRepoConfig(process.cwd(), overrides, "--set");
    printJson(config);
    return 0;
  },
};
