// The worker environment: minimal base, facts, allowlist, denylist, fixed knobs. One row per case.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FIXED_ENV, matchesEnvPattern, workerEnv, type WorkerFacts } from "../server/agent/env.js";

const facts: WorkerFacts = {
  AFK_ISSUE: 12,
  AFK_BRIEF: "/state/briefs/brief-12-1.md",
  AFK_BRANCH: "afk/12-fix",
  AFK_BASE: "main",
  AFK_WORKTREE: "/state/worktrees/12",
  AFK_REPO: "o/r",
  AFK_ATTEMPT: 1,
  AFK_VERDICT_FILE: "/state/verdicts/12.json",
};

const host = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/u",
  USER: "u",
  LOGNAME: "u",
  SHELL: "/bin/bash",
  LANG: "en_US.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_TIME: "de_DE.UTF-8",
  TMPDIR: "/tmp/u",
  TERM: "xterm-256color",
  XDG_CONFIG_HOME: "/home/u/.cfg",
  GITHUB_TOKEN: "ghp_aaaaaaaaaaaaaaaaaaaaaaaa",
  GH_TOKEN: "gho_bbbbbbbbbbbbbbbbbbbbbbbb",
  ANTHROPIC_API_KEY: "sk-ant-cccccccccccccccccccc",
  OPENAI_API_KEY: "sk-dddddddddddddddddddd",
  AWS_SECRET_ACCESS_KEY: "eeee",
  AFK_USER_MODE: "fast",
  AFK_USER_SECRET: "nope",
  AFK_STATE_DIR: "/state",
  AFK_BRIEF: "/evil/brief.md",
  CI: "true",
  IS_SANDBOX: "1",
  SSH_AUTH_SOCK: "/tmp/ssh-agent",
  UNDEFINED_ONE: undefined,
};

interface Row {
  name: string;
  passthrough: string[];
  deny: string[];
  present?: Record<string, string>;
  absent?: string[];
}

const rows: Row[] = [
  {
    name: "defaults: minimal base, no tokens, no CI, no agent socket",
    passthrough: ["AFK_USER_*"],
    deny: ["AFK_STATE_DIR", "AFK_BRIEF"],
    present: {
      PATH: "/usr/bin:/bin",
      HOME: "/home/u",
      USER: "u",
      LOGNAME: "u",
      SHELL: "/bin/bash",
      LANG: "en_US.UTF-8",
      LC_ALL: "C.UTF-8",
      LC_TIME: "de_DE.UTF-8",
      TMPDIR: "/tmp/u",
      XDG_CONFIG_HOME: "/home/u/.cfg",
      AFK_USER_MODE: "fast",
    },
    absent: [
      "GITHUB_TOKEN",
      "GH_TOKEN",
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "AWS_SECRET_ACCESS_KEY",
      "AFK_STATE_DIR",
      "CI",
      "IS_SANDBOX",
      "SSH_AUTH_SOCK",
      "UNDEFINED_ONE",
    ],
  },
  {
    name: "a token passes only when named",
    passthrough: ["ANTHROPIC_API_KEY"],
    deny: [],
    present: { ANTHROPIC_API_KEY: "sk-ant-cccccccccccccccccccc" },
    absent: ["GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY"],
  },
  {
    name: "GITHUB_TOKEN named explicitly passes",
    passthrough: ["GITHUB_TOKEN", "IS_SANDBOX", "CI"],
    deny: [],
    present: { GITHUB_TOKEN: "ghp_aaaaaaaaaaaaaaaaaaaaaaaa", IS_SANDBOX: "1", CI: "true" },
    absent: ["GH_TOKEN"],
  },
  {
    name: "deny wins over passthrough, exact and prefix",
    passthrough: ["AFK_USER_*", "AFK_STATE_DIR", "OPENAI_API_KEY"],
    deny: ["AFK_USER_SECRET", "AFK_STATE_*", "OPENAI_*"],
    present: { AFK_USER_MODE: "fast" },
    absent: ["AFK_USER_SECRET", "AFK_STATE_DIR", "OPENAI_API_KEY"],
  },
  {
    name: "deny applies to the base set too",
    passthrough: [],
    deny: ["TMPDIR", "LC_*"],
    present: { PATH: "/usr/bin:/bin" },
    absent: ["TMPDIR", "LC_ALL", "LC_TIME"],
  },
  {
    name: "a bare * matches nothing",
    passthrough: ["*"],
    deny: [],
    absent: ["GITHUB_TOKEN", "ANTHROPIC_API_KEY", "AFK_USER_MODE"],
  },
  {
    name: "fleet knobs cannot be overridden by passthrough",
    passthrough: ["TERM", "AFK_BRIEF"],
    deny: [],
    present: { TERM: "dumb", AFK_BRIEF: "/state/briefs/brief-12-1.md", GIT_TERMINAL_PROMPT: "0" },
  },
];

describe("workerEnv", () => {
  for (const row of rows) {
    it(row.name, () => {
      const env = workerEnv({ base: host, passthrough: row.passthrough, deny: row.deny, facts });
      for (const [name, value] of Object.entries(row.present ?? {})) assert.equal(env[name], value, name);
      for (const name of row.absent ?? []) assert.equal(name in env, false, `${name} must be absent`);
      // Always: the facts (stringified) and the fixed knobs.
      assert.equal(env.AFK_ISSUE, "12");
      assert.equal(env.AFK_ATTEMPT, "1");
      assert.equal(env.AFK_REPO, "o/r");
      assert.equal(env.AFK_VERDICT_FILE, "/state/verdicts/12.json");
      for (const [name, value] of Object.entries(FIXED_ENV)) assert.equal(env[name], value, name);
      assert.equal("CI" in env, row.passthrough.includes("CI"));
    });
  }

  it("defaults to process.env and never invents a PATH", () => {
    const env = workerEnv({ passthrough: [], deny: [], facts });
    assert.equal(env.PATH, process.env.PATH);
    assert.equal("GITHUB_TOKEN" in env, false);
  });

  it("refuses a fact with a NUL byte", () => {
    assert.throws(() => workerEnv({ base: {}, passthrough: [], deny: [], facts: { ...facts, AFK_BRANCH: "a\0b" } }), /NUL/);
  });

  it("matchesEnvPattern", () => {
    assert.equal(matchesEnvPattern("AFK_USER_X", "AFK_USER_*"), true);
    assert.equal(matchesEnvPattern("AFK_USERX", "AFK_USER_*"), false);
    assert.equal(matchesEnvPattern("GITHUB_TOKEN", "GITHUB_TOKEN"), true);
    assert.equal(matchesEnvPattern("GITHUB_TOKEN_2", "GITHUB_TOKEN"), false);
    assert.equal(matchesEnvPattern("ANY", "*"), false);
    assert.equal(matchesEnvPattern("A-B", "A-*"), false);
  });
});
