/**
 * `sim inspect --dialect dsh-0.1.0-rc.8 --json` on every log recorded from the released official engine
 * reproduces the engine's own `ctx.tokenMeter.measure(session)` figures exactly (protocol §2.5 with the
 * §14.1 metering adjustments): totalTokens, surfaceTokens, the baseline kind and figure, the surface.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fixturePath } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { runSim } from './run-sim.ts'

const DIR = fixturePath('recorded/dsh-0.1.0-rc.8')
const LOGS = readdirSync(DIR).filter((f) => f.endsWith('.jsonl')).sort()

interface OfficialMeta {
  official: {
    measure: { totalTokens: number; surfaceTokens: number; surfaceDeltaTokens: number; baseline: { kind: string; tokens: number } }
    surface: { nodes: number[]; replaceGeneration: number }
  }
}

describe('sim inspect reproduces the official meter on recorded rc.8 logs', () => {
  it('has at least five recorded logs', () => {
    expect(LOGS.length).toBeGreaterThanOrEqual(5)
  })

  it.each(LOGS)('%s', async (file) => {
    const meta = JSON.parse(readFileSync(join(DIR, file.replace(/\.jsonl$/, '.meta.json')), 'utf8')) as OfficialMeta
    const run = await runSim(['inspect', '--dialect', 'dsh-0.1.0-rc.8', '--json', join(DIR, file)])
    expect(run.stderr).toBe('')
    expect(run.exitCode).toBe(0)
    const doc = JSON.parse(run.stdout) as { surface: number[]; replaceGeneration: number; meter: Record<string, unknown> }
    const official = meta.official.measure
    expect(doc.meter).toEqual({
      totalTokens: official.totalTokens,
      surfaceTokens: official.surfaceTokens,
      baseline: official.baseline.kind,
      baselineTokens: official.baseline.tokens,
      surfaceDeltaTokens: official.surfaceDeltaTokens,
    })
    expect(doc.surface).toEqual(meta.official.surface.nodes)
    expect(doc.replaceGeneration).toBe(meta.official.surface.replaceGeneration)
  })
})
