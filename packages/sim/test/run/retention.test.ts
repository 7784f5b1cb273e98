/**
 * Retention probes and the scorer (issue #20). Matching: exact, normalized and regex entries; an absolute path
 * stays a substring. The generator: `probes: 0` changes nothing, `probes: n` plants n probes whose expected
 * strings are in the transcript. A small inline scenario: a probe's planting, visibility after the one cycle,
 * `unplanted`, bad probe input as a ScenarioError. Then the done-when of the issue: the 300-turn session of
 * `scenarios/retention/probes-300.yaml` (≥ 40 planted probes) reports a curve over ≥ 5 cycles per kind, and the
 * same session under the `forgets-paths` summarizer (`forgets-paths.yaml`) shows artifact retention at 0 once
 * an artifact is compacted, while the other kinds hold.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateCodingSession, planProbes, Prng, PROBE_KINDS } from '@compaction-sim/fixtures'
import { renderMarkdown } from '../../src/report/markdown.ts'
import { renderPretty } from '../../src/report/pretty.ts'
import type { ScenarioReport, ScenarioRetention } from '../../src/report/types.ts'
import { validateRunReport } from '../../src/report/validate.ts'
import { normalizeProbeText, probeVisible } from '../../src/run/retention.ts'
import { runScenario, runScenarios } from '../../src/run/run-scenario.ts'
import { isRegexEntry, resolveProbes, type ResolvedProbe } from '../../src/scenario/resolve-probes.ts'
import type { ScenarioIssue } from '../../src/scenario/errors.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'
import { reportOf } from '../report/sample-report.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => {
  tmp = await tempDir()
})
afterAll(async () => {
  await tmp.cleanup()
})

function probe(expect: string | string[], match: 'exact' | 'normalized' = 'exact'): ResolvedProbe {
  const issues: ScenarioIssue[] = []
  const [resolved] = resolveProbes([{ kind: 'recall', expect, match }], issues)
  if (resolved === undefined || issues.length > 0) throw new Error(JSON.stringify(issues))
  return resolved
}

describe('probe matching', () => {
  it('exact is a verbatim substring; normalized ignores case, punctuation and spacing at word boundaries', () => {
    expect(probeVisible(probe('Port 5433'), 'the staging port 5433')).toBe(false)
    expect(probeVisible(probe('port 5433'), 'the staging port 5433.')).toBe(true)
    expect(probeVisible(probe('Port 5433', 'normalized'), 'the staging PORT:\n 5433.')).toBe(true)
    expect(probeVisible(probe('port 54', 'normalized'), 'port 5433')).toBe(false) // whole words only
    expect(normalizeProbeText('  Ｓrc/Foo.TS — ok ')).toBe('src foo ts ok')
  })

  it('every expected string must match; /source/flags is a regex, an absolute path a substring', () => {
    expect(probeVisible(probe(['queue consumer', 'idempotent']), 'a queue consumer: retries stay idempotent')).toBe(true)
    expect(probeVisible(probe(['queue consumer', 'idempotent']), 'a queue consumer')).toBe(false)
    expect(probeVisible(probe('/ENOENT.*tenant-\\d+\\.json/i'), "enoent: open 'tenant-42.json'")).toBe(true)
    expect(isRegexEntry('/ENOENT/i')).toBe(true)
    expect(isRegexEntry('/home/me/app.ts')).toBe(false)
    expect(probeVisible(probe('/home/me/app.ts'), 'edited /home/me/app.ts')).toBe(true)
  })

  it('resolves defaults and refuses a repeated id and a bad regex at their JSON paths', () => {
    const issues: ScenarioIssue[] = []
    const out = resolveProbes([
      { kind: 'artifact', expect: 'a.ts' }, { id: 'x', kind: 'decision', expect: ['/(/'] }, { id: 'x', kind: 'recall', expect: 'b' },
    ], issues)
    expect(out.map((p) => [p.id, p.match])).toEqual([['artifact-1', 'exact'], ['x', 'exact'], ['x', 'exact']])
    expect(issues.map((i) => i.path)).toEqual(['/probes/1/expect/0', '/probes/2/id'])
  })
})

describe('planted probes (coding-session `probes`)', () => {
  it('`probes: 0` leaves the transcript unchanged; `probes: n` plants n probes stated in the transcript', () => {
    const params = { turns: 40, stepsPerTurn: [1, 2] as const, reasoningChance: 0 }
    expect(generateCodingSession({ ...params, probes: 0 }, 9)).toEqual(generateCodingSession(params, 9))
    const planted = generateCodingSession({ ...params, probes: 16 }, 9)
    const plain = generateCodingSession(params, 9)
    expect(planted.probes?.map((p) => p.kind)).toEqual(Array.from({ length: 16 }, (_, k) => PROBE_KINDS[k % 4]))
    const text = JSON.stringify(planted.turns)
    const count = (e: string): number => text.split(JSON.stringify(e).slice(1, -1)).length - 1
    for (const p of planted.probes ?? []) {
      expect(count(p.expect[0] ?? ''), p.id).toBe(1) // the tagged string is unique; a reason may recur
      for (const e of p.expect) expect(count(e), p.id).toBeGreaterThanOrEqual(1)
    }
    // Only the planted sentences differ: the same turns, steps and tool calls.
    expect(planted.turns.map((t) => t.steps.length)).toEqual(plain.turns.map((t) => t.steps.length))
  })

  it('spreads kinds and turns evenly and gives every probe a distinct tag', () => {
    const plan = planProbes(new Prng(5), 300, 48)
    expect(plan.map((p) => p.probe.turn)).toEqual(plan.map((p) => p.probe.turn).sort((a, b) => a - b))
    expect(plan[0]?.probe.turn).toBe(4)
    expect(plan.at(-1)?.probe.turn).toBe(297)
    expect(new Set(plan.map((p) => p.probe.expect[0])).size).toBe(48)
  })
})

const FILLER = 'The suite covers the parser, the cache and the router; nothing else changed in this step. '.repeat(40)
const INLINE = `name: probe-inline
seed: 1
provider: { wire: openai, model: m, contextWindow: 100000 }
policy: { retainTokens: 0 }
manual: [{ action: compactNow, afterTurn: 2 }]
transcript:
  inline:
    turns:
      - { user: 'The staging DB listens on port 5433.', steps: [{ reply: 'Noted. ${FILLER}' }] }
      - { user: 'Please edit src/app/main.ts next.', steps: [{ reply: 'Edited src/app/main.ts. ${FILLER}' }] }
      - { user: 'Thanks, that is all.', steps: [{ reply: 'You are welcome.' }] }
`

describe('scoring an inline session', () => {
  it('finds where each probe is stated, scores it after each cycle and lists probes never stated', async () => {
    const file = join(tmp.dir, 'inline.yaml')
    await writeFile(file, `${INLINE}probes:
  - { id: port, kind: recall, expect: 'PORT 5433', match: normalized }
  - { id: path, kind: artifact, expect: src/app/main.ts }
  - { id: never, kind: decision, expect: [queue consumer] }
`)
    const report = await runScenario(file, { outDir: join(tmp.dir, 'inline') })
    expect(report.status, report.error).toBe('passed')
    const r = report.retention
    expect(r?.probes).toBe(3)
    expect(r?.cycles).toBe(1)
    expect(r?.unplanted).toEqual(['never'])
    const point = r?.points[0]
    expect(point?.recall).toMatchObject({ planted: 1, compacted: 1 })
    expect(point?.artifact).toMatchObject({ planted: 1, compacted: 1 })
    expect(point?.decision).toEqual({ planted: 0, visible: 0, share: null, compacted: 0, kept: 0, keptShare: null })
    // The builtin checkpoint keeps the user's first lines and every path: both probes survive the cycle.
    expect(point?.recall.keptShare).toBe(1)
    expect(point?.artifact.keptShare).toBe(1)
    expect(r?.lost).toEqual([])
  })

  it('a scenario without probes gets no retention section', async () => {
    const file = join(tmp.dir, 'no-probes.yaml')
    await writeFile(file, INLINE)
    const report = await runScenario(file, { outDir: join(tmp.dir, 'plain') })
    expect(report.status).toBe('passed')
    expect('retention' in report).toBe(false)
  })

  it('a bad regex is an input error naming the file and field', async () => {
    const file = join(tmp.dir, 'bad.yaml')
    await writeFile(file, `${INLINE}probes: [{ kind: recall, expect: ['/(/'] }]\n`)
    const report = await runScenario(file, { outDir: join(tmp.dir, 'bad') })
    expect(report.status).toBe('error')
    expect(report.errorKind).toBe('input')
    expect(report.error).toContain('/probes/0/expect/0')
  })
})

/** The `retention` section of a report, asserted present. */
function retentionOfReport(report: ScenarioReport | undefined): ScenarioRetention {
  expect(report?.status, report?.error).toBe('passed')
  const r = report?.retention
  if (r === undefined) throw new Error('no retention section')
  return r
}

describe('done-when: a 300-turn session, builtin vs forgets-paths', () => {
  it('reports a curve over ≥ 5 cycles per kind; without paths artifacts fall to 0 and the rest hold', async () => {
    const files = ['probes-300.yaml', 'forgets-paths.yaml'].map((f) => join(REPO_ROOT, 'scenarios/retention', f))
    const run = await runScenarios(files, { outDir: join(tmp.dir, 'done-when'), cwd: REPO_ROOT })
    expect(validateRunReport(run)).toEqual([])
    const [builtin, forgetful] = run.scenarios.map(retentionOfReport)
    if (builtin === undefined || forgetful === undefined) throw new Error('two reports expected')
    for (const r of [builtin, forgetful]) {
      expect(r.probes - r.unplanted.length).toBeGreaterThanOrEqual(40)
      expect(r.unplanted).toEqual([])
      expect(r.cycles).toBeGreaterThanOrEqual(5)
      for (const kind of r.kinds) {
        expect(kind.planted).toBeGreaterThanOrEqual(10)
        expect(kind.curve.length).toBe(r.cycles)
        expect(kind.curve.filter((s) => s !== null).length).toBeGreaterThanOrEqual(5)
      }
    }
    const kept = (r: ScenarioRetention, kind: string): Array<number | null> => r.kinds.find((k) => k.kind === kind)?.keptCurve ?? []
    // The builtin checkpoint keeps paths: compacted artifacts stay visible in some cycles.
    expect(kept(builtin, 'artifact').some((s) => s !== null && s > 0)).toBe(true)
    // forgets-paths: once an artifact is compacted, it is gone — every cycle, from the first compacted one on.
    const artifact = kept(forgetful, 'artifact').filter((s) => s !== null)
    expect(artifact.length).toBeGreaterThanOrEqual(5)
    expect(artifact.every((s) => s === 0)).toBe(true)
    expect(forgetful.kinds.find((k) => k.kind === 'artifact')?.final).toBeLessThan(0.25)
    // … while recall, continuation and decision hold: every cycle keeps at least 80 % of them, and the last one at
    // least as many as the builtin summarizer does (its checkpoint, paths dropped, leaves room for the rest).
    const final = (r: ScenarioRetention, kind: string): number => r.kinds.find((k) => k.kind === kind)?.final ?? -1
    for (const kind of ['recall', 'continuation', 'decision']) {
      const curve = kept(forgetful, kind).filter((s) => s !== null)
      expect(curve.length, kind).toBeGreaterThanOrEqual(5)
      expect(Math.min(...curve), kind).toBeGreaterThanOrEqual(0.8)
      expect(final(forgetful, kind), kind).toBeGreaterThanOrEqual(final(builtin, kind))
    }
    // Reported in the markdown and terminal reports.
    const md = renderMarkdown(run)
    expect(md).toContain('## Retention')
    expect(md).toMatch(/\| cycle \| turn \| recall \(kept\) \| artifact \(kept\) \|/)
    expect(renderPretty(reportOf(run.scenarios), { color: false, ci: true })).toMatch(/retention=recall:\d+%,artifact:\d+%/)
  }, 600_000)
})
