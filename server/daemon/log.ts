// The daemon's own log (`<state dir>/daemon/daemon.log`, its stderr when detached), kept bounded:
// a daemon that runs for weeks, or says every second that a forge is down, must not fill the
// disk. Past the cap the file is copied to `daemon.log.1` (the one older generation kept) and
// cut back to a marker line. The daemon is the file's only steady writer and writes
// synchronously, so nothing is lost between the copy and the cut.
import { copyFileSync, constants as fsConstants, fstatSync, ftruncateSync, statSync, writeSync } from "node:fs";

/** The default cap on daemon.log (one older generation is kept beside it). */
export const DAEMON_LOG_MAX_BYTES = 8 * 1024 * 1024;

export interface CappedLogOptions {
  /** The descriptor written to (the daemon's stderr). */
  fd: number;
  /** The file it is expected to be: capped only when `fd` is that very file (not a terminal, not journald). */
  path: string;
  maxBytes?: number;
  clock?: () => Date;
}

/** A line writer for the daemon: `<ISO time> afk-mcp daemon: <line>`, capped as above. */
export function cappedLog(options: CappedLogOptions): (line: string) => void {
  const max = options.maxBytes ?? DAEMON_LOG_MAX_BYTES;
  const clock = options.clock ?? (() => new Date());
  const isOurFile = (): boolean => {
    try {
      const fd = fstatSync(options.fd);
      const file = statSync(options.path);
      return fd.isFile() && fd.ino === file.ino && fd.dev === file.dev;
    } catch {
      return false;
    }
  };
  return (line: string) => {
    try {
      writeSync(options.fd, `${clock().toISOString()} afk-mcp daemon: ${line}\n`);
      if (fstatSync(options.fd).size <= max || !isOurFile()) return;
      copyFileSync(options.path, `${options.path}.1`, fsConstants.COPYFILE_FICLONE);
      ftruncateSync(options.fd, 0);
      writeSync(options.fd, `${clock().toISOString()} afk-mcp daemon: this log passed ${max} bytes; the lines before are in ${options.path}.1\n`);
    } catch {
      // A log that cannot be written must not stop the daemon.
    }
  };
}
