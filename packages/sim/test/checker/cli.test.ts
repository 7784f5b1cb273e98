import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { APPENDIX_B_JSONL, fixturePath } from '@compaction-sim/fixtures'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { normalise, runSim, tempDir, writeLog } from '../cli/run-sim.ts'
import { appendixB } from './support.ts'

const APPENDIX_B = fixturePath(APPENDIX_B_JSONL)

describe('sim check', () => {
  let dir = ''
  let cleanup: () => Promise<void> = async () => undefined
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir())
  })
  afterEach(async () => {
    await cleanup()
  })
  const paths = (): Record<string, string> => ({ [dir]: '<tmp>' })

  /** Appendix B with a prune shadow price that is not P_fixed (INV-21) and a series header logged as a change (INV-41). */
  async function violatingLog(name = 'bad.jsonl'): Promise<string> {
    const events = appendixB()
    const prune = events[14]
    const header = events[17]
    if (prune === undefined || header === undefined) throw new Error('Appendix B layout changed')
    prune.data['shadowedTokenCount'] = 3000
    header.data['reason'] = 'change'
    return writeLog(dir, name, events)
  }

  it('exits 0 on the Appendix B running example and says so', async () => {
    const run = await runSim(['check', APPENDIX_B])
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toBe('')
    expect(normalise(run.stdout)).toMatchInlineSnapshot(`
      "<root>/packages/fixtures/transcripts/spec/appendix-b.jsonl  seed, 67 events, policy: §3.1 defaults (no manifest)
        ok no violations
        partly evaluated: INV-39 (1 instance skipped) — no request capture: the request half of INV-39 is not evaluated
        not evaluated: INV-43, INV-44 — no request capture given (--requests)

      1 log checked, no violations
      "
    `)
  })

  it('--json prints exactly one document {"files":[{path, dialect, events, ok, policySource, violations}]}', async () => {
    const bad = await violatingLog()
    const run = await runSim(['check', '--json', APPENDIX_B, bad])
    expect(run.exitCode).toBe(1)
    const doc = JSON.parse(run.stdout) as { files: Array<Record<string, unknown>> }
    expect(Object.keys(doc)).toEqual(['files'])
    expect(doc.files.map((f) => Object.keys(f))).toEqual([
      ['path', 'dialect', 'events', 'ok', 'policySource', 'violations'],
      ['path', 'dialect', 'events', 'ok', 'policySource', 'violations'],
    ])
    expect(doc.files[0]).toEqual({ path: APPENDIX_B, dialect: 'seed', events: 67, ok: true, policySource: 'defaults', violations: [] })
    expect(doc.files[1]).toEqual({
      path: bad, dialect: 'seed', events: 67, ok: false, policySource: 'defaults',
      violations: [
        { id: 'INV-21', seq: 14, message: 'shadowedTokenCount 3000 differs from P_fixed of the projected message of #12 = 3012 (§2.6)' },
        { id: 'INV-41', seq: 17, message: 'reason change, expected series' },
      ],
    })
  })

  it('groups violations by invariant with its statement and an excerpt of the offending event; exit 1', async () => {
    const bad = await violatingLog()
    const run = await runSim(['check', bad])
    expect(run.exitCode).toBe(1)
    expect(normalise(run.stdout, paths())).toMatchInlineSnapshot(`
      "<tmp>/bad.jsonl  seed, 67 events, policy: §3.1 defaults (no manifest)
        INV-21 1 violation  Prune shadow price: shadowedTokenCount equals P_fixed of the projected message of the pruned node just before the prune.
          #14  shadowedTokenCount 3000 differs from P_fixed of the projected message of #12 = 3012 (§2.6)
                {"seq":14,"time":1700000000075,"type":"compaction/prune","data":{"shadowedRange":{"start":12,"end":12},"shadowedSeqs":[12],"shadowedTokenCount":3000}}
        INV-41 1 violation  Header canonical form and reasons: canonical headers; initial first, resume first after an end-seed, change iff different, series iff equal with an advanced epoch (or an explicit series request), startsSeries only on resume/change and iff the epoch advanced.
          #17  reason change, expected series
                {"seq":17,"time":1700000000090,"type":"request/header","data":{"header":{"config":{"provider":"mock","model":"mock-4k"},"tools":[{"name":"read","description":"…
        partly evaluated: INV-39 (1 instance skipped) — no request capture: the request half of INV-39 is not evaluated
        not evaluated: INV-43, INV-44 — no request capture given (--requests)

      1 log checked, 1 with violations or errors
      "
    `)
  })

  it('exits 2 with file:line and the reason on stderr for an unreadable log', async () => {
    const lines = (await readFile(APPENDIX_B, 'utf8')).split('\n')
    lines[9] = '{"seq":9, this is not JSON'
    const corrupt = join(dir, 'corrupt.jsonl')
    await writeFile(corrupt, lines.join('\n'))
    const run = await runSim(['check', corrupt, APPENDIX_B])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr, paths())).toMatch(/^error: <tmp>\/corrupt\.jsonl:10: not valid JSON: .*only the final line of a log may be torn/)
    const missing = await runSim(['check', join(dir, 'missing.jsonl')])
    expect(missing.exitCode).toBe(2)
    expect(normalise(missing.stderr, paths())).toContain('<tmp>/missing.jsonl: cannot read the log')
  })

  it('drops a torn final line with a warning naming file:line, and judges the rest', async () => {
    const text = await readFile(APPENDIX_B, 'utf8')
    const torn = join(dir, 'torn.jsonl')
    await writeFile(torn, text.slice(0, text.length - 40))
    const run = await runSim(['check', '--json', torn])
    expect(normalise(run.stderr, paths())).toMatch(/^warning: <tmp>\/torn\.jsonl:67: torn final line dropped/)
    const doc = JSON.parse(run.stdout) as { files: Array<{ events: number; violations: unknown[] }> }
    expect(doc.files[0]?.events).toBe(66)
    expect(run.exitCode).toBe(0)
  })

  it('finds <log>.manifest.json beside the log, and --manifest overrides it (policySource manifest)', async () => {
    const log = join(dir, 'session.jsonl')
    await copyFile(APPENDIX_B, log)
    const small = { scenario: 's', compaction: {}, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 8000 }], faults: [] }
    await writeFile(join(dir, 'session.manifest.json'), JSON.stringify(small))
    const found = JSON.parse((await runSim(['check', '--json', log])).stdout) as { files: Array<{ policySource: string; violations: Array<{ id: string }> }> }
    expect(found.files[0]?.policySource).toBe('manifest')
    expect(found.files[0]?.violations.map((v) => v.id)).toContain('INV-25')
    const given = join(dir, 'other.json')
    await writeFile(given, JSON.stringify({ ...small, routes: [{ provider: 'mock', model: 'mock-4k', contextWindow: 4000 }] }))
    const run = await runSim(['check', '--json', '--manifest', given, log])
    expect(run.exitCode).toBe(0)
    const bad = join(dir, 'bad-manifest.json')
    await writeFile(bad, JSON.stringify({ compaction: { thresholdRatio: 2 } }))
    const refused = await runSim(['check', '--manifest', bad, log])
    expect(refused.exitCode).toBe(2)
    expect(normalise(refused.stderr, paths())).toContain('<tmp>/bad-manifest.json: compaction: invalid compaction config: thresholdRatio')
  })

  it('--known-type extends the dialect\'s known log-only types (§14.1)', async () => {
    const events = [
      { seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } },
      { seq: 1, time: 2, type: 'agent/inbox/spliced', data: { n: 1 } },
      { seq: 2, time: 3, type: 'plugin/todo', data: {} },
      { seq: 3, time: 4, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
    ]
    const log = await writeLog(dir, 'rc8.jsonl', events)
    const strict = await runSim(['check', '--dialect', 'dsh-0.1.0-rc.8', '--json', log])
    expect(strict.exitCode).toBe(1)
    expect((JSON.parse(strict.stdout) as { files: Array<{ violations: Array<{ id: string; seq: number }> }> }).files[0]?.violations.map((v) => `${v.id}@${v.seq}`)).toEqual(['INV-02@2'])
    const extended = await runSim(['check', '--dialect', 'dsh-0.1.0-rc.8', '--known-type', 'plugin/todo', log])
    expect(extended.exitCode).toBe(0)
  })

  it('--help documents every flag', async () => {
    const run = await runSim(['check', '--help'])
    expect(run.exitCode).toBe(0)
    for (const flag of ['--dialect', '--manifest', '--requests', '--known-type', '--json']) expect(run.stdout).toContain(flag)
    expect(run.stdout).toContain('dsh-0.1.0-rc.8')
    expect(run.stdout).toContain('sim check <logs..>')
    expect(run.stdout.replace(/\s+/g, ' ')).toMatch(/policySource: manifest \| defaults\). Exit codes: 0 no violation, 1 any violation, 2 an unreadable log/)
  })
})
