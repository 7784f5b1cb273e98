/**
 * HARD-2 (hardened `summaryRoom`, `src/checker/hardened-room.ts`) on small built logs: route mock/mock-1k with a
 * 1,000-token window, no tools and no system head, two user messages "abcd" (#2) and "efgh" (#3), each priced
 * ceil(4/4) + 4 + 4 = 9 (§2.2), and a manual bracket #4 … #7 shadowing #2 with its summary at #5. The summary
 * prompt's reference price (P_route) is tools 0 + instruction 450 (§8, COMPACTION_INSTRUCTION) + #2's 9 = 459;
 * no system head is added when position 0 is no system/message. Every expectation is written out by hand. It pins:
 * - the prompt price: no system-head term without a system head, a shadowed node at position 0 counts, a
 *   shadowed seq that is not a live node makes the prompt unpriced (no judgement), a log without a header;
 * - the world's output limit of the summary model (violation message, `>` not `≥`, a null limit and an unknown
 *   model are no limit), also on `compaction/summary-error`;
 * - the skip of a dispatched summary without a `summaryRoom` record (and no skip when nothing was dispatched);
 * - the configured-cap clamp message, the route output limit (`>`), and that a record without either passes.
 */
import { Seq, type LogEvent, type RunManifest } from '@compaction-sim/core'
import { LogBuilder } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckOptions } from '../../src/checker/run.ts'
import type { WorldRecord } from '../../src/provider/world-record.ts'
import { reportOf, violationLines } from './support.ts'

const ROUTE = { provider: 'mock', model: 'mock-1k', contextWindow: 1000 }
const MANIFEST: RunManifest = { scenario: 'hardened-room-mutants', compaction: { hardening: { summaryRoom: true } } as never, routes: [ROUTE], faults: [] }

type Data = Record<string, unknown>

/** header #0, context #1, users #2/#3, bracket #4 … #7 over [#2] (summary #5); `edit` rewrites the summary data. */
function build(edit: (d: Data) => void, options: { header?: boolean; error?: boolean } = {}): LogEvent[] {
  const b = new LogBuilder({ route: ROUTE })
  if (options.header !== false) b.header('initial')
  b.context()
  const u1 = b.user('abcd', 'm-u1')
  b.user('efgh', 'm-u2')
  if (options.error === true) {
    b.start('cmp-1', null)
    b.summaryError('cmp-1', [Seq(u1)], { message: 'server error', code: 'SERVER' })
    b.end('cmp-1', null, { error: 'server error' })
  } else {
    b.compact({ compactionId: 'cmp-1', turn: null, shadowed: [Seq(u1)], summaryText: 'S.' })
  }
  const summary = b.events.find((e) => e.type === 'compaction/summary' || e.type === 'compaction/summary-error') as unknown as { data: Data }
  edit(summary.data)
  return b.events
}

const room = (maxTokens: number | undefined, r: Data | undefined) => (d: Data): void => {
  if (maxTokens === undefined) delete d['maxTokens']
  else d['maxTokens'] = maxTokens
  if (r === undefined) delete d['summaryRoom']
  else d['summaryRoom'] = r
}

function world(maxOutputTokens: number | null, model = 'mock-1k'): WorldRecord {
  return {
    schemaVersion: 1, kind: 'compaction-sim/world-record', wire: 'openai', captureOffset: 0, logOffset: 0,
    routes: [{ model, wire: 'openai', contextWindow: 1000, maxOutputTokens, imageTokens: null, usage: 'reported', prices: { id: 'p', input: 1, cacheRead: 0, output: 1 } }],
    requests: [],
  } as never
}

/** HARD-2's violation lines and coverage (a check that throws fails the test: no internal error is expected). */
async function hard2(events: LogEvent[], extra: Partial<CheckOptions> = {}): Promise<{ lines: string[]; coverage: unknown }> {
  const r = reportOf(await checkLog(events, { dialect: 'seed', manifest: MANIFEST, ...extra }))
  const c = r.coverage.find((x) => x.id === 'HARD-2')
  expect(r.internalErrors).toEqual([])
  return { lines: violationLines(r, 'HARD-2'), coverage: c === undefined ? undefined : { status: c.status, skipped: c.skipped } }
}

const EVALUATED = { status: 'evaluated', skipped: 0 }

describe('HARD-2 — the summary prompt price', () => {
  it('prices tools + instruction + the shadowed nodes, with no system-head term when position 0 is a user message', async () => {
    expect(await hard2(build(room(541, { promptTokens: 459, contextWindow: 1000 })))).toEqual({ lines: [], coverage: EVALUATED })
    expect((await hard2(build(room(541, { promptTokens: 468, contextWindow: 1000 })))).lines)
      .toEqual(['HARD-2@5: summaryRoom.promptTokens 468 differs from the summary prompt\'s reference price 459 (P_route)'])
  })

  it('prices a shadowed node at position 0 (prompt + maxTokens one over the window)', async () => {
    expect((await hard2(build(room(542, { promptTokens: 459, contextWindow: 1000 })))).lines)
      .toEqual(['HARD-2@5: the priced summary prompt 459 + maxTokens 542 = 1001 > the summary route\'s window 1000'])
  })

  it('does not judge a summary whose span names a seq that is not a live node', async () => {
    const events = build((d) => { room(1, { promptTokens: 1, contextWindow: 1000 })(d); d['shadowedSeqs'] = [2, 1] })
    expect((await hard2(events)).lines).toEqual([])
  })

  it('prices a log without a request/header (no tools)', async () => {
    const events = build(room(541, { promptTokens: 459, contextWindow: 1000 }), { header: false })
    expect(await hard2(events)).toEqual({ lines: [], coverage: EVALUATED })
  })
})

describe('HARD-2 — the world\'s output limit of the summary route', () => {
  it('reports maxTokens above the world route\'s maxOutputTokens', async () => {
    expect(await hard2(build(room(8192, undefined)), { world: world(500) })).toEqual({
      lines: ['HARD-2@5: the summary request asked maxTokens 8192 > 500, the output limit the world gives route mock-1k'],
      coverage: EVALUATED,
    })
    expect((await hard2(build(room(501, { promptTokens: 459, contextWindow: 1000 })), { world: world(500) })).lines)
      .toEqual(['HARD-2@5: the summary request asked maxTokens 501 > 500, the output limit the world gives route mock-1k'])
  })

  it('passes maxTokens equal to or below the world limit, a null limit and a model the world does not know', async () => {
    const ok = build(room(500, { promptTokens: 459, contextWindow: 1000 }))
    expect(await hard2(ok, { world: world(500) })).toEqual({ lines: [], coverage: EVALUATED })
    const below = build(room(400, { promptTokens: 459, contextWindow: 1000 }))
    expect(await hard2(below, { world: world(500) })).toEqual({ lines: [], coverage: EVALUATED })
    const fits = build(room(541, { promptTokens: 459, contextWindow: 1000 }))
    expect(await hard2(fits, { world: world(null) })).toEqual({ lines: [], coverage: EVALUATED })
    expect(await hard2(fits, { world: world(500, 'other-model') })).toEqual({ lines: [], coverage: EVALUATED })
  })

  it('judges compaction/summary-error too', async () => {
    expect((await hard2(build(room(8192, undefined), { error: true }), { world: world(500) })).lines)
      .toEqual(['HARD-2@5: the summary request asked maxTokens 8192 > 500, the output limit the world gives route mock-1k'])
  })
})

describe('HARD-2 — the summaryRoom record', () => {
  it('skips a dispatched summary without a summaryRoom record, with its reason', async () => {
    const r = reportOf(await checkLog(build(room(8192, undefined)), { dialect: 'seed', manifest: MANIFEST }))
    expect(violationLines(r, 'HARD-2')).toEqual([])
    expect(r.coverage.find((x) => x.id === 'HARD-2')).toMatchObject({ status: 'partial', skipped: 1 })
    expect(r.coverage.find((x) => x.id === 'HARD-2')?.reason).toContain('no summaryRoom record: the summary route\'s limits were not known to the engine')
  })

  it('neither skips nor judges a summary with no maxTokens (nothing was dispatched)', async () => {
    expect(await hard2(build(room(undefined, undefined)))).toEqual({ lines: [], coverage: EVALUATED })
  })

  it('reports a configuredMaxTokens with a cap not clamped below it', async () => {
    expect((await hard2(build(room(8192, { configuredMaxTokens: 8192, promptTokens: 459, contextWindow: 1000 })))).lines)
      .toEqual(['HARD-2@5: configuredMaxTokens 8192 is recorded, but the cap sent (8192) was not clamped below it'])
  })

  it('reports maxTokens above the recorded output limit, and passes it at or below the limit', async () => {
    expect((await hard2(build(room(501, { promptTokens: 459, contextWindow: 1000, maxOutputTokens: 500 })))).lines)
      .toEqual(['HARD-2@5: maxTokens 501 > the summary route\'s output limit 500'])
    expect(await hard2(build(room(500, { promptTokens: 459, contextWindow: 1000, maxOutputTokens: 500 })))).toEqual({ lines: [], coverage: EVALUATED })
    expect(await hard2(build(room(400, { promptTokens: 459, contextWindow: 1000, maxOutputTokens: 500 })))).toEqual({ lines: [], coverage: EVALUATED })
  })
})
