import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { FwFailure } from '../failure.ts';

/**
 * An exclusive, cross-process lock on a PGlite data directory. PGlite is a single-process database:
 * two processes writing one directory corrupt it, so a second opener must fail clearly instead.
 * The lock file holds the owner's PID; a lock whose process is gone (a crash) is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const lockFile = path.join(dataDir, '..', `${path.basename(dataDir)}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(lockFile, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new FwFailure('database_locked', `The embedded database ${dataDir} is in use by another fw process (pid ${owner}).`, {
          suggestions: [
            'Stop the other fw process (e.g. the running `fw dev`), then retry.',
            'Or point both at PostgreSQL with DATABASE_URL, which many processes can share.',
          ],
        });
      }
      rmSync(lockFile, { force: true }); // stale: its owner is gone
    }
  }
  throw new FwFailure('database_locked', `Could not lock ${dataDir}.`, { suggestions: ['Retry; if it persists, remove the .lock file beside it.'] });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
