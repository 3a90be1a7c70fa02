/**
 * Polls `probe` until it returns a truthy value, and returns that value; throws naming `what` after
 * `timeoutMs`. For tests that wait on another process or a background worker (never timed assertions).
 */
export async function until<T>(probe: () => Promise<T | undefined | false>, what: string, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}
