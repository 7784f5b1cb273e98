/**
 * A helper the broken subjects of `examples/broken/` share to plant a storage bug: the session's JSONL log is
 * rewritten after the session, as a store that serialises events wrongly would have written it. Not a subject.
 */
import { readFile, writeFile } from 'node:fs/promises'

/** One stored event line, as far as the rewrites look at it. */
export interface StoredEvent {
  seq: number
  time: number
  type: string
  data: Record<string, unknown>
  surfaceOp?: Record<string, unknown>
  sourceEventSeqs?: number[]
  [key: string]: unknown
}

/** Rewrites the JSONL log at `logPath` through `rewrite` (blank lines kept out, a trailing newline kept). */
export async function rewriteLog(logPath: string, rewrite: (events: StoredEvent[]) => StoredEvent[]): Promise<void> {
  const text = await readFile(logPath, 'utf8')
  const events = text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as StoredEvent)
  const out = rewrite(events).map((e) => JSON.stringify(e))
  await writeFile(logPath, out.length === 0 ? '' : `${out.join('\n')}\n`)
}

/** True for a checkpoint replacement (§1.4.4): a `user/message` replacement with the `compact` plugin source. */
export function isCheckpoint(e: StoredEvent): boolean {
  const source = e.data['source'] as { kind?: unknown; plugin?: unknown } | undefined
  return e.type === 'user/message' && e.surfaceOp?.['op'] === 'replace' && source?.kind === 'plugin' && source.plugin === 'compact'
}
