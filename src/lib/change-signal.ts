/**
 * A process-local "something changed" signal without payload (docs/decisions/0014-practice-workspace.md,
 * "Live calendar"): writers `notify()`, readers that poll subscribe to be woken at once instead of at
 * their next poll. Made once per application by `buildApp` and passed to the route areas that write
 * or read appointments; never a module-level singleton.
 */
export class ChangeSignal {
  private readonly listeners = new Set<() => void>();

  /** Calls every listener; a listener that throws does not stop the others. */
  notify(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A reader's wake-up failing is the reader's concern; the writer's answer is already sent.
      }
    }
  }

  /** Adds `listener`; returns the function that removes it. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}
