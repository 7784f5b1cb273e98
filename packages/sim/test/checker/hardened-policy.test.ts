/**
 * HARD-1, HARD-3 and HARD-4 (issue #19, `src/checker/hardened-policy.ts`) on hand-edited Appendix B logs: each
 * check is listed only when the manifest's `compaction` turns its rule on, and reports the log that breaks it.
 * Appendix B's pressure bracket is #51 … #56 (summary #54, checkpoint #55) in the pre-step window of step 3.2.
 */
import type { LogEvent, RunManifest } from '@compaction-sim/core'
import { appendixBEvents, removeEvents } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { reportOf } from './support.ts'

function manifest(compaction: RunManifest['compaction']): RunManifest {
  return { scenario: 'hardened-checker', compaction, routes: [], faults: [] }
}

async function run(events: readonly LogEvent[], compaction: RunManifest['compaction']) {
  return reportOf(await checkLog([...events], { dialect: 'seed', manifest: manifest(compaction) }))
}

function hard(r: Awaited<ReturnType<typeof run>>, id: string): string[] {
  return r.violations.filter((v) => v.id === id).map((v) => `${v.seq}: ${v.message}`)
}

function listed(r: Awaited<ReturnType<typeof run>>): string[] {
  return r.coverage.map((c) => c.id).filter((id) => id.startsWith('HARD-'))
}

/** Appendix B with its pressure bracket failed (summary and checkpoint removed, an error on the end). */
function failedBracket(): LogEvent[] {
  const events = appendixBEvents() as LogEvent[]
  expect(events.slice(51, 57).map((e) => e.type)).toEqual([
    'compaction/start', 'compaction/summary-error', 'image/offload', 'compaction/summary', 'user/message', 'compaction/end',
  ])
  const cut = removeEvents(events, [54, 55]) as LogEvent[]
  const end = cut[54] as LogEvent & { data: Record<string, unknown> }
  expect(end.type).toBe('compaction/end')
  cut[54] = { ...end, data: { ...end.data, error: 'summary is not smaller than the shadowed content' } } as LogEvent
  return cut
}

/** `failedBracket()` with a second failed pressure bracket right after the first, in the next pre-step window. */
function twoFailedBrackets(): LogEvent[] {
  const events = failedBracket()
  // The next pre-step window opens at the first step/end after the failed bracket; put a copy of it there.
  const at = events.findIndex((e, i) => i > 54 && e.type === 'step/end') + 1
  expect(at).toBeGreaterThan(55)
  const start = events[51] as LogEvent & { data: Record<string, unknown> }
  const end = events[54] as LogEvent & { data: Record<string, unknown> }
  const turn = start.data['turn']
  const copies = [
    { ...start, data: { compactionId: 'cmp-again', turn } },
    { ...end, data: { compactionId: 'cmp-again', turn, error: 'summary is not smaller than the shadowed content' } },
  ] as LogEvent[]
  const out = [...events.slice(0, at), ...copies, ...events.slice(at)]
  return out.map((e, seq) => ({ ...e, seq, time: e.time }) as LogEvent)
}

describe('hardened checks are listed only under their rule', () => {
  it('a faithful manifest lists no HARD check; profile hardened lists HARD-1, HARD-2, HARD-3, HARD-4, HARD-5, HARD-6, HARD-7, HARD-8', async () => {
    const events = appendixBEvents() as LogEvent[]
    expect(listed(await run(events, {}))).toEqual([])
    expect(listed(await run(events, { profile: 'hardened' }))).toEqual(['HARD-1', 'HARD-2', 'HARD-3', 'HARD-4', 'HARD-5', 'HARD-6', 'HARD-7', 'HARD-8'])
    expect(listed(await run(events, { hardening: { meteredRelief: true } }))).toEqual(['HARD-4'])
  })
})

describe('HARD-1 failure back-off', () => {
  it('HARD-1: a second failed pressure bracket one pre-step later with the surface barely grown is reported', async () => {
    const events = twoFailedBrackets()
    expect(hard(await run(events, { hardening: { failureBackoff: true } }), 'HARD-1')).toEqual([
      expect.stringMatching(/^\d+: pressure bracket after the failed one ending #54 with the surface grown by \d+ < 512 tokens and replaceGeneration unchanged$/),
    ])
  })

  it('HARD-1: with minGrowthTokens 0 the same retry breaks the back-off only when baseSteps asks for a skipped pre-step', async () => {
    const events = twoFailedBrackets()
    expect(hard(await run(events, { hardening: { failureBackoff: { minGrowthTokens: 0, baseSteps: 0 } } }), 'HARD-1')).toEqual([])
    expect(hard(await run(events, { hardening: { failureBackoff: { minGrowthTokens: 0, baseSteps: 1 } } }), 'HARD-1')).toEqual([
      expect.stringMatching(/pressure bracket after 0 skipped pre-step\(s\) since the failed one ending #54; back-off after 1 consecutive failure\(s\) is 1$/),
    ])
  })

  it('HARD-1: one failed bracket alone is clean', async () => {
    expect(hard(await run(failedBracket(), { hardening: { failureBackoff: true } }), 'HARD-1')).toEqual([])
  })
})

describe('HARD-3 checkpoint budget', () => {
  it('HARD-3: Appendix B\'s checkpoint fits a zero margin but not a margin of the whole threshold', async () => {
    const events = appendixBEvents() as LogEvent[]
    expect(hard(await run(events, { hardening: { checkpointBudget: { marginTokens: 0 } } }), 'HARD-3')).toEqual([])
    expect(hard(await run(events, { hardening: { checkpointBudget: { marginTokens: 3200, reliefRatio: 0 } } }), 'HARD-3')).toEqual([
      expect.stringMatching(/^55: checkpoint priced \d+ > budget -\d+ \(threshold 3200 − envelope \d+ − retained \d+ − margin 3200\)$/),
    ])
  })

  it('HARD-3: an over-budget checkpoint at most reliefRatio of what it shadows is relief, not reported', async () => {
    const events = appendixBEvents() as LogEvent[]
    // Appendix B's checkpoint costs less than its span at the route's prices, so reliefRatio 1 admits it under any
    // margin; 0 never does.
    expect(hard(await run(events, { hardening: { checkpointBudget: { marginTokens: 3200, reliefRatio: 1 } } }), 'HARD-3')).toEqual([])
    expect(hard(await run(events, { hardening: { checkpointBudget: { marginTokens: 3200, reliefRatio: 0 } } }), 'HARD-3')).toHaveLength(1)
  })
})

describe('HARD-4 metered relief', () => {
  it('HARD-4: a checkpoint dearer than what it shadows at the route prices is reported; Appendix B\'s is clean', async () => {
    const events = appendixBEvents() as LogEvent[]
    expect(hard(await run(events, { hardening: { meteredRelief: true } }), 'HARD-4')).toEqual([])
    const checkpoint = events[55] as LogEvent & { data: Record<string, unknown> }
    const big = [{ type: 'text', text: 'w'.repeat(40_000) }]
    const edited = events.map((e) => (e.seq === 55 ? { ...checkpoint, data: { ...checkpoint.data, content: big } } : e)) as LogEvent[]
    expect(hard(await run(edited, { hardening: { meteredRelief: true } }), 'HARD-4')).toEqual([
      expect.stringMatching(/^55: checkpoint priced 10008 route tokens ≥ the \d+ route tokens of the \d+ node\(s\) it shadows$/),
    ])
    expect(listed(await run(edited, {}))).toEqual([])
  })
})
