import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { FwFailure } from '../core/failure.ts';

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
        const holder = commandLineOf(owner);
        throw new FwFailure('database_locked', `The embedded database ${dataDir} is in use by another process: pid ${owner}${holder ? ` (${holder})` : ''}. PGlite admits one process at a time.`, {
          suggestions: [
            `Stop pid ${owner}${holder ? ` (${holder})` : ''}, then run this again; or ask the running fw dev instead: fw db status, fw db migrate, fw live status and fw workflows list find it and go through it over HTTP.`,
            'Or point every process at PostgreSQL with DATABASE_URL, which many processes share.',
          ],
        });
      }
      rmSync(lockFile, { force: true }); // stale: its owner is gone
    }
  }
  throw new FwFailure('database_locked', `Could not lock ${dataDir}.`, { suggestions: ['Retry; if it persists, remove the .lock file beside it.'] });
}

/** What the lock's owner is running (`node …/fw dev`), where the system tells (Linux /proc); else undefined. */
function commandLineOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const fw = argv.findIndex((arg) => /(^|\/)(fw|bin\.js|vite(\.js)?)$/.test(arg));
    const shown = (fw >= 0 ? argv.slice(fw) : argv).map((arg) => path.basename(arg) === arg ? arg : path.basename(arg));
    return shown.join(' ').slice(0, 120) || undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
