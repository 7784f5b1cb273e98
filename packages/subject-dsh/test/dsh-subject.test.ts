/**
 * The `dsh` subject (issue #7): the released official engine (0.1.0-rc.8) runs scenarios against the same mock
 * provider; its log is judged in the `dsh-0.1.0-rc.8` dialect (§14.1) with zero violations, it is byte-identical
 * across runs (seeded ids, virtual clock), overflow recovery works through the runtime's own `LlmError` with the
 * protocol code, and scenarios needing a feature the release lacks are `skipped` with the §14 rule (D-nn).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readLog } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkLog, loadScenario, resolveScenario, runScenario } from '@compaction-sim/sim'
import { DSH_DIALECT, dshSubject, dshUnsupportedReason } from '../src/index.ts'
import { REPO_ROOT, tempDir } from './support.ts'

const SMOKE = (name: string): string => join(REPO_ROOT, 'scenarios/smoke', name)
let tmp: { dir: string; cleanup: () => Promise<void> }

beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('dsh subject', () => {
  it('runs a pressure scenario through the official engine; checkLog in the rc.8 dialect finds zero violations', async () => {
    const report = await runScenario(SMOKE('basic-pressure.yaml'), { outDir: tmp.dir, cwd: REPO_ROOT, subject: dshSubject })
    expect(report.subject).toBe('dsh')
    expect(report.dialect).toBe(DSH_DIALECT)
    expect(report.status).toBe('passed')
    expect(report.counts?.brackets).toBe(1)
    // No warning: the core meter in the rc.8 dialect reproduced the official tokenMeter.measure() figure.
    expect(report.warnings).toBeUndefined()
    if (report.artifacts === undefined) throw new Error('no artifacts')
    const log = join(tmp.dir, report.artifacts.log)
    const requests = (await readFile(join(tmp.dir, report.artifacts.requests), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as never)
    const check = await checkLog(log, { dialect: DSH_DIALECT, requests })
    if (check.kind === 'input-error') throw check.error
    expect(check.violations).toEqual([])
    // The official engine writes its own bookkeeping (agent/inbox/spliced) and never a system/message (D-02).
    const types = new Set((await readLog(log, { dialect: DSH_DIALECT })).events.map((e) => e.type))
    expect(types.has('agent/inbox/spliced')).toBe(true)
    expect(types.has('system/message')).toBe(false)
    expect(types.has('compaction/summary')).toBe(true)
  })

  it('writes a byte-identical log on a second run (seeded ids, virtual clock)', async () => {
    // The real clock and UUID source as they are before the runs; the subject must put these very functions back.
    const realNow = Date.now
    const realUuid = globalThis.crypto.randomUUID
    const first = await runScenario(SMOKE('basic-pressure.yaml'), { outDir: join(tmp.dir, 'a'), cwd: REPO_ROOT, subject: dshSubject })
    const second = await runScenario(SMOKE('basic-pressure.yaml'), { outDir: join(tmp.dir, 'b'), cwd: REPO_ROOT, subject: dshSubject })
    const text = async (dir: string, file: string | undefined): Promise<string> => readFile(join(tmp.dir, dir, file ?? 'missing'), 'utf8')
    const a = await text('a', first.artifacts?.log)
    expect(a.length).toBeGreaterThan(0)
    expect(await text('b', second.artifacts?.log)).toBe(a)
    // The real clock is back outside the session: the very function (compared by identity; the clock is never read).
    expect(Date.now).toBe(realNow)
    expect(globalThis.crypto.randomUUID).toBe(realUuid)
  })

  it('recovers a provider overflow: the bridge throws the runtime LlmError with CONTEXT_WINDOW_EXCEEDED (§3.10)', async () => {
    const report = await runScenario(SMOKE('overflow-recovery.yaml'), { outDir: tmp.dir, cwd: REPO_ROOT, subject: dshSubject })
    expect(report.status).toBe('passed')
    expect(report.outcomes?.map((o) => o.kind)).toEqual(['completed', 'completed'])
    const log = await readFile(join(tmp.dir, report.artifacts?.log ?? 'missing'), 'utf8')
    expect(log).toContain('"failure":{"message":"This model\'s maximum context length is 8000 tokens.')
    expect(log).toMatch(/"code":"CONTEXT_WINDOW_EXCEEDED"/)
    const { toDshError } = await import('../src/dsh-engine.ts')
    const { LlmError } = await import('@deepseek-ai/dsh-llm')
    const err = toDshError({ message: 'too long', code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect(err).toBeInstanceOf(LlmError)
    expect([err.failure.code, err.failure.status]).toEqual(['CONTEXT_WINDOW_EXCEEDED', 400])
  })

  it('skips a scenario needing image offload with D-06; runs one expecting summary-error records, those items not evaluated (D-07, §14)', async () => {
    const offload = await runScenario(join(REPO_ROOT, 'scenarios/faults/fault-12-image-offload-required.yaml'), {
      outDir: tmp.dir, cwd: REPO_ROOT, subject: dshSubject,
    })
    expect(offload.status).toBe('skipped')
    expect(offload.skipReason).toMatch(/^D-06: /)
    const summaryError = await runScenario(join(REPO_ROOT, 'scenarios/faults/fault-20-summary-call-fails.yaml'), {
      outDir: tmp.dir, cwd: REPO_ROOT, subject: dshSubject,
    })
    // rc.8 logs the failed attempt only in compaction/end.error: the bracket still fails and the turns complete.
    expect(summaryError.status).toBe('passed')
    const notJudged = summaryError.expectations.filter((e) => e.notEvaluated !== undefined)
    expect(notJudged.map((e) => [e.name, e.notEvaluated])).toEqual([['counts.summaryErrors', 'dialect'], ['events[1]', 'dialect']])
    for (const e of notJudged) expect(e.actual).toMatch(/^not evaluated \(§14 D-07: /)
    expect(summaryError.expectations.find((e) => e.name === 'counts.failedBrackets')).toMatchObject({ passed: true, actual: '1' })
  })

  it('names D-05 for an expected header after a replacement and a harness limit (no rule) for crash faults', async () => {
    const resolved = async (file: string) => resolveScenario(await loadScenario(join(REPO_ROOT, file)), { file })
    expect(dshUnsupportedReason(await resolved('scenarios/faults/fault-01-overflow-thrown.yaml'))).toMatch(/^D-05: /)
    expect(dshUnsupportedReason(await resolved('scenarios/crash/fault-52-after-summary.yaml'))).toMatch(/harness limit/)
    expect(dshUnsupportedReason(await resolved('scenarios/smoke/no-pressure.yaml'))).toBeNull()
    // Issue #16: the §13.6/§13.7 races are a harness limit for this subject, named before any feature check.
    expect(dshUnsupportedReason(await resolved('scenarios/faults/fault-70-compact-now-during-auto-bracket.yaml'))).toMatch(/^concurrent: items .*harness limit/)
    // Issue #19 HARD-7: the volatile system prompt is rendered by the reference subject only.
    expect(dshUnsupportedReason(await resolved('scenarios/hardened-pairs/hard-7-faithful.yaml'))).toMatch(/^volatileSystemPrompt: .*harness limit/)
  })
})
