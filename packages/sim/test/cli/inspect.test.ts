import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inspectLog } from '../../src/inspect.ts'
import { REPO_ROOT, hasAnsi, normalise, runSim, tempDir, writeLog } from './run-sim.ts'
import { TINY_EVENTS, TINY_HEADER } from './tiny-log.ts'

const APPENDIX_B = join(REPO_ROOT, 'packages/fixtures/transcripts/spec/appendix-b.jsonl')

describe('sim inspect', () => {
  let dir = ''
  let cleanup: () => Promise<void> = async () => undefined
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir())
  })
  afterEach(async () => {
    await cleanup()
  })
  const paths = (): Record<string, string> => ({ [dir]: '<tmp>' })

  it('prints the folded state of a tiny valid log as a table on stdout', async () => {
    const log = await writeLog(dir, 'tiny.jsonl', [TINY_HEADER, ...TINY_EVENTS])
    const run = await runSim(['inspect', log])
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toBe('')
    expect(normalise(run.stdout, paths())).toMatchInlineSnapshot(`
      "file               <tmp>/tiny.jsonl
      dialect            seed
      events             15
      surface            [2, 4, 9, 12] (4 nodes)
      replaceGeneration  1
      offloads           0
      series epoch       1 now, 1 at header
      request header     #11 series (mock/mock-4k)
      open turn          none
      open step          none
      open brackets      none
      last end-seed      none
      pressure           73 tokens (baseline estimated 73 + 0 surface delta)
      surface tokens     49
      budgets            none
      "
    `)
  })

  it('--json writes exactly one JSON document: the summary plus file and tornTail', async () => {
    const log = await writeLog(dir, 'tiny.jsonl', [TINY_HEADER, ...TINY_EVENTS])
    const run = await runSim(['inspect', log, '--json'])
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout)).toEqual({
      file: log,
      dialect: 'seed',
      events: 15,
      surface: [2, 4, 9, 12],
      replaceGeneration: 1,
      offloadCount: 0,
      seriesEpoch: 1,
      header: { seq: 11, reason: 'series', startsSeries: false, seriesEpochAtHeader: 1, provider: 'mock', model: 'mock-4k' },
      openTurn: null,
      openStep: null,
      openBrackets: [],
      lastEndSeed: null,
      // tools price ceil(77 / 4) + 4 = 24, plus 49 surface tokens; no usage anchor (§2.5)
      meter: { totalTokens: 73, surfaceTokens: 49, baseline: 'estimated', baselineTokens: 73, surfaceDeltaTokens: 0 },
      budgets: null,
      tornTail: null,
    })
  })

  it('inspectLog returns the same data as --json', async () => {
    const log = await writeLog(dir, 'tiny.jsonl', TINY_EVENTS)
    const run = await runSim(['inspect', log, '--json'])
    expect(await inspectLog(log, { dialect: 'seed' })).toEqual(JSON.parse(run.stdout))
  })

  it('NO_COLOR=1 disables colour even on a TTY', async () => {
    const log = await writeLog(dir, 'tiny.jsonl', TINY_EVENTS)
    const run = await runSim(['inspect', log], { env: { NO_COLOR: '1' }, isTTY: true })
    expect(run.exitCode).toBe(0)
    expect(hasAnsi(run.stdout)).toBe(false)
  })

  it('a TTY without NO_COLOR gets colour', async () => {
    const log = await writeLog(dir, 'tiny.jsonl', TINY_EVENTS)
    const run = await runSim(['inspect', log], { isTTY: true })
    expect(hasAnsi(run.stdout)).toBe(true)
  })

  it('FORCE_COLOR=1 enables colour on a pipe; --no-color wins over it', async () => {
    const log = await writeLog(dir, 'tiny.jsonl', TINY_EVENTS)
    const forced = await runSim(['inspect', log], { env: { FORCE_COLOR: '1' } })
    expect(hasAnsi(forced.stdout)).toBe(true)
    const refused = await runSim(['inspect', log, '--no-color'], { env: { FORCE_COLOR: '1' }, isTTY: true })
    expect(hasAnsi(refused.stdout)).toBe(false)
  })

  it('--json output is never coloured', async () => {
    const log = await writeLog(dir, 'tiny.jsonl', TINY_EVENTS)
    const run = await runSim(['inspect', log, '--json'], { env: { FORCE_COLOR: '3' }, isTTY: true })
    expect(hasAnsi(run.stdout)).toBe(false)
  })

  it('a corrupt middle line exits 2 naming file:line on stderr', async () => {
    const lines: Array<object | string> = [TINY_HEADER, ...TINY_EVENTS]
    lines[5] = '{"seq":4,"time":1700000000025,"type":"assistant/mess'
    const log = await writeLog(dir, 'corrupt.jsonl', lines)
    const run = await runSim(['inspect', log])
    expect(run.exitCode).toBe(2)
    expect(run.stdout).toBe('')
    expect(normalise(run.stderr, paths())).toMatch(/^error: <tmp>\/corrupt\.jsonl:6: /)
  })

  it('an invalid event exits 2 naming file:line', async () => {
    const lines: object[] = [...TINY_EVENTS]
    lines[9] = { ...(TINY_EVENTS[9] as object), surfaceOp: { op: 'replace', start: 5, end: 5 } }
    const log = await writeLog(dir, 'invalid.jsonl', lines)
    const run = await runSim(['inspect', log])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr, paths())).toMatch(/^error: <tmp>\/invalid\.jsonl:10\b/)
  })

  it('a torn final line is dropped with a warning on stderr, exit 0', async () => {
    const lines: Array<object | string> = [TINY_HEADER, ...TINY_EVENTS.slice(0, 11), '{"seq":11,"time":17000000000']
    const log = await writeLog(dir, 'torn.jsonl', lines, false)
    const run = await runSim(['inspect', log])
    expect(run.exitCode).toBe(0)
    expect(normalise(run.stderr, paths())).toMatch(/^warning: <tmp>\/torn\.jsonl:13: torn final line dropped \(.+\)\n$/)
    expect(normalise(run.stdout, paths())).toMatchInlineSnapshot(`
      "file               <tmp>/torn.jsonl
      dialect            seed
      events             11
      surface            [2, 4, 9] (3 nodes)
      replaceGeneration  1
      offloads           0
      series epoch       1 now, 0 at header
      request header     #3 initial (mock/mock-4k)
      open turn          1
      open step          turn 1 step 2
      open brackets      none
      last end-seed      none
      pressure           63 tokens (baseline estimated 37 + 26 surface delta)
      surface tokens     39
      budgets            none
      "
    `)
  })

  it('--json reports the torn tail', async () => {
    const lines: Array<object | string> = [...TINY_EVENTS.slice(0, 3), '{"seq":3,"ti']
    const log = await writeLog(dir, 'torn.jsonl', lines, false)
    const run = await runSim(['inspect', log, '--json'])
    expect(run.exitCode).toBe(0)
    const doc = JSON.parse(run.stdout) as { events: number; tornTail: { line: number; text: string } }
    expect(doc.events).toBe(3)
    expect({ line: doc.tornTail.line, text: doc.tornTail.text }).toEqual({ line: 4, text: '{"seq":3,"ti' })
  })

  it('a missing file exits 2 naming the file', async () => {
    const missing = join(dir, 'nope.jsonl')
    const run = await runSim(['inspect', missing])
    expect(run.exitCode).toBe(2)
    expect(run.stdout).toBe('')
    expect(normalise(run.stderr, paths())).toMatch(/^error: <tmp>\/nope\.jsonl\b.*\n$/)
  })

  it('an unknown required event type is refused unless declared with --known-type', async () => {
    const foreign = { seq: 15, time: 1_700_000_000_080, type: 'todo/update', data: { items: [] } }
    const log = await writeLog(dir, 'foreign.jsonl', [...TINY_EVENTS, foreign])
    const refused = await runSim(['inspect', log])
    expect(refused.exitCode).toBe(2)
    expect(normalise(refused.stderr, paths())).toMatch(/^error: <tmp>\/foreign\.jsonl:16\b/)
    const accepted = await runSim(['inspect', log, '--known-type', 'todo/update', '--json'])
    expect(accepted.exitCode).toBe(0)
    expect((JSON.parse(accepted.stdout) as { events: number }).events).toBe(16)
  })

  it('the spec running example (Appendix B) ends with surface [2, 55, 47, 49, 64] and replaceGeneration 2', async () => {
    const run = await runSim(['inspect', APPENDIX_B])
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toBe('')
    expect(normalise(run.stdout)).toMatchInlineSnapshot(`
      "file               <root>/packages/fixtures/transcripts/spec/appendix-b.jsonl
      dialect            seed
      events             67
      surface            [2, 55, 47, 49, 64] (5 nodes)
      replaceGeneration  2
      offloads           2
      series epoch       4 now, 4 at header
      request header     #58 series (mock/mock-4k)
      open turn          none
      open step          none
      open brackets      none
      last end-seed      none
      pressure           2286 tokens (baseline estimated 2286 + 0 surface delta)
      surface tokens     2240
      budgets            window 4000, threshold 3200, retain 640 (defaults)
      "
    `)
  })
})
