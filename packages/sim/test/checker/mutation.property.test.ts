/**
 * Mutation sensitivity (issue 5): single seeded mutations of valid logs (Appendix B, the valid conformance
 * logs, the recorded rc.8 logs) must be detected — a violation or an input error. Truncation at an event
 * boundary is measured but not bounded: a prefix of a valid log is usually itself valid (only a cut inside a
 * bracket or between a metering event and its replacement breaks a promise), so it is reported, not asserted.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { appendixBEvents, validConformanceLogs } from '@compaction-sim/fixtures'
import type { Dialect, RunManifest } from '@compaction-sim/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fcParams } from '../../../core/test/support/seed.ts'
import { checkLog } from '../../src/checker/run.ts'
import { RECORDED_DIR, recordedLogNames } from './recorded-logs.ts'

type Ev = { seq: number; type: string; data?: Record<string, unknown>; surfaceOp?: unknown; sourceEventSeqs?: number[] }
interface Base { name: string; dialect: Dialect; events: Ev[]; manifest: RunManifest | null }

function bases(): Base[] {
  const out: Base[] = [{ name: 'appendix-b', dialect: 'seed', events: appendixBEvents() as unknown as Ev[], manifest: null }]
  for (const v of validConformanceLogs()) out.push({ name: v.name, dialect: v.dialect, events: v.events as unknown as Ev[], manifest: ('manifest' in v ? (v.manifest as RunManifest | undefined) : undefined) ?? null })
  const dir = RECORDED_DIR
  // A missing or empty fixture folder throws (recorded-logs.ts) rather than leaving only the seed logs.
  for (const f of recordedLogNames()) {
    const events = readFileSync(join(dir, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Ev).filter((e) => 'seq' in e)
    // The recorder writes each log's run manifest (§1.1) next to it; a custom policy is only valid against it.
    const manifestPath = join(dir, f.replace(/\.jsonl$/, '.manifest.json'))
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as RunManifest
    out.push({ name: f, dialect: 'dsh-0.1.0-rc.8', events, manifest })
  }
  return out
}

const KINDS = ['drop', 'duplicate', 'swap', 'seq', 'span', 'provenance', 'compactionId', 'surfaceOp', 'truncate'] as const
type Kind = (typeof KINDS)[number]

/** Picks from a list with a drawn number. */
function pick<T>(list: readonly T[], n: number): T | undefined {
  return list.length === 0 ? undefined : list[n % list.length]
}

/** Applies one mutation in place; false when the log has nothing it applies to. */
function mutate(ev: Ev[], kind: Kind, a: number, b: number): boolean {
  const i = a % ev.length
  switch (kind) {
    case 'drop': ev.splice(i, 1); return true
    case 'duplicate': ev.splice(i, 0, structuredClone(ev[i] as Ev)); return true
    case 'swap': {
      const j = Math.min(ev.length - 1, i + 1 + (b % 3))
      if (j === i) return false
      const t = ev[i] as Ev
      ev[i] = ev[j] as Ev
      ev[j] = t
      return true
    }
    case 'seq': (ev[i] as Ev).seq += b % 2 === 0 ? 1 : -1; return true
    case 'span': {
      const e = pick(ev.filter((x) => typeof x.surfaceOp === 'object' || x.data?.['shadowedRange'] !== undefined), a)
      if (e === undefined) return false
      const r = (typeof e.surfaceOp === 'object' ? e.surfaceOp : e.data?.['shadowedRange']) as { start: number; end: number }
      if (b % 2 === 0) r.start += b % 4 === 0 ? 1 : -1
      else r.end += b % 4 === 1 ? 1 : -1
      return true
    }
    case 'provenance': {
      const e = pick(ev.filter((x) => Array.isArray(x.sourceEventSeqs) || Array.isArray(x.data?.['shadowedSeqs'])), a)
      if (e === undefined) return false
      const list = (Array.isArray(e.sourceEventSeqs) && (b % 2 === 0 || !Array.isArray(e.data?.['shadowedSeqs'])) ? e.sourceEventSeqs : e.data?.['shadowedSeqs']) as number[]
      const m = b % 3
      if (m === 0 && list.length > 0) list.splice(b % list.length, 1)
      else if (m === 1 && list.length > 0) list[b % list.length] = (list[b % list.length] as number) + 1
      else list.push(e.seq - 1 - (b % 3))
      return true
    }
    case 'compactionId': {
      const e = pick(ev.filter((x) => typeof x.data?.['compactionId'] === 'string' || typeof (x.data?.['source'] as Record<string, unknown> | undefined)?.['compactionId'] === 'string'), a)
      if (e === undefined || e.data === undefined) return false
      const holder = typeof e.data['compactionId'] === 'string' ? e.data : e.data['source'] as Record<string, unknown>
      holder['compactionId'] = `${String(holder['compactionId'])}x`
      return true
    }
    case 'surfaceOp': {
      const e = pick(ev.filter((x) => x.surfaceOp !== undefined), a)
      if (e === undefined) return false
      if (e.surfaceOp === 'append') {
        const earlier = ev.filter((x) => x.surfaceOp !== undefined && x.seq < e.seq)
        const s = pick(earlier, b)?.seq ?? 0
        e.surfaceOp = { op: 'replace', start: s, end: s }
      } else if (b % 2 === 0) e.surfaceOp = 'append'
      else delete e.surfaceOp
      return true
    }
    case 'truncate': ev.length = 1 + (a % (ev.length - 1)); return true
  }
}

describe('mutation sensitivity', () => {
  it('detects ≥ 95% of single mutations other than truncation; reports the rate per kind', async () => {
    const logs = bases()
    const draws = fc.sample(fc.tuple(fc.nat(), fc.constantFrom(...KINDS), fc.nat(), fc.nat()), fcParams({ numRuns: 900 }))
    const tally = new Map<Kind, { tried: number; detected: number }>()
    for (const [which, kind, a, b] of draws) {
      const base = logs[which % logs.length] as Base
      const events = structuredClone(base.events)
      if (!mutate(events, kind, a, b)) continue
      const r = await checkLog(events, { dialect: base.dialect, manifest: base.manifest })
      if (r.kind === 'report') expect(r.internalErrors).toEqual([])
      const t = tally.get(kind) ?? { tried: 0, detected: 0 }
      t.tried++
      if (r.kind === 'input-error' || !r.ok) t.detected++
      tally.set(kind, t)
    }
    let tried = 0
    let detected = 0
    for (const [kind, t] of tally) {
      console.log(`mutation ${kind}: ${t.detected}/${t.tried} detected`)
      if (kind === 'truncate') continue
      tried += t.tried
      detected += t.detected
    }
    console.log(`mutation detection (truncation excluded): ${detected}/${tried} = ${(100 * detected / tried).toFixed(1)}%`)
    expect(detected / tried).toBeGreaterThanOrEqual(0.95)
  }, 300_000)
})
