// `afk-mcp doctor` against the local forge over real HTTP: classic tokens with and without
// the scopes the fleet needs, a fine-grained token, a rejected token, no token at all, API
// URLs that are malformed, closed or not GitHub's, and state directories that are a file,
// open to others or yet to be created — each line with its fix; then the real CLI process.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { gitVersionCheck, nodeCheck, runDoctor, doctorExitCode, type DoctorCheck } from "../server/host/doctor.js";
import { codexFinding, NEEDED_STARTUP_SECONDS, type CodexFinding } from "../server/host/codex-config.js";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { BIN } from "./support/paths.js";

const pexec = promisify(execFile);

let forge: TestForge;
let dir: string;
let privateState: string;
let emptyBin: string;

async function userWithScopes(login: string, scopes: string[] | null): Promise<string> {
  const res = await api(forge, "POST", "/_forge/users", { login, scopes });
  assert.ok(res.status === 201 || res.status === 200, JSON.stringify(res.body));
  return (res.body as { token: string }).token;
}

function byName(checks: DoctorCheck[]): Record<DoctorCheck["name"], DoctorCheck> {
  return Object.fromEntries(checks.map((c) => [c.name, c])) as Record<DoctorCheck["name"], DoctorCheck>;
}

/** An environment with only what is given: no inherited token, and no `gh` on PATH. */
function env(vars: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: emptyBin, HOME: dir, AFK_STATE_DIR: privateState, ...vars };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

before(async () => {
  forge = await startTestForge();
  dir = await tempDir("afk-doctor-");
  privateState = join(dir, "state");
  await mkdir(privateState, { mode: 0o700 });
  await chmod(privateState, 0o700);
  emptyBin = join(dir, "empty-bin");
  await mkdir(emptyBin);
});

after(async () => {
  await forge?.dispose();
});

describe("doctor: the token and its scopes, against the local forge", () => {
  it("a classic token with repo and workflow: api_url, token, scopes and state_dir are ok", async () => {
    const token = await userWithScopes("classic-full", ["repo", "workflow", "read:org"]);
    const checks = await runDoctor({ env: env({ GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: token }), nodeVersion: "24.1.0" });
    assert.deepEqual(
      checks.map((c) => c.name),
      ["node", "git", "api_url", "token", "scopes", "state_dir", "codex", "runtime"],
    );
    const c = byName(checks);
    // The suite runs with AFK_RUNTIME=local (scripts/test-run.mjs) unless asked otherwise; the sandbox's own line is runtimes-sandbox's.
    assert.match(c.runtime.detail, /^runtime (local: workers run as this user|sandbox \(bubblewrap)/);
    for (const name of ["node", "git", "api_url", "token", "scopes", "state_dir"] as const) assert.equal(c[name].status, "ok", `${name}: ${c[name].detail}`);
    assert.match(c.token.detail, /^from GITHUB_TOKEN, signed in as classic-full; \d+ of 5000 requests left/);
    assert.equal(c.scopes.detail, "classic token scopes: repo, workflow, read:org");
    assert.ok(checks.every((x) => x.fix === null));
    assert.equal(doctorExitCode(checks), 0);
  });

  it("a fine-grained token (no x-oauth-scopes): scopes are per repository, and plan --repo checks them", async () => {
    const c = byName(await runDoctor({ env: env({ GITHUB_API_URL: forge.apiUrl, GH_TOKEN: forge.token }), nodeVersion: "22.0.0" }));
    assert.equal(c.token.status, "ok");
    assert.match(c.token.detail, /^from GH_TOKEN, signed in as /);
    assert.equal(c.scopes.status, "ok");
    assert.match(c.scopes.detail, /fine-grained .*afk-mcp plan --repo OWNER\/NAME/);
  });

  it("classic tokens short of scopes: public_repo warns, workflow missing warns, neither repo scope fails", async () => {
    const rows: [string[], DoctorCheck["status"], RegExp][] = [
      [["public_repo", "workflow"], "warn", /^gh auth refresh -s repo/],
      [["repo"], "warn", /^gh auth refresh -s workflow$/],
      [["read:org"], "fail", /^gh auth refresh -s repo/],
      [[], "fail", /^gh auth refresh -s repo/],
    ];
    for (const [i, [scopes, status, fix]] of rows.entries()) {
      const token = await userWithScopes(`classic-${i}`, scopes);
      const checks = await runDoctor({ env: env({ GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: token }), nodeVersion: "22.0.0" });
      const c = byName(checks);
      assert.equal(c.scopes.status, status, `${scopes.join(",")}: ${c.scopes.detail}`);
      assert.match(c.scopes.fix ?? "", fix);
      assert.equal(doctorExitCode(checks), status === "fail" ? 1 : 0);
    }
  });

  it("a token GitHub rejects: the token line fails with the fix, scopes are skipped, exit 1", async () => {
    const checks = await runDoctor({ env: env({ GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: "afkf_not_a_token" }), nodeVersion: "22.0.0" });
    const c = byName(checks);
    assert.equal(c.api_url.status, "ok");
    assert.equal(c.token.status, "fail");
    assert.match(c.token.detail, /^from GITHUB_TOKEN: .*401/);
    assert.match(c.token.fix ?? "", /GITHUB_TOKEN=\$\(gh auth token\)/);
    assert.equal(c.scopes.status, "skip");
    assert.ok(!JSON.stringify(checks).includes("afkf_not_a_token"), "the token must never be printed");
    assert.equal(doctorExitCode(checks), 1);
  });

  it("an empty GITHUB_TOKEN (what `${GITHUB_TOKEN:-}` gives an MCP server when unset) falls back to `gh auth token`", async () => {
    const withGh = join(dir, "with-gh");
    await mkdir(withGh, { recursive: true });
    await writeFile(join(withGh, "gh"), `#!/bin/sh\n[ "$1 $2" = "auth token" ] && echo "${forge.token}" && exit 0\nexit 1\n`);
    await chmod(join(withGh, "gh"), 0o755);
    const c = byName(await runDoctor({ env: env({ GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: "", PATH: withGh }), nodeVersion: "22.0.0" }));
    assert.equal(c.token.status, "ok", c.token.detail);
    assert.match(c.token.detail, /^from gh auth token, signed in as /);
  });

  it("no token at all (no env, no gh on PATH): fails naming GITHUB_TOKEN and gh auth login; the API is not contacted", async () => {
    const c = byName(await runDoctor({ env: env({ GITHUB_API_URL: forge.apiUrl }), nodeVersion: "22.0.0" }));
    assert.equal(c.token.status, "fail");
    assert.match(c.token.detail, /GITHUB_TOKEN or GH_TOKEN/);
    assert.match(c.token.fix ?? "", /export GITHUB_TOKEN=.*gh auth login/);
    assert.equal(c.api_url.status, "ok");
    assert.match(c.api_url.detail, /not contacted/);
    assert.equal(c.scopes.status, "skip");
  });
});

describe("doctor: bad API URLs", () => {
  it("not a URL, not http(s), a closed port, a root that is not GitHub's REST API: api_url fails with the fix", async () => {
    const port = await closedPort();
    const rows: [string, RegExp][] = [
      ["not a url", /is not a URL/],
      ["ftp://example.com", /must be an http\(s\) URL/],
      [`http://127.0.0.1:${port}`, /did not answer: cannot reach/],
      [`${forge.apiUrl}/not-the-api`, /does not answer as GitHub's REST API: .*404/],
    ];
    for (const [url, detail] of rows) {
      const c = byName(await runDoctor({ env: env({ GITHUB_API_URL: url, GITHUB_TOKEN: forge.token }), nodeVersion: "22.0.0" }));
      assert.equal(c.api_url.status, "fail", url);
      assert.match(c.api_url.detail, detail, url);
      assert.match(c.api_url.fix ?? "", /set GITHUB_API_URL to the REST API root .*https:\/\/HOST\/api\/v3/);
      assert.notEqual(c.token.status, "ok", url);
      assert.notEqual(c.token.status, "fail", `${url}: the token is not to blame`);
    }
  });
});

describe("doctor: the state directory", () => {
  it("a file, a directory open to others, one yet to be created", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "");
    const open = join(dir, "open state");
    await mkdir(open);
    await chmod(open, 0o755);
    const rows: [string, DoctorCheck["status"], RegExp, RegExp | string | null][] = [
      [file, "fail", /is not a directory/, /^remove .*AFK_STATE_DIR/],
      // The path has a space: the suggested command quotes it.
      [open, "warn", /open to other users \(mode 755\)/, `chmod 700 '${open}'`],
      [join(dir, "new", "state"), "ok", /will be created on first use/, null],
    ];
    for (const [path, status, detail, fix] of rows) {
      const c = byName(await runDoctor({ env: env({ AFK_STATE_DIR: path }), nodeVersion: "22.0.0" }));
      assert.equal(c.state_dir.status, status, path);
      assert.match(c.state_dir.detail, detail);
      if (fix instanceof RegExp) assert.match(c.state_dir.fix ?? "", fix);
      else assert.equal(c.state_dir.fix, fix);
    }
  });
});

describe("doctor: node and git versions", () => {
  it("Node 22 and newer are fine, 20 is past its end of life, 18 is too old", () => {
    const rows: [string, DoctorCheck["status"]][] = [
      ["v24.1.0", "ok"],
      ["22.0.0", "ok"],
      ["20.20.2", "warn"],
      ["18.19.0", "fail"],
    ];
    for (const [version, status] of rows) {
      const check = nodeCheck(version);
      assert.equal(check.status, status, version);
      assert.equal(check.fix === null, status === "ok", version);
    }
  });

  it("git 2.38 and newer are fine, older warns that the local forge needs merge-tree --write-tree", () => {
    assert.equal(gitVersionCheck("git version 2.39.5").status, "ok");
    assert.equal(gitVersionCheck("git version 3.0.0").status, "ok");
    const old = gitVersionCheck("git version 2.34.1");
    assert.equal(old.status, "warn");
    assert.match(old.detail, /merge-tree --write-tree/);
    assert.equal(gitVersionCheck("hub version 2.14").status, "warn");
  });
});

describe("afk-mcp doctor (the CLI process)", () => {
  it("prints one line per check and `fix:` under each problem, never the token; exit 0 when nothing fails", async () => {
    const token = await userWithScopes("classic-cli", ["repo", "workflow"]);
    const { stdout } = await pexec(process.execPath, [BIN, "doctor"], {
      env: { ...env({ GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: token }), PATH: process.env.PATH ?? "" },
    });
    const lines = stdout.trimEnd().split("\n");
    for (const name of ["node", "git", "api_url", "token", "scopes", "state_dir"])
      assert.ok(
        lines.some((l) => new RegExp(`^(ok|WARN)\\s+${name}\\s`).test(l)),
        `${name} in:\n${stdout}`,
      );
    assert.match(lines.at(-1)!, /^ready/);
    assert.ok(!stdout.includes(token));
  });

  it("with git missing from PATH and a rejected token: FAIL lines with fixes, --json, exit 1", async () => {
    const run = pexec(process.execPath, [BIN, "doctor", "--json"], { env: env({ GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: "afkf_wrong" }) });
    const error = (await run.then(
      () => assert.fail("doctor should exit 1"),
      (e: unknown) => e,
    )) as { code: number; stdout: string };
    assert.equal(error.code, 1);
    const out = JSON.parse(error.stdout) as { ok: boolean; checks: DoctorCheck[] };
    assert.equal(out.ok, false);
    const c = byName(out.checks);
    assert.equal(c.git.status, "fail");
    assert.match(c.git.detail, /not installed or not on PATH/);
    assert.match(c.git.fix ?? "", /install git 2\.38 or newer/);
    assert.equal(c.token.status, "fail");
    assert.ok(!error.stdout.includes("afkf_wrong"));
  });
});

describe("doctor: a Codex config that gives afk-mcp too little time to start", () => {
  const afk = (extra: string) => `[mcp_servers.afk]\ncommand = "npx"\nargs = ["-y", "afk-mcp"]\n${extra}`;
  const cases: Array<[string, string | null, CodexFinding["status"]]> = [
    ["no config: skipped", null, "skip"],
    ["a config without afk-mcp: skipped", '[mcp_servers.other]\ncommand = "other-mcp"\nstartup_timeout_sec = 1\n', "skip"],
    ["afk-mcp on Codex's default 10 s: warned", afk(""), "warn"],
    ["afk-mcp given 15 s: warned", afk("startup_timeout_sec = 15\n"), "warn"],
    ["afk-mcp given enough: fine", afk(`startup_timeout_sec = ${NEEDED_STARTUP_SECONDS}  # first npx start\n`), "ok"],
    ["the older startup_timeout_ms key, enough: fine", afk(`startup_timeout_ms = ${NEEDED_STARTUP_SECONDS * 1000}\n`), "ok"],
    [
      "a quoted server name, a timeout set for another server only: warned",
      `[mcp_servers."afk fleet"]\ncommand = "afk-mcp"\n\n[mcp_servers.x]\nstartup_timeout_sec = 60\n`,
      "warn",
    ],
  ];
  for (const [name, toml, status] of cases) {
    it(name, () => assert.equal(codexFinding("/c/config.toml", toml).status, status));
  }

  it("the warning names the entry, the time it gets, the time it needs, and the line that fixes it", () => {
    const finding = codexFinding("/c/config.toml", afk("startup_timeout_sec = 12\n"));
    assert.match(finding.detail, /mcp_servers\.afk gives afk-mcp 12 s to start/);
    assert.match(finding.detail, new RegExp(`up to ${NEEDED_STARTUP_SECONDS} s`));
    assert.equal(
      finding.fix?.startsWith(`set \`startup_timeout_sec = ${NEEDED_STARTUP_SECONDS}\` under [mcp_servers.afk] in /c/config.toml`),
      true,
      finding.fix ?? "",
    );
  });

  it("runDoctor reads $CODEX_HOME/config.toml", async () => {
    const home = await tempDir("afk-codex-");
    await writeFile(join(home, "config.toml"), afk(""));
    const codex = byName(await runDoctor({ env: env({ CODEX_HOME: home, GITHUB_API_URL: forge.apiUrl }), timeoutMs: 5_000 })).codex;
    assert.equal(codex.status, "warn");
    assert.ok(codex.detail.startsWith(join(home, "config.toml")), codex.detail);
  });
});
