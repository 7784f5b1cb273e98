/**
 * What the process is waiting on right now (issue #16: an unsettled promise must become exit 3 naming what was
 * pending, never Node's silent exit 13). Long-running awaits with no bound of their own — a subject session, and
 * the scenario run around it — register a lazily built label here; the CLI's settle guard (`cli/settle-guard.ts`)
 * reads the labels when the event loop has emptied while the run's promise is still pending. Labels are built only
 * then, so registering costs nothing on the normal path. Dependency-free: the bin loads it before anything else.
 */

/** Builds one label on demand (it reads state that changes while the work runs, e.g. the world's turn). */
export type PendingLabel = () => string

const pending = new Map<number, PendingLabel>()
let nextId = 0

/**
 * Registers `label` as pending until the returned function is called (idempotent). Call it in a `finally`, so
 * work that failed is not reported as pending.
 */
export function trackPending(label: PendingLabel): () => void {
  const id = nextId++
  pending.set(id, label)
  return () => { pending.delete(id) }
}

/** The labels of everything still pending, oldest first; a label that throws is shown as such. */
export function pendingWork(): string[] {
  return [...pending.values()].map((label) => {
    try {
      return label()
    } catch (err) {
      return `(a pending task whose label failed: ${err instanceof Error ? err.message : String(err)})`
    }
  })
}
