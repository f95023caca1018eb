// Completions of `repo` (the prompts' argument and the resource templates' owner and name) from
// the working directory's remotes, origin first then the others (a fork's upstream), through a
// real MCP client (in memory, and the built binary over stdio); remotes that name no repository
// are left out.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BIN } from "./support/paths.js";
import { FleetHost } from "../server/host/host.js";
import { remoteSlugs } from "../server/host/connection.js";
import { createServer } from "../server/server.js";

/** A repository directory with an upstream, an origin and a remote that names no repository. */
function withRemotes(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "afk-remotes-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  git("remote", "add", "upstream", "git@github.com:them/project.git");
  git("remote", "add", "origin", "https://github.com/me/fork.git");
  git("remote", "add", "scratch", "/srv/not-a-repo-slug");
  return dir;
}

describe("repo completions from the working directory's remotes", () => {
  it("offers origin, then upstream, skipping a remote that names no repository", async (t) => {
    const dir = withRemotes(t);
    assert.deepEqual(await remoteSlugs(dir), ["me/fork", "them/project"]);
    assert.deepEqual(await remoteSlugs(tmpdir()), [], "a directory outside any repository has none");

    const host = new FleetHost({
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, AFK_STATE_DIR: join(dir, "state") },
      cwd: dir,
      instance: "completions",
    });
    const server = createServer(host);
    const client = new Client({ name: "completions-test", version: "0.0.0" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    t.after(async () => {
      await client.close();
      await host.close();
    });
    const prompt = await client.complete({ ref: { type: "ref/prompt", name: "launch" }, argument: { name: "repo", value: "" } });
    assert.deepEqual(prompt.completion.values, ["me/fork", "them/project"]);
    const them = await client.complete({ ref: { type: "ref/prompt", name: "monitor" }, argument: { name: "repo", value: "TH" } });
    assert.deepEqual(them.completion.values, ["them/project"]);
    const owners = await client.complete({ ref: { type: "ref/resource", uri: "afk://{owner}/{repo}/board" }, argument: { name: "owner", value: "" } });
    assert.deepEqual(owners.completion.values, ["me", "them"]);
  });

  it("the built binary over stdio, started in that directory as a client starts it: the session's remotes, no daemon needed", async (t) => {
    const dir = withRemotes(t);
    const client = new Client({ name: "completions-stdio", version: "0.0.0" });
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, AFK_STATE_DIR: join(dir, "state") };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env, cwd: dir, stderr: "pipe" }));
    try {
      const prompt = await client.complete({ ref: { type: "ref/prompt", name: "launch" }, argument: { name: "repo", value: "" } });
      assert.deepEqual(prompt.completion.values, ["me/fork", "them/project"]);
      const names = await client.complete({ ref: { type: "ref/resource", uri: "afk://{owner}/{repo}/board" }, argument: { name: "repo", value: "p" } });
      assert.deepEqual(names.completion.values, ["project"]);
    } finally {
      await client.close();
    }
  });
});
