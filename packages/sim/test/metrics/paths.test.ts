/**
 * Path coverage (issue #8, `src/metrics/paths.ts`): the paths each valid conformance log reaches, pinned —
 * a pure function of the log (plus the manifest's explicit-region starts and policy).
 */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { readLog } from '@compaction-sim/core'
import { PATH_DEFINITIONS, pathsOf, sumPaths } from '../../src/metrics/paths.ts'

const VALID = new URL('../../../fixtures/conformance/valid/', import.meta.url)

async function reached(name: string, options: Parameters<typeof pathsOf>[1] = {}): Promise<string[]> {
  const { events } = await readLog(new URL(`${name}.jsonl`, VALID).pathname, { dialect: 'seed' })
  return pathsOf(events, options).filter((p) => p.reached > 0).map((p) => `${p.path}=${p.reached}`)
}

describe('pathsOf', () => {
  it('lists every path of the table, in order, with 0 for the unreached', async () => {
    const { events } = await readLog(new URL('pressure-prune.jsonl', VALID).pathname, { dialect: 'seed' })
    const table = pathsOf(events)
    expect(table.map((p) => p.path)).toEqual(PATH_DEFINITIONS.map((d) => d.id))
    expect(new Set(PATH_DEFINITIONS.map((d) => d.id)).size).toBe(PATH_DEFINITIONS.length)
    expect(table.filter((p) => p.reached > 0)).toEqual([{ path: 'prune-only-relief', reached: 1 }])
  })

  it('finds the paths of the spec and conformance logs', async () => {
    expect(await reached('appendix-b')).toEqual([
      'summary-commit=1', 'prune-only-relief=1', 'summary-error=1', 'in-bracket-image-offload=1', 'image-offload-retry=1',
    ])
    expect(await reached('overflow-recovery')).toEqual(['summary-commit=1', 'overflow-recovery-bracket=1'])
    expect(await reached('manual-compaction')).toEqual(['summary-commit=1', 'manual-compaction-commit=1'])
    expect(await reached('crash-mid-step')).toEqual(['crash-repair=3', 'restore-end-seed=1'])
    expect(await reached('crash-in-bracket')).toEqual([
      'summary-commit=1', 'stale-orphan-ignored=1', 'crash-repair=1', 'restore-end-seed=1',
    ])
  })

  it('explicit-region needs the manifest starts (the log alone cannot tell a compactRegion call)', async () => {
    const text = await readFile(new URL('explicit-region.manifest.json', VALID), 'utf8')
    const manifest = JSON.parse(text) as { explicitRegionStarts: number[] }
    expect(await reached('explicit-region')).toEqual(['summary-commit=1'])
    const withStarts = await reached('explicit-region', { explicitRegionStarts: manifest.explicitRegionStarts })
    expect(withStarts).toEqual(['summary-commit=1', 'explicit-region=1'])
  })

  it('sumPaths adds tables path by path', () => {
    const a = PATH_DEFINITIONS.map((d, i) => ({ path: d.id, reached: i }))
    const total = sumPaths([a, a])
    expect(total.map((p) => p.reached)).toEqual(a.map((p) => 2 * p.reached))
  })
})
