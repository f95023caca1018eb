// One way to write a file whole, on write-file-atomic (a kept library: a temporary file named
// for this process and call beside the target, renamed over it; concurrent writes of one file in
// this process go in order; the temporary file removed on failure). A reader or a crash sees the
// old file or the new one, never a torn one.
import writeFileAtomic from "write-file-atomic";

export interface AtomicWrite {
  /** The file's mode. Default owner-only (0o600): these files hold state, tokens, briefs. */
  mode?: number;
  /** fsync before the rename, so that a power cut also leaves one or the other. Default off. */
  durable?: boolean;
}

const optionsOf = (options: AtomicWrite): writeFileAtomic.Options => ({ mode: options.mode ?? 0o600, fsync: options.durable === true });

/** Writes `path` whole (see the module's note). */
export function writeAtomic(path: string, data: string | Buffer, options: AtomicWrite = {}): Promise<void> {
  return writeFileAtomic(path, data, optionsOf(options));
}

/** writeAtomic without an await: for a write that a SIGKILL may only land before or after. */
export function writeAtomicSync(path: string, data: string | Buffer, options: AtomicWrite = {}): void {
  writeFileAtomic.sync(path, data, optionsOf(options));
}
