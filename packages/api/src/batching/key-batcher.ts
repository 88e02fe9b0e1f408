// Coalesces single-key requests made close together into one call for all their keys:
// a burst of link handshakes (a fleet coming back after a restart) costs a few set-based
// statements instead of one round trip per host. Requests for a key already waiting in the
// open batch share its answer.

export interface KeyBatcherOptions {
  /** How long a batch stays open for more keys after its first one (default 5 ms). */
  windowMs?: number;
  /** A batch this large is sent at once (default 500). */
  maxKeys?: number;
}

export class KeyBatcher<K, V> {
  private pending = new Map<K, Array<{ resolve: (v: V | undefined) => void; reject: (e: unknown) => void }>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    /** Answers every key of one batch; a key missing from the map answers undefined. */
    private readonly run: (keys: K[]) => Promise<Map<K, V>>,
    private readonly opts: KeyBatcherOptions = {},
  ) {}

  load(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (this.pending.size >= (this.opts.maxKeys ?? 500)) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.windowMs ?? 5);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = new Map();
    if (batch.size === 0) return;
    this.run([...batch.keys()]).then(
      (answers) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(answers.get(key));
      },
      (err) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      },
    );
  }
}
