// Coalesces single-key requests made close together into one call for all their keys:
// a burst of link handshakes (a fleet coming back after a restart) costs a few set-based
// statements instead of one round trip per host. Requests for a key already waiting in the
// open batch share its answer.
//
// Batches grow with load: at most `maxInFlight` calls run at once, and keys asked while they
// run wait for one to finish and go together. A fixed window alone made ~2-key batches at a
// few hundred handshakes a second (one statement per two hosts, the control plane's largest
// CPU cost in a 10,000-host restart: decision 0020); a bounded number of flights makes the
// batch as large as the arrivals during one statement, and never more concurrent statements
// than the pool can take without queueing everything else behind them.

export interface KeyBatcherOptions {
  /**
   * How long a batch stays open for more keys after its first one (default 5 ms). 0: only for the keys
   * asked in the same turn of the event loop (setImmediate), so a key asked alone waits for nothing.
   */
  windowMs?: number;
  /** At most this many keys per call; more wait for the next (default 500). */
  maxKeys?: number;
  /** Calls running at once; keys asked meanwhile wait for one to finish (default 2). */
  maxInFlight?: number;
}

type Waiter<V> = { resolve: (v: V | undefined) => void; reject: (e: unknown) => void };

export class KeyBatcher<K, V> {
  private pending = new Map<K, Array<Waiter<V>>>();
  private timer: { cancel(): void } | null = null;
  private inFlight = 0;

  constructor(
    /** Answers every key of one batch; a key missing from the map answers undefined. */
    private readonly run: (keys: K[]) => Promise<Map<K, V>>,
    private readonly opts: KeyBatcherOptions = {},
  ) {}

  private get maxKeys(): number {
    return this.opts.maxKeys ?? 500;
  }

  private get maxInFlight(): number {
    return Math.max(1, this.opts.maxInFlight ?? 2);
  }

  load(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      // While every flight is taken, the keys wait for one to land (see settled()).
      if (this.inFlight >= this.maxInFlight) return;
      if (this.pending.size >= this.maxKeys) this.flush();
      else this.timer ??= this.open();
    });
  }

  private open(): { cancel(): void } {
    const windowMs = this.opts.windowMs ?? 5;
    if (windowMs === 0) {
      const immediate = setImmediate(() => this.flush());
      return { cancel: () => clearImmediate(immediate) };
    }
    const timeout = setTimeout(() => this.flush(), windowMs);
    return { cancel: () => clearTimeout(timeout) };
  }

  private flush(): void {
    this.timer?.cancel();
    this.timer = null;
    if (this.pending.size === 0 || this.inFlight >= this.maxInFlight) return;
    const batch = new Map<K, Array<Waiter<V>>>();
    for (const [key, waiters] of this.pending) {
      if (batch.size >= this.maxKeys) break;
      batch.set(key, waiters);
    }
    for (const key of batch.keys()) this.pending.delete(key);
    this.inFlight++;
    let call: Promise<Map<K, V>>;
    try {
      call = this.run([...batch.keys()]);
    } catch (err) {
      call = Promise.reject(err);
    }
    call
      .then(
        (answers) => {
          for (const [key, waiters] of batch) for (const w of waiters) w.resolve(answers.get(key));
        },
        (err) => {
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
        },
      )
      .finally(() => this.settled());
  }

  /** A flight landed: keys that waited for it go now (they waited one statement already). */
  private settled(): void {
    this.inFlight--;
    if (this.pending.size > 0) this.flush();
  }
}
