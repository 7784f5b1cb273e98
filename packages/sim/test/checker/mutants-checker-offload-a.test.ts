/**
 * The §12.6 image-offload checks (`src/checker/offload.ts`, lines 1–124: the seed-only applicability, INV-36
 * and INV-37's causality) on small edits of Appendix B, whose two offloads are `image/offload` #30 (target
 * #28 [0], right after the IMAGE_OFFLOAD_REQUIRED failed finish #29 of turn 2 step 1, offloadImages 1) and
 * #53 (target #28 [1], right after the `compaction/summary-error` #52 of bracket cmp-7f3a opened at #51,
 * region [3, 10, 15, 23, 28, 37, 42]). #28 (user/message) carries the log's only two images; #2 is the system
 * head (position 0); #12 is shadowed by the prune #14 and replaced by the imageless tool/result #15. Every
 * expectation (id@seq and message) is written out by hand from §6 and §12.6. It pins:
 * - applicability: not-applicable with its reason in the rc.8 dialect, evaluated in the seed dialect;
 * - INV-36: no targets, a node targeted twice, a target that is no node / shadowed / the head at position 0,
 *   a target of another type, a tool/result target (eligible, here imageless), non-ascending and out-of-range
 *   indexes, an index already offloaded, and an offload naming no index (a target skipped as invalid adds no
 *   index to the count, so an offload whose only target is invalid is also reported as naming no index);
 * - INV-37: the line before is nothing / a duplicate / an opaque line / a chunk that is no failed finish of
 *   the open step (not a finish, a stop finish, no open step, another turn, another step), a failure with
 *   another code, compaction/start, a summary-error outside its bracket or of another compactionId; the
 *   region rule of a summary cause, and a non-positive offloadImages.
 */
import type { Dialect } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixB, at, checkedReport, editedAppendixB, foreign, renumber, reportOf, violationLines, type AppendixEvent } from './support.ts'

const RC8: Dialect = 'dsh-0.1.0-rc.8'

/** The report of raw lines (some need not be events). */
async function rawReport(lines: readonly unknown[]): Promise<CheckReport> {
  return reportOf(await checkLog(lines, { dialect: 'seed' }))
}

/** The internal failures of one check (a hook that threw). */
const failuresOf = (r: CheckReport, id: string): unknown[] => r.internalErrors.filter((f) => f.id === id)

/** Sets the targets of the offload at `seq`. */
function targets(e: AppendixEvent[], seq: number, t: Array<{ seq: number; imageIndexes: number[] }>): void {
  at(e, seq).data['targets'] = t
}

/** The `chunk` of the assistant/chunk #29 (the failed finish before #30). */
const chunk29 = (e: AppendixEvent[]): Record<string, unknown> => at(e, 29).data['chunk'] as Record<string, unknown>
/** The failure of #29. */
const failure29 = (e: AppendixEvent[]): Record<string, unknown> => (chunk29(e)['reason'] as Record<string, unknown>)['failure'] as Record<string, unknown>

const NOT_FOLLOWING = 'image/offload does not follow an IMAGE_OFFLOAD_REQUIRED failure of the open step or bracket'

describe('Appendix B itself', () => {
  it('reports nothing for INV-36 and INV-37', async () => {
    const r = await checkedReport(appendixB())
    expect(violationLines(r, 'INV-36')).toEqual([])
    expect(violationLines(r, 'INV-37')).toEqual([])
    expect(failuresOf(r, 'INV-36')).toEqual([])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })
})

describe('seed-only applicability (§14.1)', () => {
  it('every offload check is not-applicable in the rc.8 dialect, with the reason', async () => {
    const r = await checkedReport(appendixB(), undefined, RC8)
    const reason = 'the rc.8 dialect has no image/offload and no compaction/summary-error (§14.1)'
    for (const id of ['INV-36', 'INV-37', 'INV-38', 'INV-39', 'INV-40']) {
      expect(r.coverage.find((c) => c.id === id)).toEqual({ id, status: 'not-applicable', reason, skipped: 0 })
      expect(violationLines(r, id)).toEqual([])
    }
  })

  it('INV-36 is evaluated in the seed dialect', async () => {
    const r = await checkedReport(appendixB())
    expect(r.coverage.find((c) => c.id === 'INV-36')).toEqual({ id: 'INV-36', status: 'evaluated', reason: '', skipped: 0 })
  })
})

describe('INV-36: target validity', () => {
  it('an offload without targets is reported as such (and not as naming no index)', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [])))
    expect(violationLines(r, 'INV-36')).toEqual(['INV-36@30: an image/offload without targets'])
    expect(failuresOf(r, 'INV-36')).toEqual([])
  })

  it('a node targeted twice', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 28, imageIndexes: [0] }, { seq: 28, imageIndexes: [1] }])))
    expect(violationLines(r, 'INV-36')).toEqual([
      'INV-36@30: node #28 is targeted twice',
      'INV-36@53: image 1 of #28 is already offloaded',
    ])
  })

  it('a target that is no event of the log', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 99, imageIndexes: [0] }])))
    expect(violationLines(r, 'INV-36')).toEqual([
      'INV-36@30: target #99 is not a current surface node',
      'INV-36@30: an image/offload that names no image index',
    ])
    expect(failuresOf(r, 'INV-36')).toEqual([])
  })

  it('a shadowed node (#12, replaced by #15) is not a current surface node', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 12, imageIndexes: [0] }])))
    expect(violationLines(r, 'INV-36')).toEqual([
      'INV-36@30: target #12 is not a current surface node',
      'INV-36@30: an image/offload that names no image index',
    ])
  })

  it('the system head at position 0 is current but of the wrong type', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 2, imageIndexes: [0] }])))
    expect(violationLines(r, 'INV-36')).toEqual([
      'INV-36@30: target #2 is a system/message; only user/message and tool/result images are offloaded',
      'INV-36@30: an image/offload that names no image index',
    ])
  })

  it('an assistant/message target is of the wrong type', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 23, imageIndexes: [0] }])))
    expect(violationLines(r, 'INV-36')).toEqual([
      'INV-36@30: target #23 is a assistant/message; only user/message and tool/result images are offloaded',
      'INV-36@30: an image/offload that names no image index',
    ])
  })

  it('a tool/result target is eligible: only its (zero) image count is judged', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 15, imageIndexes: [0] }])))
    expect(violationLines(r, 'INV-36')).toEqual(['INV-36@30: image index 0 of #15 is out of range (0 images)'])
  })

  it('repeated indexes are not strictly ascending', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 28, imageIndexes: [0, 0] }])))
    expect(violationLines(r, 'INV-36')).toEqual(['INV-36@30: imageIndexes of #28 are not strictly ascending'])
  })

  it('index 2 of a node with 2 images is out of range', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 28, imageIndexes: [2] }])))
    expect(violationLines(r, 'INV-36')).toEqual(['INV-36@30: image index 2 of #28 is out of range (2 images)'])
  })

  it('index 1 of a node with 2 images is in range at #30 (and then already offloaded at #53)', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 28, imageIndexes: [1] }])))
    expect(violationLines(r, 'INV-36')).toEqual(['INV-36@53: image 1 of #28 is already offloaded'])
  })

  it('an image offloaded at #30 is already offloaded at #53', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 53, [{ seq: 28, imageIndexes: [0] }])))
    expect(violationLines(r, 'INV-36')).toEqual(['INV-36@53: image 0 of #28 is already offloaded'])
  })

  it('an offload whose only target names no index', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 30, [{ seq: 28, imageIndexes: [] }])))
    expect(violationLines(r, 'INV-36')).toEqual(['INV-36@30: an image/offload that names no image index'])
  })
})

describe('INV-37: the line before the offload', () => {
  it('an offload on the first line follows nothing', async () => {
    const r = await rawReport([{ seq: 0, time: 1700000000005, type: 'image/offload', data: { targets: [{ seq: 0, imageIndexes: [0] }] } }])
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@0: ${NOT_FOLLOWING} (the line before is nothing)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('a failure with another code names the line before', async () => {
    const r = await checkedReport(editedAppendixB((e) => { failure29(e)['code'] = 'RATE_LIMITED' }))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
  })

  it('a duplicate of the failed finish right before the offload is no cause', async () => {
    const e = appendixB()
    e.splice(30, 0, structuredClone(at(e, 29)))
    const r = await rawReport(e)
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('an opaque line (nested beyond the bound) right before the offload is no cause', async () => {
    const e = appendixB()
    let deep: unknown = 'x'
    for (let i = 0; i < 300; i++) deep = [deep]
    chunk29(e)['deep'] = deep
    const r = await rawReport(e)
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('a chunk that is no finish', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 29).data['chunk'] = { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } } }))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('a finish that is no error', async () => {
    const r = await checkedReport(editedAppendixB((e) => { chunk29(e)['reason'] = { kind: 'stop' } }))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('a failed finish while no step is open (step/start #27 gone)', async () => {
    const r = await checkedReport(editedAppendixB((e) => foreign(at(e, 27))))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('a failed finish of another turn than the open step', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 29).data['turn'] = 3 }))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
  })

  it('a failed finish of another step than the open step', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 29).data['step'] = 2 }))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@30: ${NOT_FOLLOWING} (the line before is assistant/chunk)`])
  })

  it('an offload right after compaction/start (summary-error #52 removed)', async () => {
    const e = appendixB()
    e.splice(52, 1)
    const r = await rawReport(renumber(e))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@52: ${NOT_FOLLOWING} (the line before is compaction/start)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('a summary-error outside any bracket (compaction/start #51 gone)', async () => {
    const r = await checkedReport(editedAppendixB((e) => foreign(at(e, 51))))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@53: ${NOT_FOLLOWING} (the line before is compaction/summary-error)`])
    expect(failuresOf(r, 'INV-37')).toEqual([])
  })

  it('a summary-error of another compactionId than the open bracket', async () => {
    const r = await checkedReport(editedAppendixB((e) => { at(e, 52).data['compactionId'] = 'cmp-x' }))
    expect(violationLines(r, 'INV-37')).toEqual([`INV-37@53: ${NOT_FOLLOWING} (the line before is compaction/summary-error)`])
  })
})

describe('INV-37: the cause itself', () => {
  it('a summary cause confines the targets to its region', async () => {
    const r = await checkedReport(editedAppendixB((e) => targets(e, 53, [{ seq: 49, imageIndexes: [0] }])))
    expect(violationLines(r, 'INV-37')).toEqual(['INV-37@53: targets [49] lie outside the summary region [3, 10, 15, 23, 28, 37, 42] of #52'])
  })

  it('offloadImages 0 is not a positive integer', async () => {
    const r = await checkedReport(editedAppendixB((e) => { failure29(e)['offloadImages'] = 0 }))
    expect(violationLines(r, 'INV-37')).toEqual(['INV-37@30: the failure #29 has offloadImages 0, not a positive integer: it is not handleable (§6.1)'])
  })
})
