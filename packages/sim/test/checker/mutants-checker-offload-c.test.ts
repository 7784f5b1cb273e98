/**
 * INV-39 (offload permanence, `src/checker/offload.ts`, §6.4/§6.5, §12.6) on small edits of Appendix B, whose
 * offloads are #30 (index 0 of #28 `m-u2`, `ci-1.png` = sha256:1111…) and #53 (index 1, `ci-2.png` =
 * sha256:2222…), and whose only prune is #14/#15 of the read result #12. Every expectation is written out by
 * hand. It pins:
 * - the request half: the attachment ids an offload records per message id — targets naming no live node or
 *   an index beyond the node's images are passed over, a second offload of a message adds to the first, a
 *   tool/result target is recorded under its message's id, a node without a data-level id (an
 *   assistant/message) records nothing even for a captured message without an id;
 * - the prune half: only a single-node replacement of a node with offloaded images and still live is judged;
 *   each offloaded image must come back as its exact placeholder text (named / unnamed image, read-only
 *   path), non-text blocks of the replacement are fine, offload marks beyond the node's images are skipped,
 *   and the replacement may carry at most the node's not-offloaded image count;
 * - the coverage note when no request capture is given.
 */
import { appendixBEvents } from '@compaction-sim/fixtures'
import type { CapturedRequest, LogEvent } from '@compaction-sim/core'
import { describe, expect, it } from 'vitest'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixBCapture } from './captures.ts'
import { appendixB, at, checkedReport, editedAppendixB, renumber, reportOf, violationLines, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

const ID_1 = `sha256:${'1'.repeat(64)}`
const ID_A = `sha256:${'a'.repeat(64)}`
const ID_B = `sha256:${'b'.repeat(64)}`
const ID_C = `sha256:${'c'.repeat(64)}`

/** A named PNG (`a.png`, sha256:aaaa…) and an unnamed one (sha256:bbbb…). */
const IMAGE_A = { type: 'image', attachment: { attachmentId: ID_A, mediaType: 'image/png', bytes: 2048, width: 64, height: 64, name: 'a.png' } }
const IMAGE_B = { type: 'image', attachment: { attachmentId: ID_B, mediaType: 'image/png', bytes: 2048, width: 64, height: 64 } }

/** The §6.5 placeholders of IMAGE_A / IMAGE_B (Appendix A text; path `attachments/<12 hex>.png`). */
const PLACEHOLDER_A = '[image omitted from this request to stay within the provider\'s image budget: a.png; read-only copy: attachments/aaaaaaaaaaaa.png. Read it again if you still need it.]'
const PLACEHOLDER_B = `[image omitted from this request to stay within the provider's image budget: ${ID_B}; read-only copy: attachments/bbbbbbbbbbbb.png. Read it again if you still need it.]`

const text = (t: string): { type: 'text'; text: string } => ({ type: 'text', text: t })

/** The blocks inside the tool-result block of the tool/result `e`. */
function inner(e: AppendixEvent): unknown[] {
  return ((e.data['message'] as { content: Array<{ content: unknown[] }> }).content[0] as { content: unknown[] }).content
}

/** INV-39's internal failures (a hook that threw disables the check). */
const failures = (r: CheckReport): string[] => r.internalErrors.filter((f) => f.id === 'INV-39').map((f) => f.message)

async function withCapture(events: readonly AppendixEvent[], requests: readonly CapturedRequest[]): Promise<CheckReport> {
  return reportOf(await checkLog([...events] as never, { dialect: 'seed', requests }))
}

/** The #28 message exactly as logged (both images, no placeholder). */
function loggedM_U2(): CapturedRequest['messages'][number] {
  const e28 = appendixBEvents()[28] as LogEvent & { data: { id: string; role: string; content: unknown[]; source: unknown } }
  return structuredClone(e28.data) as never
}

describe('INV-39, request half: which offloaded attachment ids are remembered per message', () => {
  /** The Appendix B capture with request `index` showing `m-u2` as logged, images and all. */
  function resendingM_U2(index: number): CapturedRequest[] {
    const capture = appendixBCapture(appendixBEvents())
    const req = capture[index] as CapturedRequest
    expect(req.messages.filter((m) => m.id === 'm-u2')).toHaveLength(1)
    req.messages = req.messages.map((m) => (m.id === 'm-u2' ? loggedM_U2() : m))
    return capture
  }

  it('targets naming no live node (#12, pruned) or an index beyond the images (#28[2]) are passed over; #28[0] still counts', async () => {
    const events = editedAppendixB((e) => {
      at(e, 30).data['targets'] = [{ seq: 12, imageIndexes: [0] }, { seq: 28, imageIndexes: [0, 2] }]
    })
    // Request 3 (revision 32) is the retry after #30: it resends m-u2 with ci-1.png.
    const r = await withCapture(events, resendingM_U2(3))
    expect(violationLines(r, 'INV-39')).toEqual([`INV-39@32: captured request 3 (dispatched at revision 32) shows offloaded image ${ID_1} of message m-u2 again`])
    expect(failures(r)).toEqual([])
  })

  it('a second offload of m-u2 (#53, ci-2.png) adds to the first (#30, ci-1.png): the summary request naming both is reported for ci-1.png', async () => {
    // Request 6 (revision 54) is the summary retry after #53; it holds m-u2 as a region message.
    const r = await withCapture(appendixB(), resendingM_U2(6))
    expect(violationLines(r, 'INV-39')).toEqual([`INV-39@54: captured request 6 (dispatched at revision 54) shows offloaded image ${ID_1} of message m-u2 again`])
    expect(failures(r)).toEqual([])
  })

  it('a tool/result target is remembered under its message id (m-t2 of #49)', async () => {
    const events = editedAppendixB((e) => {
      inner(at(e, 49)).push(IMAGE_A)
      at(e, 53).data['targets'] = [{ seq: 28, imageIndexes: [1] }, { seq: 49, imageIndexes: [0] }]
    })
    const capture = appendixBCapture(appendixBEvents())
    // Request 7 (revision 59), after the compaction, resends m-t2 with the offloaded a.png.
    const req = capture[7] as CapturedRequest
    const m49 = structuredClone((at(events, 49).data as { message: CapturedRequest['messages'][number] }).message)
    expect(req.messages.filter((m) => m.id === 'm-t2')).toHaveLength(1)
    req.messages = req.messages.map((m) => (m.id === 'm-t2' ? m49 : m))
    const r = await withCapture(events, capture)
    expect(violationLines(r, 'INV-39')).toEqual([`INV-39@59: captured request 7 (dispatched at revision 59) shows offloaded image ${ID_A} of message m-t2 again`])
    expect(failures(r)).toEqual([])
  })

  it('an offloaded image of an assistant/message (no data-level id) is not remembered, not even for a captured message without an id', async () => {
    const events = editedAppendixB((e) => {
      const message = at(e, 10).data['message'] as { content: unknown[] }
      message.content.push({ type: 'image', attachment: { attachmentId: ID_C, mediaType: 'image/png', bytes: 2048, width: 64, height: 64 } })
      at(e, 30).data['targets'] = [{ seq: 10, imageIndexes: [0] }, { seq: 28, imageIndexes: [0] }]
    })
    const capture = resendingM_U2(3)
    const req = capture[3] as CapturedRequest
    req.messages = [...req.messages, { role: 'assistant', content: [{ type: 'image', attachment: { attachmentId: ID_C, mediaType: 'image/png', bytes: 2048, width: 64, height: 64 } }] } as never]
    const r = await withCapture(events, capture)
    expect(violationLines(r, 'INV-39')).toEqual([`INV-39@32: captured request 3 (dispatched at revision 32) shows offloaded image ${ID_1} of message m-u2 again`])
    expect(failures(r)).toEqual([])
  })
})

/**
 * Appendix B #0 … #15 with the read result #12 carrying [its text, a.png, unnamed B] and an image/offload
 * `targets` inserted before step/end #13 — so: offload #13, step/end #14, prune #15, replacement #16 of
 * 12…12 — whose tool-result block holds its pruned text followed by `kept`.
 */
function offloadThenPrune(targets: unknown[], kept: unknown[], edit: (e: Events) => void = () => undefined): Events {
  const e = appendixB().filter((x) => x.seq <= 15)
  inner(at(e, 12)).push(IMAGE_A, IMAGE_B)
  inner(at(e, 15)).push(...kept)
  const offload = { seq: 13, time: 1700000000067, type: 'image/offload', data: { targets } } as AppendixEvent
  e.splice(13, 0, offload)
  renumber(e)
  edit(e)
  return e
}

describe('INV-39, prune half: a single-node replacement of a node with offloaded images', () => {
  it('keeping the placeholder of a.png and the not-offloaded image B (a non-text block): clean, no failure', async () => {
    const r = await checkedReport(offloadThenPrune([{ seq: 12, imageIndexes: [0] }], [text(PLACEHOLDER_A), IMAGE_B]))
    expect(violationLines(r, 'INV-39')).toEqual([])
    expect(failures(r)).toEqual([])
  })

  it('dropping both placeholders: each lost one is named by image name, else attachment id', async () => {
    const r = await checkedReport(offloadThenPrune([{ seq: 12, imageIndexes: [0, 1] }], [text('no images here')]))
    expect(violationLines(r, 'INV-39')).toEqual([
      'INV-39@16: the prune replacement of #12 lost the placeholder of offloaded image 0 (a.png)',
      `INV-39@16: the prune replacement of #12 lost the placeholder of offloaded image 1 (${ID_B})`,
    ])
    expect(failures(r)).toEqual([])
  })

  it('the placeholder of B kept, a.png\'s only in an altered text: a.png is reported lost', async () => {
    const r = await checkedReport(offloadThenPrune([{ seq: 12, imageIndexes: [0, 1] }], [text(`${PLACEHOLDER_A} `), text(PLACEHOLDER_B)]))
    expect(violationLines(r, 'INV-39')).toEqual(['INV-39@16: the prune replacement of #12 lost the placeholder of offloaded image 0 (a.png)'])
  })

  it('carrying both images beside the placeholder while a.png is offloaded: 2 images, only 1 not offloaded', async () => {
    const r = await checkedReport(offloadThenPrune([{ seq: 12, imageIndexes: [0] }], [text(PLACEHOLDER_A), IMAGE_A, IMAGE_B]))
    expect(violationLines(r, 'INV-39')).toEqual(['INV-39@16: the prune replacement of #12 carries 2 images; only 1 of the node\'s images are not offloaded'])
  })

  it('an offload mark beyond the node\'s images (index 5) is skipped, without a failure', async () => {
    // Marks {0, 5}: 2 − 2 = 0 images may stay; the replacement keeps none.
    const r = await checkedReport(offloadThenPrune([{ seq: 12, imageIndexes: [0, 5] }], [text('no images here')]))
    expect(violationLines(r, 'INV-39')).toEqual(['INV-39@16: the prune replacement of #12 lost the placeholder of offloaded image 0 (a.png)'])
    expect(failures(r)).toEqual([])
  })

  it('a second replacement of 12…12 after #12 is gone is not judged (the node is no longer live)', async () => {
    const r = await checkedReport(offloadThenPrune([{ seq: 12, imageIndexes: [0] }], [text('no images here')], (e) => {
      const again = structuredClone(at(e, 16))
      again.seq = 17
      again.time = 1700000000085
      e.push(again)
    }))
    expect(violationLines(r, 'INV-39')).toEqual(['INV-39@16: the prune replacement of #12 lost the placeholder of offloaded image 0 (a.png)'])
    expect(failures(r)).toEqual([])
  })

  it('a two-node replacement 3…12 whose first node has an offloaded image is not judged', async () => {
    const r = await checkedReport(offloadThenPrune([{ seq: 3, imageIndexes: [0] }], [text('no images here')], (e) => {
      (at(e, 3).data['content'] as unknown[]).push(IMAGE_A)
      at(e, 16)['surfaceOp'] = { op: 'replace', start: 3, end: 12 }
    }))
    expect(violationLines(r, 'INV-39')).toEqual([])
    expect(failures(r)).toEqual([])
  })

  it('a replacement of a node without offloaded images is not judged, even when it adds an image', async () => {
    const r = await checkedReport(editedAppendixB((e) => { inner(at(e, 15)).push(IMAGE_A) }))
    expect(violationLines(r, 'INV-39')).toEqual([])
  })
})

describe('INV-39 coverage', () => {
  it('offloads but no request capture: partial, one skipped instance, with the reason', async () => {
    const r = await checkedReport(appendixB())
    expect(r.coverage.find((c) => c.id === 'INV-39')).toEqual({
      id: 'INV-39', status: 'partial', reason: 'no request capture: the request half of INV-39 is not evaluated', skipped: 1,
    })
  })
})
