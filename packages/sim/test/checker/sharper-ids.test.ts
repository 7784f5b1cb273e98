/**
 * Issue #21 "The right id" and "Sharper messages where the id is a consequence":
 * - a checkpoint stored as an `assistant/message` is INV-14's case (the checkpoint is one `user/message` with the
 *   compact source, §1.4.4, §1.6), reported as INV-14 at the misfiled event, whether or not it still carries the
 *   compact source and whether or not the rest of its shape is valid;
 * - a restore that appended no `session/end-seed` (§11.4) is named in the messages of the violations it causes
 *   (INV-10, INV-11, INV-41, INV-45), at the seqs where they are found.
 * Every edit is written out by hand on the valid conformance logs (Appendix B, `crash-in-bracket`).
 */
import type { LogEvent, RunManifest } from '@compaction-sim/core'
import { validConformanceLogs } from '@compaction-sim/fixtures'
import { describe, expect, it } from 'vitest'
import { checkLog } from '../../src/checker/run.ts'
import { appendixB, found, reportOf } from './support.ts'

type Raw = Record<string, unknown> & { seq: number; type: string; data: Record<string, unknown> }

async function check(events: readonly unknown[], manifest: RunManifest | null = null): Promise<ReturnType<typeof reportOf>> {
  return reportOf(await checkLog([...events], { dialect: 'seed', manifest }))
}

const messagesOf = (r: ReturnType<typeof reportOf>, id: string): string[] => r.violations.filter((v) => v.id === id).map((v) => `${v.seq}: ${v.message}`)

describe('INV-14: a checkpoint stored as an assistant/message', () => {
  /** Appendix B with its checkpoint (#55, after summary #54) rewritten by `edit`. */
  function withCheckpoint(edit: (checkpoint: Raw) => Raw): Raw[] {
    const events = appendixB()
    const checkpoint = events[55] as Raw
    expect([checkpoint.type, (events[54] as Raw).type]).toEqual(['user/message', 'compaction/summary'])
    events[55] = edit(checkpoint)
    return events
  }

  it('the unmodified log reports no INV-14 (the control)', async () => {
    expect(messagesOf(await check(appendixB()), 'INV-14')).toEqual([])
  })

  it('retyped as written (user-message data, compact source, no turn/step): INV-14 at #55, though the event is opaque to the fold', async () => {
    const r = await check(withCheckpoint((c) => ({ ...c, type: 'assistant/message', data: { ...c.data, role: 'assistant' } })))
    expect(messagesOf(r, 'INV-14')).toEqual([
      "55: a checkpoint (source {kind:'plugin', plugin:'compact'}) is stored as assistant/message: the checkpoint is one user/message with that source and surfaceOp replace (§1.4.4, §1.6)",
    ])
    expect(found(r)).toContain('INV-02@55') // and it is malformed as an assistant message
  })

  it('a well-formed assistant/message replacement right after the summary, with a model source: INV-14 at #55', async () => {
    const source = { kind: 'model', provider: 'mock', model: 'mock-4k' }
    const r = await check(withCheckpoint((c) => ({
      seq: c.seq, time: c['time'], type: 'assistant/message', surfaceOp: c['surfaceOp'], sourceEventSeqs: c['sourceEventSeqs'],
      data: { turn: 3, step: 1, message: { id: c.data['id'], role: 'assistant', content: c.data['content'], source } },
    } as Raw)))
    expect(messagesOf(r, 'INV-14')).toEqual([
      "55: the replacement after compaction/summary #54 is stored as assistant/message: the checkpoint is one user/message with source {kind:'plugin', plugin:'compact'} (§1.4.4)",
    ])
    expect(found(r)).not.toContain('INV-02@55') // the shape is valid: only the type is wrong
  })

  it('an assistant/message whose message keeps the compact source is reported once, by the source', async () => {
    const r = await check(withCheckpoint((c) => ({
      seq: c.seq, time: c['time'], type: 'assistant/message', surfaceOp: c['surfaceOp'], sourceEventSeqs: c['sourceEventSeqs'],
      data: { turn: 3, step: 1, message: { id: c.data['id'], role: 'assistant', content: c.data['content'], source: c.data['source'] } },
    } as Raw)))
    const inv14 = messagesOf(r, 'INV-14')
    expect(inv14).toHaveLength(1)
    expect(inv14[0]).toMatch(/^55: a checkpoint \(source \{kind:'plugin', plugin:'compact'\}\) is stored as assistant\/message/)
  })
})

describe('a restore that appended no session/end-seed is named in the violations it causes (§11.4)', () => {
  const BASE = validConformanceLogs().find((l) => l.name === 'crash-in-bracket')
  if (BASE === undefined) throw new Error('the crash-in-bracket conformance log is missing')
  const manifest = (BASE.manifest ?? null) as RunManifest | null

  /** crash-in-bracket (orphan start #16, repair turn/end #17, end-seed #18) without its end-seed; later seqs and references shift down by one. */
  function withoutEndSeed(): LogEvent[] {
    const events = structuredClone(BASE?.events ?? []) as unknown as Raw[]
    expect(events.slice(16, 20).map((e) => e.type)).toEqual(['compaction/start', 'turn/end', 'session/end-seed', 'turn/start'])
    const shift = (s: number): number => (s > 18 ? s - 1 : s)
    const out = [...events.slice(0, 18), ...events.slice(19)].map((e) => {
      const c = structuredClone(e)
      c.seq = shift(c.seq)
      if (Array.isArray(c['sourceEventSeqs'])) c['sourceEventSeqs'] = (c['sourceEventSeqs'] as number[]).map(shift)
      const op = c['surfaceOp']
      if (typeof op === 'object' && op !== null) c['surfaceOp'] = { ...op, start: shift((op as { start: number }).start), end: shift((op as { end: number }).end) }
      if (Array.isArray(c.data['shadowedSeqs'])) c.data['shadowedSeqs'] = (c.data['shadowedSeqs'] as number[]).map(shift)
      const range = c.data['shadowedRange'] as { start: number; end: number } | undefined
      if (range !== undefined) c.data['shadowedRange'] = { start: shift(range.start), end: shift(range.end) }
      return c
    })
    return out as unknown as LogEvent[]
  }

  it('the sealed log is clean (the control)', async () => {
    expect(found(await check(BASE.events, manifest))).toEqual([])
  })

  it('INV-10, INV-11, INV-41, INV-45 keep their ids and seqs, and each message names the missing end-seed at the repair turn/end #17', async () => {
    const r = await check(withoutEndSeed(), manifest)
    const note = '; a restore resumed the log at #17 without appending session/end-seed (§11.4), so no new lifecycle began'
    expect(messagesOf(r, 'INV-11')).toEqual([
      `17: turn/end while bracket cmp-crashed-1 (#16) is open${note}`,
      `18: turn/start while bracket cmp-crashed-1 (#16) is open${note}`,
    ])
    expect(messagesOf(r, 'INV-10')).toEqual([`19: compaction/start cmp-after-restore-1 while bracket cmp-crashed-1 (#16) is still open${note}`])
    expect(messagesOf(r, 'INV-45')).toEqual([`19: compaction/start while the lock is live: cmp-crashed-1 (#16) is unmatched in this lifecycle${note}`])
    expect(messagesOf(r, 'INV-41').some((m) => m.startsWith('25: reason resume, expected ') && m.endsWith(note))).toBe(true)
  })

  it('with the end-seed in place, the same repair turn/end carries no note', async () => {
    const r = await check(BASE.events, manifest)
    expect(r.violations.filter((v) => v.message.includes('session/end-seed'))).toEqual([])
  })
})
