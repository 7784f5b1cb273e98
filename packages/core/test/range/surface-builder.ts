/**
 * Test builders for range selection and pressure tests: logs whose surface nodes sit at chosen seqs
 * (padded with ignorable foreign events, §1.1 rule 4) and hand-built `Measurement`s carrying the
 * `P_route` prices a spec example lists (the incremental meter is not used here).
 */
import type { Seq } from '../../src/brand.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { Dialect, EventDraft } from '../../src/log/events.ts'
import type { Measurement } from '../../src/meter/measurement.ts'

const T = 1_700_000_000_000

/** A filler log-only event: an ignorable foreign type never changes the fold (§1.4.20). */
export function filler(): EventDraft {
  return { time: T, type: 'x/filler', data: {}, ignorable: true } as unknown as EventDraft
}

/** A `system/message` append (the system head when it lands at position 0). */
export function system(text = 'You are a coding assistant.'): EventDraft<'system/message'> {
  return {
    time: T, type: 'system/message',
    data: {
      id: `s-${text}` as never, role: 'system', content: [{ type: 'text', text }], source: { kind: 'plugin', plugin: 'system-prompt' },
    },
    surfaceOp: 'append',
  } as EventDraft<'system/message'>
}

/**
 * Appends each `[seq, draft]` at exactly that seq, padding the gaps with fillers. Seq 0 is `turn/start`
 * unless the first entry claims it (a turn must be open for tool-result replacements, §1.3).
 */
export function appendAt(log: EventLog, entries: ReadonlyArray<readonly [number, EventDraft]>): EventLog {
  for (const [seq, draft] of entries) {
    if (seq < log.length) throw new Error(`seq ${seq} is already taken (log length ${log.length})`)
    while (log.length < seq) log.append(filler())
    log.append(draft)
  }
  return log
}

/** A fresh log opening turn 1 at seq 0, then `entries` placed at their seqs. */
export function logAt(entries: ReadonlyArray<readonly [number, EventDraft]>, dialect: Dialect = 'seed'): EventLog {
  const log = new EventLog({ dialect })
  log.append({ time: T, type: 'turn/start', data: { turn: 1 } })
  return appendAt(log, entries)
}

/**
 * A measurement of `log` now whose nodes carry `prices` (by seq; every current node must be priced).
 * `totalTokens` defaults to the surface sum (an `estimated` baseline with no envelope).
 */
export function measurementOf(
  log: EventLog,
  prices: ReadonlyMap<number, number> | Readonly<Record<number, number>>,
  totalTokens?: number,
): Measurement {
  const priceOf = (seq: number): number => {
    const p = prices instanceof Map ? prices.get(seq) : (prices as Readonly<Record<number, number>>)[seq]
    if (p === undefined) throw new Error(`no price for node ${seq}`)
    return p
  }
  const nodes = log.nodes.map((seq: Seq) => Object.freeze({ seq, tokens: priceOf(seq) }))
  const surfaceTokens = nodes.reduce((sum, n) => sum + n.tokens, 0)
  const total = totalTokens ?? surfaceTokens
  return Object.freeze({
    logRevision: log.length,
    baseline: Object.freeze({ kind: 'estimated' as const, tokens: total }),
    surfaceDeltaTokens: 0,
    totalTokens: total,
    surfaceTokens,
    nodes: Object.freeze(nodes),
  })
}
