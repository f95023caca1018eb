// The one rule for a call that names no repository (server/host/default-repo.ts), which the
// session's daemon client and the in-process host both keep: the calling directory's origin,
// else the host's only project, else none (and a tool that needs one names the choices). The
// origin is read from a real git directory; the daemon-sessions test holds the rule end to end.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chooseRepo, choiceNote, needRepo, withRepo, type CallPlace } from "../server/host/default-repo.js";
import { originSlug } from "../server/host/connection.js";
import { repoKey } from "../server/gh/slug.js";
import { UsageError } from "../server/gh/errors.js";
import { tempDir } from "./support/forge-fixtures.js";

function place(origin: string | null, running: string[]): CallPlace & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    origin: async () => (asked.push("origin"), origin),
    running: () => (asked.push("running"), running),
  };
}

describe("a call without a repository", () => {
  const cases: { name: string; given?: string; origin: string | null; running: string[]; want: string | null; why?: string }[] = [
    {
      name: "a given repository wins, normalised",
      given: "https://github.com/Octo/Hello.git",
      origin: "a/b",
      running: ["c/d"],
      want: "Octo/Hello",
      why: "given",
    },
    { name: "the directory's origin comes before the only project", origin: "a/b", running: ["c/d"], want: "a/b", why: "origin" },
    { name: "the origin, when several run", origin: "a/b", running: ["c/d", "e/f"], want: "a/b", why: "origin" },
    { name: "no origin: the only project", origin: null, running: ["c/d"], want: "c/d", why: "only" },
    { name: "no origin, several projects: none", origin: null, running: ["c/d", "e/f"], want: null },
    { name: "no origin, no project: none", origin: null, running: [], want: null },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const p = place(c.origin, c.running);
      const choice = await chooseRepo(c.given, p);
      assert.equal(choice?.repo ?? null, c.want);
      if (c.why) assert.equal(choice?.why, c.why);
      // A given repository asks nothing of the place; the origin is asked before the projects.
      if (c.given) assert.deepEqual(p.asked, []);
      else assert.equal(p.asked[0], "origin");
    });
  }

  it("a tool that needs one names the directory and what runs", async () => {
    await assert.rejects(
      needRepo("project_resize", undefined, place(null, ["c/d", "e/f"]), "/some/dir"),
      (e: unknown) =>
        e instanceof UsageError &&
        /project_resize: pass repo \("owner\/name"\): \/some\/dir has no GitHub "origin" remote, and this host runs c\/d, e\/f/.test(e.message),
    );
    await assert.rejects(needRepo("takeover", undefined, place(null, []), "/x"), /no project is running on this host/);
    assert.equal((await needRepo("project_stop", undefined, place(null, ["c/d"]), "/x")).repo, "c/d");
  });

  describe("a call's input, given the rule", () => {
    const rows: { name: string; tool: string | null; origin: string | null; running: string[]; want: string | undefined | RegExp }[] = [
      { name: "the origin fills it in", tool: "logs", origin: "a/b", running: ["c/d", "e/f"], want: "a/b" },
      { name: "the only project fills it in", tool: "logs", origin: null, running: ["c/d"], want: "c/d" },
      { name: "no project: left empty, for the tool to say what it lacks", tool: "logs", origin: null, running: [], want: undefined },
      {
        name: "several projects: a tool that acts on one is refused, naming them",
        tool: "report",
        origin: null,
        running: ["c/d", "e/f"],
        want: /^report: pass repo \("owner\/name"\): \/x has no GitHub "origin" remote, and this host runs c\/d, e\/f$/,
      },
      {
        name: "several projects: status of the whole machine is left empty (it lists them all)",
        tool: null,
        origin: null,
        running: ["c/d", "e/f"],
        want: undefined,
      },
    ];
    for (const row of rows)
      it(row.name, async () => {
        const answer = withRepo({ lane: "supervisor" } as { lane: string; repo?: string }, place(row.origin, row.running), row.tool, "/x");
        if (row.want instanceof RegExp) await assert.rejects(answer, (e: unknown) => e instanceof UsageError && (row.want as RegExp).test(e.message));
        else assert.deepEqual(await answer, row.want === undefined ? { lane: "supervisor" } : { lane: "supervisor", repo: row.want });
      });
  });

  it("the answer says what an omitted repository was taken to mean", () => {
    assert.equal(choiceNote({ repo: "a/b", why: "given" }), "");
    assert.equal(choiceNote({ repo: "a/b", why: "origin" }), "a/b (this directory's origin): ");
    assert.equal(choiceNote({ repo: "a/b", why: "only" }, "the daemon's only project"), "a/b (the daemon's only project): ");
  });

  it("the origin is read from the directory's git remote; a directory without one has none", async () => {
    const dir = await tempDir("afk-origin-");
    execFileSync("git", ["init", "-q", dir]);
    await assert.rejects(originSlug(dir), UsageError);
    execFileSync("git", ["-C", dir, "remote", "add", "origin", "git@github.com:Octo/Hello.git"]);
    assert.equal(await originSlug(dir), "Octo/Hello");
  });

  it("one key per repository, whatever the case or form", () => {
    assert.equal(repoKey("Octo/Hello"), "octo/hello");
    assert.equal(repoKey("https://github.com/OCTO/hello.git"), "octo/hello");
    assert.equal(repoKey({ owner: "Octo", name: "Hello" }), "octo/hello");
    assert.throws(() => repoKey("not a repo"), UsageError);
  });
});
