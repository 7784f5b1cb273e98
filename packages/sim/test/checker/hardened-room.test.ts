/**
 * HARD-2 (hardened `summaryRoom`, issue #19, `src/checker/hardened-room.ts`) on hand-edited Appendix B logs. The
 * bracket #51 … #56 has its summary at #54 with `maxTokens: 8192` on the 4,000-token route mock/mock-4k (the
 * running example's cap above its own window). The reference prompt price is computed here with the core meter.
 */
import {
  EventLog, INSTRUCTION_TOKENS, TokenMeter, toolsPrice, type LogEvent, type RunManifest,
} from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, found, reportOf } from './support.ts'

function manifest(compaction: RunManifest['compaction']): RunManifest {
  return { scenario: 'hardened-room', compaction, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }], faults: [] }
}

const ROOM = { hardening: { summaryRoom: true } } as never
const hard2 = (ids: string[]): string[] => ids.filter((v) => v.startsWith('HARD-2@'))

/** The summary prompt price of #54's span, priced by the core meter over #0 … #53 (the offload at #53 applied). */
function referencePrompt(events: ReturnType<typeof appendixB>): number {
  const log = EventLog.fromEvents(events.slice(0, 54) as unknown as LogEvent[], { dialect: 'seed' })
  const nodes = new TokenMeter(log, { dialect: 'seed' }).measure().nodes
  const summary = events[54] as unknown as { data: { shadowedSeqs: number[] } }
  let sum = toolsPrice(log.state.header?.header.tools) + INSTRUCTION_TOKENS + (nodes[0]?.tokens ?? 0)
  for (const seq of summary.data.shadowedSeqs) sum += nodes.find((n) => n.seq === seq)?.tokens ?? Number.NaN
  return sum
}

/** Appendix B with #54's cap and `summaryRoom` replaced. */
function withRoom(maxTokens: number, room: Record<string, number>): ReturnType<typeof appendixB> {
  const events = appendixB()
  const summary = events[54] as { type: string; data: Record<string, unknown> }
  expect(summary.type).toBe('compaction/summary')
  const { usage, ...rest } = summary.data
  summary.data = { ...rest, maxTokens, summaryRoom: room, usage }
  return events
}

describe('HARD-2 — room for the summary call', () => {
  it('is listed only when summaryRoom is on (alone or under profile hardened)', async () => {
    const ids = async (c: RunManifest['compaction']): Promise<boolean> =>
      reportOf(await checkLog(appendixB(), { dialect: 'seed', manifest: manifest(c) })).coverage.some((x) => x.id === 'HARD-2')
    expect(await ids({})).toBe(false)
    expect(await ids({ hardening: { openTurnPrompt: true } } as never)).toBe(false)
    expect(await ids(ROOM)).toBe(true)
    expect(await ids({ profile: 'hardened' } as never)).toBe(true)
  })

  it('skips a summary without a summaryRoom record (the engine knew no limits)', async () => {
    const result = await checkLog(appendixB(), { dialect: 'seed', manifest: manifest(ROOM) })
    expect(hard2(found(result))).toEqual([])
    expect(reportOf(result).coverage.find((c) => c.id === 'HARD-2')?.status).toBe('partial')
  })

  it('reports the running example: 8192 on the 4,000-token window (prompt + maxTokens over the window)', async () => {
    const prompt = referencePrompt(appendixB())
    const result = await checkLog(withRoom(8192, { promptTokens: prompt, contextWindow: 4000 }), { dialect: 'seed', manifest: manifest(ROOM) })
    expect(hard2(found(result))).toEqual(['HARD-2@54'])
    const v = reportOf(result).violations.find((x) => x.id === 'HARD-2')
    expect(v?.message).toBe(`the priced summary prompt ${prompt} + maxTokens 8192 = ${prompt + 8192} > the summary route's window 4000`)
  })

  it('passes the clamped cap: window − prompt, with the configured 8192 recorded', async () => {
    const prompt = referencePrompt(appendixB())
    const events = withRoom(4000 - prompt, { configuredMaxTokens: 8192, promptTokens: prompt, contextWindow: 4000 })
    const result = await checkLog(events, { dialect: 'seed', manifest: manifest(ROOM) })
    expect(hard2(found(result))).toEqual([])
    const over = withRoom(4001 - prompt, { configuredMaxTokens: 8192, promptTokens: prompt, contextWindow: 4000 })
    expect(hard2(found(await checkLog(over, { dialect: 'seed', manifest: manifest(ROOM) })))).toEqual(['HARD-2@54'])
  })

  it('reports a cap above the route output limit, a wrong promptTokens and a configuredMaxTokens without a clamp', async () => {
    const prompt = referencePrompt(appendixB())
    const output = withRoom(900, { configuredMaxTokens: 8192, promptTokens: prompt, contextWindow: 4000, maxOutputTokens: 800 })
    const r1 = reportOf(await checkLog(output, { dialect: 'seed', manifest: manifest(ROOM) }))
    expect(r1.violations.filter((v) => v.id === 'HARD-2').map((v) => `${v.seq}: ${v.message}`))
      .toEqual(['54: maxTokens 900 > the summary route\'s output limit 800'])
    const priced = withRoom(500, { configuredMaxTokens: 8192, promptTokens: prompt - 1, contextWindow: 4000 })
    const r2 = reportOf(await checkLog(priced, { dialect: 'seed', manifest: manifest(ROOM) }))
    expect(r2.violations.filter((v) => v.id === 'HARD-2').map((v) => v.message))
      .toEqual([`summaryRoom.promptTokens ${prompt - 1} differs from the summary prompt's reference price ${prompt} (P_route)`])
    const unclamped = withRoom(500, { configuredMaxTokens: 500, promptTokens: prompt, contextWindow: 4000 })
    const r3 = reportOf(await checkLog(unclamped, { dialect: 'seed', manifest: manifest(ROOM) }))
    expect(r3.violations.filter((v) => v.id === 'HARD-2').map((v) => v.seq)).toEqual([54])
  })
})
