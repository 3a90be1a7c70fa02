/**
 * One run at a time, never debounced: a wakeup while idle runs at once; wakeups that arrive while a run
 * is in flight fold into exactly one follow-up run, which starts as soon as that run ends. The live log
 * reader (a read per wakeup), each live group (a rerun per invalidation) and the dev server's reload
 * (a reload per edit) are this loop.
 *
 * @example
 *   const pending: string[] = [];
 *   const reloads = createSingleFlight(() => reloadFiles(pending.splice(0)));
 *   const outcome = await reloads.wake(); // the outcome of the run that saw this wakeup
 *   await reloads.close(); // no follow-ups; resolves when the run in flight ends
 */

export interface SingleFlightOptions {
  /** Called with what a run threw (after the wakeups it covered reject with it); the loop goes on. */
  onError?(error: unknown): void;
}

export interface SingleFlight<T> {
  /**
   * Asks for a run: at once when idle, else the one follow-up of the run in flight. Resolves with the
   * result of the run that covers this wakeup (it began after the call), rejects with what it threw;
   * after `close`, rejects at once. Ignoring the promise is safe: a rejection is never unhandled.
   */
  wake(): Promise<T>;
  /** A run is in flight (or its follow-up is about to start). */
  readonly busy: boolean;
  /** `close` was called. */
  readonly closed: boolean;
  /** Resolves once no run is in flight nor due (at once when idle); never rejects. */
  idle(): Promise<void>;
  /** No run starts after this (a due follow-up is dropped; its wakeups reject); resolves when idle. */
  close(): Promise<void>;
}

export function createSingleFlight<T>(run: () => Promise<T>, options: SingleFlightOptions = {}): SingleFlight<T> {
  return new SingleFlightLoop(run, options.onError);
}

/**
 * The loop as one object whose methods live on its prototype: every live group holds one, and a set of
 * closures per instance would be ~0.4 KB more per group (bench/live's memory per subscriber).
 */
class SingleFlightLoop<T> implements SingleFlight<T> {
  readonly #run: () => Promise<T>;
  readonly #onError: ((error: unknown) => void) | undefined;
  /** The run in flight, and the follow-up that wakeups during it asked for. */
  #current: Pending<T> | undefined;
  #next: Pending<T> | undefined;
  #loop: Promise<void> | undefined;
  #closed = false;

  constructor(run: () => Promise<T>, onError: ((error: unknown) => void) | undefined) {
    this.#run = run;
    this.#onError = onError;
  }

  wake(): Promise<T> {
    if (this.#closed) return handled(Promise.reject(new Error('The single flight is closed.')));
    if (this.#current) return (this.#next ??= pending()).promise;
    this.#current = pending();
    const { promise } = this.#current;
    // The first run starts synchronously, as a wakeup's caller would run it itself.
    this.#loop = this.#drive();
    return promise;
  }

  get busy(): boolean {
    return this.#current !== undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  idle(): Promise<void> {
    return this.#loop ?? Promise.resolve();
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.#loop ?? Promise.resolve();
  }

  async #drive(): Promise<void> {
    while (this.#current) {
      try {
        this.#current.resolve(await this.#run());
      } catch (error) {
        this.#current.reject(error);
        try {
          this.#onError?.(error);
        } catch {
          // A failing reporter must not stop the loop.
        }
      }
      // Deciding to stop and clearing `current` happen in one synchronous step: a wakeup after this
      // point starts a new loop instead of joining one that already ended (a lost run).
      if (this.#closed) this.#next?.reject(new Error('The single flight was closed before this run started.'));
      this.#current = this.#closed ? undefined : this.#next;
      this.#next = undefined;
    }
    this.#loop = undefined;
  }
}

interface Pending<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function pending<T>(): Pending<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = handled(new Promise<T>((yes, no) => ((resolve = yes), (reject = no))));
  return { promise, resolve, reject };
}

/** Marks a promise's rejection as handled: a wakeup whose caller does not wait is fire-and-forget. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
