// Every CLI subcommand, in the order `--help` lists them.
import type { Command } from "./command.js";
import { configCommand } from "./config.js";
import { forgeCommand } from "./forge.js";
import { planCommand } from "./plan.js";
import { serveCommand } from "./serve.js";
import { runCommand } from "./run.js";
import { demoCommand } from "./demo.js";
import { daemonCommand } from "./daemon.js";
import { doctorCommand } from "./doctor.js";
import { dashboardCommand } from "./dashboard.js";
import { logsCommand } from "./logs.js";
import { ledgerCommand, reportCommand } from "./ledger.js";
import { resetCommand, resizeCommand, stopCommand } from "./project.js";
import { takeoverCommand } from "./takeover.js";
import { workerCommand } from "./worker.js";
import { actionsCommand } from "./actions.js";

export const commands: Command[] = [
  serveCommand,
  demoCommand,
  runCommand,
  stopCommand,
  resetCommand,
  resizeCommand,
  planCommand,
  logsCommand,
  ledgerCommand,
  reportCommand,
  dashboardCommand,
  takeoverCommand,
  daemonCommand,
  configCommand,
  doctorCommand,
  forgeCommand,
  actionsCommand,
  workerCommand,
];
