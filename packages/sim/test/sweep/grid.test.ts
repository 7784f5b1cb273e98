/**
 * Issue #10 grid: ranges and lists expand in a fixed ascending order, cells come in (window, pruner on/off,
 * threshold, retain) order, a combination breaking §3.2 rule 7 is kept as an invalid cell with the core's
 * reason, and a malformed grid file is an input error (exit 2) naming `file:line:column`.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/cli/exit-codes.ts'
import { gridCells, gridFromFlags, parseGrid, parseNumberList } from '../../src/sweep/grid.ts'
import { inShard, parseShard, shardOf } from '../../src/sweep/shard.ts'
import { normalise, runSim, tempDir } from '../cli/run-sim.ts'

describe('sweep grid', () => {
  it('expands from:to:step ranges inclusively without float drift', () => {
    expect(parseNumberList('0.6:0.9:0.1')).toEqual([0.6, 0.7, 0.8, 0.9])
    expect(parseNumberList('0.05:0.3:0.05')).toEqual([0.05, 0.1, 0.15, 0.2, 0.25, 0.3])
    expect(parseNumberList('8000, 32000')).toEqual([8000, 32000])
    expect(() => parseNumberList('0.9:0.6:0.1')).toThrow(/from ≤ to/)
    expect(() => parseNumberList('1,,2')).toThrow(/numbers separated by commas/)
  })

  it('orders cells by window, pruner (on first), threshold, retain; ids are stable', () => {
    const grid = gridFromFlags({ threshold: '0.9,0.7', retain: '0.1', pruner: 'off,on', window: '16000,8000' })
    expect(gridCells(grid).map((c) => c.id)).toEqual([
      'w8000-t0.7-r0.1-p1', 'w8000-t0.9-r0.1-p1', 'w8000-t0.7-r0.1-p0', 'w8000-t0.9-r0.1-p0',
      'w16000-t0.7-r0.1-p1', 'w16000-t0.9-r0.1-p1', 'w16000-t0.7-r0.1-p0', 'w16000-t0.9-r0.1-p0',
    ])
  })

  it('keeps a cell whose retainRatio is not below thresholdRatio as invalid with the §3.2 rule 7 reason', () => {
    const cells = gridCells(parseGrid('thresholdRatio: [0.6, 0.8]\nretainRatio: [0.1, 0.7]\npruner: [on]\ncontextWindow: 8000\n', 'g.yaml'))
    expect(cells.map((c) => [c.id, c.invalidReason])).toEqual([
      ['w8000-t0.6-r0.1-p1', null],
      ['w8000-t0.6-r0.7-p1', expect.stringMatching(/retainRatio 0\.7 must be strictly below thresholdRatio 0\.6 \(§3\.2 rule 7\)$/)],
      ['w8000-t0.8-r0.1-p1', null],
      ['w8000-t0.8-r0.7-p1', null],
    ])
  })

  it('names file:line:column for YAML syntax errors, unknown keys and bad values', () => {
    const problem = (text: string): string => {
      try {
        parseGrid(text, 'grid.yaml')
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError)
        return (err as Error).message
      }
      throw new Error('parseGrid accepted a malformed grid')
    }
    expect(problem('thresholdRatio: [0.6,\nretainRatio: 0.1\n')).toMatch(/^grid\.yaml:2:\d+: invalid YAML: /)
    expect(problem('thresholdRatio: 0.7\nretain: 0.1\n')).toBe(
      'grid.yaml:2:1: unknown key "retain"; expected one of '
        + 'thresholdRatio, retainRatio, pruner, contextWindow, seeds, compactionsPerTurnMax, summarizer, objective, profile, ownPolicy',
    )
    expect(problem('thresholdRatio: [0.6, high]\n')).toBe(
      'grid.yaml:1:23: thresholdRatio: expected numbers separated by commas or a range from:to:step, got "high"',
    )
    expect(problem('pruner: [on, maybe]\n')).toBe('grid.yaml:1:14: pruner: expected on or off, got "maybe"')
    expect(problem('contextWindow: [8000, 0.5]\n')).toBe('grid.yaml:1:16: contextWindow: expected positive integers, got 0.5')
  })

  it('an inline axis out of range names the real flag (--threshold, not the grid key thresholdRatio)', () => {
    const problem = (flags: Parameters<typeof gridFromFlags>[0]): string => {
      try {
        gridFromFlags(flags)
      } catch (err) {
        return (err as Error).message
      }
      throw new Error('gridFromFlags accepted a bad axis')
    }
    expect(problem({ threshold: '0.5,1.5' })).toBe('--threshold: expected ratios in (0, 1], got 1.5')
    expect(problem({ retain: '1' })).toBe('--retain: expected ratios in (0, 1), got 1')
    expect(problem({ window: '0' })).toBe('--window: expected positive integers, got 0')
  })
})

describe('shards', () => {
  it('assigns every key to exactly one of n shards, independent of the other keys', () => {
    const keys = Array.from({ length: 60 }, (_, i) => `scenarios/x/${i}.yaml`)
    const slices = [1, 2, 3].map((index) => inShard(keys, (k) => k, { index, count: 3 }))
    expect(slices.flat().sort()).toEqual([...keys].sort())
    for (const slice of slices) expect(slice.length).toBeGreaterThan(0)
    expect(inShard(keys.slice(10), (k) => k, { index: 2, count: 3 })).toEqual(slices[1]?.filter((k) => keys.indexOf(k) >= 10))
    expect(shardOf('a', 1)).toBe(1)
  })

  it('parses i/n and refuses anything else', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 })
    for (const bad of ['0/3', '4/3', '1/0', '1-3', 'x']) expect(() => parseShard(bad)).toThrow(/--shard: expected i\/n/)
  })
})

describe('sim sweep input errors', () => {
  let dir = ''
  let cleanup: () => Promise<void> = async () => undefined
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir())
  })
  afterAll(async () => cleanup())

  it('exits 2 naming file:line:column of a malformed grid file', async () => {
    const grid = join(dir, 'bad.grid')
    await writeFile(grid, '# tuning grid\nthresholdRatio: [0.6, 0.8]\nretainRatio: 0.1:0.3\n')
    const run = await runSim(['sweep', 'scenarios/smoke/basic-pressure.yaml', '--grid', grid, '--out-dir', join(dir, 'out')])
    expect(run.exitCode).toBe(2)
    expect(normalise(run.stderr, { [dir]: '<tmp>' }).split('\n')[0]).toBe(
      'error: <tmp>/bad.grid:3:14: retainRatio: expected numbers separated by commas or a range from:to:step, got "0.1:0.3"',
    )
  })

  it('exits 2 when --grid is combined with inline axes', async () => {
    const run = await runSim(['sweep', 'scenarios/smoke/basic-pressure.yaml', '--grid', 'g.yaml', '--threshold', '0.7'])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('--grid cannot be combined with')
  })
})
