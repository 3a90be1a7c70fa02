import type { ReloadOutcome } from './dev-runtime.ts';

/**
 * Reports each reload once. One save is often several watcher events (a new file is `rename` then
 * `change`; editors that save atomically do the same), and wakeups that arrive during a reload are
 * folded into one run whose outcome every one of them resolves with: reporting per event printed
 * `fw: reloaded x` two or three times. Here an outcome is reported once, with every file that led to it;
 * a later run that had no new file (a folded follow-up) is reported only when it failed.
 *
 * @example
 *   const report = reportReloads((outcome, files) => log(`fw: reloaded ${files.join(', ')}`));
 *   report(file, runtime.reload([file]));
 */
export function reportReloads(onReload: ((outcome: ReloadOutcome, files: readonly string[]) => void) | undefined): (file: string, reload: Promise<ReloadOutcome>) => void {
  const reported = new WeakSet<ReloadOutcome>();
  const files = new Set<string>();
  return (file, reload) => {
    files.add(file);
    void reload.then((outcome) => {
      if (reported.has(outcome)) return;
      reported.add(outcome);
      const covered = [...files];
      files.clear();
      if (covered.length > 0 || !outcome.ok) onReload?.(outcome, covered);
    });
  };
}

/**
 * The line for a reload that served: what was reloaded and what it did to the database, so an
 * additive migration is announced as what it did.
 *
 * @example
 *   reloadedLine(['src/fw/schema.ts'], ['add column notes.pinned (boolean, not null, default false)'])
 *   // 'fw: reloaded src/fw/schema.ts; migrated the database: add column notes.pinned (boolean, not null, default false)'
 */
export function reloadedLine(files: readonly string[], migrated: readonly string[]): string {
  return `fw: reloaded ${files.join(', ')}${migrated.length > 0 ? `; migrated the database: ${migrated.join('; ')}` : ''}`;
}
