/**
 * `timelineOf` (issue #9's pressure timeline): on a real run of a smoke scenario, every point equals a
 * fresh reference meter on the log prefix its request was dispatched at (§2.5), carries the §3.3 threshold
 * of the scenario's policy and window, and the markers are exactly the log's compaction, prune and offload
 * events. A request past the end of the log (a crashed child's tail) is measured on the whole log.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { EventLog, TokenMeter, readLog, type CapturedRequest } from '@compaction-sim/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runScenario } from '../../src/run/run-scenario.ts'
import { timelineOf } from '../../src/run/timeline.ts'
import { loadScenario } from '../../src/scenario/load.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

const FILE = join(REPO_ROOT, 'scenarios/smoke/basic-pressure.yaml')
let tmp: { dir: string; cleanup: () => Promise<void> }

beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

describe('timelineOf', () => {
  it('gives one point per request, each the meter on its dispatch prefix, with the §3.3 threshold and every marker event', async () => {
    const report = await runScenario(FILE, { outDir: tmp.dir, cwd: REPO_ROOT })
    const scenario = resolveScenario(await loadScenario(FILE), { file: FILE })
    const timeline = report.timeline
    expect(report.status).toBe('passed')
    expect(timeline).toBeDefined()
    if (timeline === undefined || report.artifacts === undefined) return
    const events = (await readLog(join(tmp.dir, report.artifacts.log), { dialect: 'seed' })).events
    const requests = (await readFile(join(tmp.dir, report.artifacts.requests), 'utf8')).trim().split('\n')
      .map((line) => JSON.parse(line) as CapturedRequest)
    expect(timeline.events).toBe(events.length)
    const dispatched = requests.map((r) => [r.index, r.purpose, r.logRevisionAtDispatch])
    expect(timeline.points.map((p) => [p.request, p.purpose, p.seq])).toEqual(dispatched)
    expect(timeline.points.some((p) => p.purpose === 'compaction')).toBe(true)
    const window = scenario.provider.contextWindow ?? 0
    for (const point of timeline.points) {
      const prefix = EventLog.fromEvents(events.slice(0, point.seq), { dialect: 'seed' })
      const tokens = new TokenMeter(prefix, { dialect: 'seed' }).measure().totalTokens
      expect(point.tokens).toBe(tokens)
      expect(point.ratio).toBe(tokens / window)
      expect(point.thresholdTokens).toBe(Math.floor(window * scenario.policy.thresholdRatio))
    }
    const kinds: Record<string, string> = {
      'compaction/start': 'compaction-start', 'compaction/end': 'compaction-end', 'compaction/prune': 'prune', 'image/offload': 'offload',
    }
    const marked = events.filter((e) => kinds[e.type] !== undefined)
    expect(timeline.markers.map((m) => ({ kind: m.kind, seq: m.seq }))).toEqual(marked.map((e) => ({ kind: kinds[e.type], seq: e.seq })))
    const ids = marked.map((e) => (e.type === 'compaction/start' || e.type === 'compaction/end' ? e.data.compactionId : undefined))
    expect(timeline.markers.map((m) => m.compactionId)).toEqual(ids)
    expect(timeline.markers.length).toBeGreaterThan(0)

    const past = timelineOf(events, [{ ...(requests[0] as CapturedRequest), logRevisionAtDispatch: events.length + 5 }], {
      policy: scenario.policy, contextWindow: scenario.provider.contextWindow,
    })
    expect(past.points.map((p) => [p.seq, p.tokens])).toEqual([[events.length, report.finalPressure?.tokens]])
  })
})
