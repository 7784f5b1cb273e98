/**
 * Replay determinism (§10.1, §10.5): for any valid history and any prefix length k, folding the
 * prefix from scratch yields exactly the state the incremental fold had after k events — surface,
 * generation, offloads, header in force, series epoch, lock — and the same derived messages; and
 * folding the same events twice gives identical results.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { EventLog } from '../../src/log/event-log.ts'
import { summarizeSession, type SessionSummary } from '../../src/log/summary.ts'
import type { Message } from '../../src/log/llm.ts'
import { interpret, openTurn, newModel, opArb } from '../support/log-gen.ts'
import { fcParams } from '../support/seed.ts'

describe('replaying a log prefix is deterministic', () => {
  it('prefix fold from scratch equals the incremental state at that prefix', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 80, size: 'max' }), (ops) => {
      const log = new EventLog({ dialect: 'seed' })
      const model = newModel()
      const snapshots: Array<{ summary: SessionSummary; messages: Message[] }> = [{ summary: summarizeSession(log), messages: log.deriveMessages() }]
      log.append(openTurn) // tool-result replacements need an open turn (§1.3)
      snapshots.push({ summary: summarizeSession(log), messages: log.deriveMessages() })
      for (const op of ops) {
        const draft = interpret(op, log.length, model)
        if (draft === null) continue
        log.append(draft)
        snapshots.push({ summary: summarizeSession(log), messages: log.deriveMessages() })
      }
      for (let k = 0; k <= log.length; k++) {
        const replayed = EventLog.fromEvents(log.events.slice(0, k), { dialect: 'seed' })
        expect(summarizeSession(replayed)).toEqual(snapshots[k]?.summary)
        expect(replayed.deriveMessages()).toEqual(snapshots[k]?.messages)
      }
    }), fcParams({ numRuns: 40 }))
  }, 60_000)
})
