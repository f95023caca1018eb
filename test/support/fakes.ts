// The fakes as one world, ready for a scenario in virtual time: one clock, one repository behind
// the forge and the ref store (a merge moves the base the RefStore reads), one machine for the
// runtimes. Each fake is held to its real counterpart by test/contract-*.test.ts.
import { VirtualClock } from "./fake-clock.js";
import { FakeForge } from "./fake-forge.js";
import { FakeRepo } from "./fake-git.js";
import { FakeRefStore } from "./fake-refs.js";
import { FakeMachine, FakeRuntime, type FakeProgram } from "./fake-runtime.js";

export interface FakePorts {
  clock: VirtualClock;
  repo: FakeRepo;
  forge: FakeForge;
  /** The ref store of this host; `new FakeRefStore(repo)` is another host's on the same repository. */
  refs: FakeRefStore;
  machine: FakeMachine;
  /** The runtime of this host process; `new FakeRuntime(machine)` is the next one's. */
  runtime: FakeRuntime;
}

export function fakePorts(options: { repo?: string; login?: string; programs?: Record<string, FakeProgram>; start?: number } = {}): FakePorts {
  const clock = new VirtualClock(options.start);
  const repo = new FakeRepo();
  const forge = new FakeForge({
    git: repo,
    clock: clock.date,
    ...(options.repo ? { repo: options.repo } : {}),
    ...(options.login ? { login: options.login } : {}),
  });
  const machine = new FakeMachine(clock, options.programs ?? {});
  return { clock, repo, forge, refs: new FakeRefStore(repo), machine, runtime: new FakeRuntime(machine) };
}
