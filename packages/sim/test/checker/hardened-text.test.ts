/**
 * HARD-5 (hardened `oversizedUserText`, issue #19) and INV-37's refusal of a `text/offload` in a run without the
 * rule, on small built logs: a 1000-token route (bound floor(0.5 × 1000) = 500) and one user paste of 2400
 * characters (604 tokens).
 */
import { Seq, userTextReadOnlyPath, type LogEvent, type RunManifest, type TextBlock } from '@compaction-sim/core'
import { LogBuilder } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { found, reportOf } from './support.ts'

const ROUTE = { provider: 'mock', model: 'mock-1k', contextWindow: 1000 }

function manifest(compaction: RunManifest['compaction']): RunManifest {
  return { scenario: 'hardened-text', compaction, routes: [ROUTE], faults: [] }
}
const ON = manifest({ hardening: { oversizedUserText: true } } as never)

const text = (value: string): TextBlock => ({ type: 'text', text: value })
const filler = (label: string, length: number): string => `${label} `.repeat(Math.ceil(length / (label.length + 1))).slice(0, length)

interface Plan {
  /** Characters of the user paste (default 2400 = 604 tokens). */
  paste?: number
  /** Write the paste's text/offload before the request (default true). */
  offload?: boolean
  /** Edit the written text/offload data. */
  edit?: (d: Record<string, unknown>) => void
}

/** One turn: the paste, the route records, (the projection), one reply. Returns the events and the seqs that matter. */
function build(plan: Plan = {}): { events: LogEvent[]; user: number; offload: number | null; firstChunk: number } {
  const b = new LogBuilder({ route: ROUTE })
  b.turnStart()
  b.stepStart()
  const user = b.user([text(filler('paste', plan.paste ?? 2400))], 'm-user-1')
  b.header('initial')
  b.context()
  let offload: number | null = null
  if (plan.offload !== false) {
    const data: Record<string, unknown> = { seq: Seq(user), blockIndex: 0, tokens: Math.ceil((plan.paste ?? 2400) / 4) + 4, bound: 500, path: userTextReadOnlyPath('m-user-1', 0) }
    plan.edit?.(data)
    offload = b.add('text/offload', data as never)
  }
  const firstChunk = b.next
  b.reply([text('Read the paste.')], 'm-asst-1')
  b.stepEnd()
  b.turnEnd()
  return { events: b.events, user, offload, firstChunk }
}

const only = (prefix: string, ids: string[]): string[] => ids.filter((v) => v.startsWith(prefix))

describe('HARD-5 — oversized user text is projected', () => {
  it('passes a paste above the bound whose text/offload precedes the request', async () => {
    const { events } = build()
    const result = await checkLog(events, { dialect: 'seed', manifest: ON })
    expect(reportOf(result).coverage.find((c) => c.id === 'HARD-5')).toMatchObject({ status: 'evaluated' })
    expect(only('HARD-5', found(result))).toEqual([])
    expect(only('INV-37', found(result))).toEqual([])
  })

  it('flags the request that carries an oversized paste without a text/offload', async () => {
    const { events, firstChunk } = build({ offload: false })
    const result = await checkLog(events, { dialect: 'seed', manifest: ON })
    expect(only('HARD-5', found(result))).toEqual([`HARD-5@${firstChunk}`])
  })

  it('flags a spurious projection of text at or below the bound', async () => {
    const { events, offload } = build({ paste: 1984 }) // 496 + 4 = 500 tokens: not above the bound
    const result = await checkLog(events, { dialect: 'seed', manifest: ON })
    expect(only('HARD-5', found(result))).toEqual([`HARD-5@${offload}`])
  })

  it('flags a projection whose price, bound or path is not the block\'s', async () => {
    for (const edit of [
      (d: Record<string, unknown>) => { d['tokens'] = 9 },
      (d: Record<string, unknown>) => { d['bound'] = 400 },
      (d: Record<string, unknown>) => { d['path'] = 'user-text/other.0.txt' },
    ]) {
      const { events, offload } = build({ edit })
      expect(only('HARD-5', found(await checkLog(events, { dialect: 'seed', manifest: ON })))).toEqual([`HARD-5@${offload}`])
    }
  })

  it('flags a summary request whose region carries an oversized paste without a text/offload', async () => {
    const b = new LogBuilder({ route: ROUTE })
    b.header('initial')
    b.context()
    const user = b.user([text(filler('paste', 2400))], 'm-user-1') // appended between turns: no conversation request carried it
    b.user([text('and this')], 'm-user-2')
    const { summary } = b.compact({ compactionId: 'cmp-1', turn: null, shadowed: [Seq(user)], summaryText: 'A pasted log.' })
    const result = await checkLog(b.events, { dialect: 'seed', manifest: ON })
    expect(only('HARD-5', found(result))).toEqual([`HARD-5@${summary}`])
  })

  it('is not registered without the rule, where INV-37 refuses any text/offload', async () => {
    const { events, offload } = build()
    const result = await checkLog(events, { dialect: 'seed', manifest: manifest({}) })
    expect(reportOf(result).coverage.some((c) => c.id === 'HARD-5')).toBe(false)
    expect(only('INV-37', found(result))).toEqual([`INV-37@${offload}`])
    const other = await checkLog(events, { dialect: 'seed', manifest: manifest({ hardening: { openTurnPrompt: true } } as never) })
    expect(reportOf(other).coverage.some((c) => c.id === 'HARD-5')).toBe(false)
    expect(only('INV-37', found(other))).toEqual([`INV-37@${offload}`])
    const profile = await checkLog(build({ offload: false }).events, { dialect: 'seed', manifest: manifest({ profile: 'hardened' } as never) })
    expect(only('HARD-5', found(profile))).toHaveLength(1)
  })
})
