/**
 * The §12.6 image-offload checks (`src/checker/offload.ts`, lines 125–224: INV-37's summary region and
 * text/offload refusal, INV-38's re-selection and rendering, INV-39's capture and prune halves) on small edits
 * of Appendix B. There, #28 (`user/message` m-u2) carries two images (ci-1.png = sha256:1111…, ci-2.png =
 * sha256:2222…); the failed finish #29 (IMAGE_OFFLOAD_REQUIRED, offloadImages 1) is answered by the offload
 * #30 of #28[0]; the summary-error #52 (region [3, 10, 15, 23, 28, 37, 42], offloadImages 1) by the offload
 * #53 of #28[1]. Every expectation is written out by hand from §6.3 and §12.6. It pins:
 * - INV-37: the out-of-region message of a summary offload (every outside target, in target order), and the
 *   exact refusal of a `text/offload` without hardening.oversizedUserText;
 * - INV-38: the clean Appendix B selection (user/message nodes are eligible), a tool/result image is eligible;
 *   the rendering of an empty and of a multi-target, multi-index target list, and "occurrence"/"occurrences" by the count; that an
 *   unhandleable count is left to INV-37; that a summary request selects inside its region only, once per
 *   region node, skipping region seqs that are no live node and system nodes, whatever their images;
 * - INV-39: the "not evaluated" note only for a log with an offload; the prune half (a replacement of an
 *   offloaded tool/result losing the placeholder); the capture half (clean on the real capture, images of
 *   messages without offloads are not judged, and the exact message of a request that resends an offloaded image).
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '@compaction-sim/core'
import { checkLog, type CheckReport } from '../../src/checker/run.ts'
import { appendixBCapture } from './captures.ts'
import { appendixB, at, checkedReport, editedAppendixB, reportOf, violationLines, type AppendixEvent } from './support.ts'

type Events = AppendixEvent[]

const IMG1 = 'sha256:1111111111111111111111111111111111111111111111111111111111111111'

/** The failure object of the failed finish #29. */
const failure29 = (e: Events): Record<string, unknown> =>
  ((at(e, 29).data['chunk'] as { reason: { failure: Record<string, unknown> } }).reason.failure)
/** The failure object of the summary-error #52. */
const failure52 = (e: Events): Record<string, unknown> => at(e, 52).data['failure'] as Record<string, unknown>
const setTargets = (e: Events, seq: number, targets: Array<{ seq: number; imageIndexes: number[] }>): void => {
  at(e, seq).data['targets'] = targets
}
const setRegion = (e: Events, seqs: number[]): void => {
  at(e, 52).data['shadowedSeqs'] = seqs
}
/** The internal failures of one check (a hook that threw). */
const failuresOf = (r: CheckReport, id: string): unknown[] => r.internalErrors.filter((f) => f.id === id)

const image = (id: string, name: string): Record<string, unknown> => ({
  type: 'image', attachment: { attachmentId: id, mediaType: 'image/png', bytes: 1000, width: 10, height: 10, name },
})

describe('INV-37 — summary region and text/offload', () => {
  it('Appendix B: the in-bracket offload #53 of #28 lies inside the region, nothing is reported', async () => {
    const r = await checkedReport(appendixB())
    expect(violationLines(r, 'INV-37')).toEqual([])
  })

  it('a summary offload naming #49 and #2 besides #28 names both outside targets, in target order', async () => {
    const r = await checkedReport(editedAppendixB((e) => setTargets(e, 53, [
      { seq: 28, imageIndexes: [1] }, { seq: 49, imageIndexes: [0] }, { seq: 2, imageIndexes: [0] },
    ])))
    expect(violationLines(r, 'INV-37')).toEqual([
      'INV-37@53: targets [49, 2] lie outside the summary region [3, 10, 15, 23, 28, 37, 42] of #52',
    ])
  })

  it('a text/offload in a run without hardening.oversizedUserText is refused with the HARD-5 message', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      e.push({ seq: 67, time: 1700000000340, type: 'text/offload', data: { seq: 3, blockIndex: 0, tokens: 20, bound: 10, path: '.compaction-sim/user-text/m-u1/0.txt' } })
    }))
    expect(violationLines(r, 'INV-37')).toEqual([
      'INV-37@67: text/offload is the hardened oversizedUserText projection (HARD-5), but this run\'s manifest does not switch hardening.oversizedUserText on',
    ])
  })
})

describe('INV-38 — re-selection and its message', () => {
  it('Appendix B: both offloads are the expected selection (user/message #28 is eligible)', async () => {
    const r = await checkedReport(appendixB())
    expect(violationLines(r, 'INV-38')).toEqual([])
    expect(failuresOf(r, 'INV-38')).toEqual([])
  })

  it('an offload without targets renders "none" against the one expected occurrence', async () => {
    const r = await checkedReport(editedAppendixB((e) => setTargets(e, 30, [])))
    expect(violationLines(r, 'INV-38')).toEqual([
      'INV-38@30: offloads none; the 1 oldest eligible occurrence of the failed conversation request (#29) are #28[0]',
      // Nothing was offloaded at #30, so #28[0] is still the oldest not-yet-offloaded occurrence at #53.
      'INV-38@53: offloads #28[1]; the 1 oldest eligible occurrence of the failed summary request (#52) are #28[0]',
    ])
  })

  it('several targets and indexes are rendered space- and comma-separated, with "occurrences" for a count of 2', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      failure29(e)['offloadImages'] = 2
      setTargets(e, 30, [{ seq: 28, imageIndexes: [0, 1] }, { seq: 3, imageIndexes: [0] }])
    }))
    expect(violationLines(r, 'INV-38')).toEqual([
      'INV-38@30: offloads #28[0,1] #3[0]; the 2 oldest eligible occurrences of the failed conversation request (#29) are #28[0,1]',
      // #30 offloaded both images of #28 (the only images of the region), so #53 has nothing left to select.
      'INV-38@53: offloads #28[1]; the 1 oldest eligible occurrence of the failed summary request (#52) are none',
    ])
  })

  it('an unhandleable offloadImages (0) is INV-37\'s alone: INV-38 does not re-select', async () => {
    const r = await checkedReport(editedAppendixB((e) => { failure29(e)['offloadImages'] = 0 }))
    expect(violationLines(r, 'INV-37')).toEqual([
      'INV-37@30: the failure #29 has offloadImages 0, not a positive integer: it is not handleable (§6.1)',
    ])
    expect(violationLines(r, 'INV-38')).toEqual([])
  })

  it('a summary request selects inside its region only: a region without #28 expects none', async () => {
    const r = await checkedReport(editedAppendixB((e) => setRegion(e, [3, 10, 15, 23, 37, 42])))
    expect(violationLines(r, 'INV-38')).toEqual([
      'INV-38@53: offloads #28[1]; the 1 oldest eligible occurrence of the failed summary request (#52) are none',
    ])
  })

  it('a region naming #28 twice selects its one remaining image once, even for offloadImages 3', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      setRegion(e, [3, 10, 15, 23, 28, 28, 37, 42])
      failure52(e)['offloadImages'] = 3
      setTargets(e, 53, [])
    }))
    expect(violationLines(r, 'INV-38')).toEqual([
      'INV-38@53: offloads none; the 3 oldest eligible occurrences of the failed summary request (#52) are #28[1]',
    ])
  })

  it('a region seq that is no live node (#5, a request/context) is skipped without failing the check', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      setRegion(e, [3, 5, 10, 15, 23, 28, 37, 42])
      setTargets(e, 53, [])
    }))
    expect(failuresOf(r, 'INV-38')).toEqual([])
    expect(violationLines(r, 'INV-38')).toEqual([
      'INV-38@53: offloads none; the 1 oldest eligible occurrence of the failed summary request (#52) are #28[1]',
    ])
  })

  it('an image inside the tool-result block of #15 (the prune replacement of #12) is the oldest eligible occurrence', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      const result = at(e, 15).data['message'] as { content: Array<{ content: unknown[] }> }
      result.content[0]?.content.push(image('sha256:' + '5'.repeat(64), 'tool.png'))
    }))
    expect(violationLines(r, 'INV-38')).toEqual([
      'INV-38@30: offloads #28[0]; the 1 oldest eligible occurrence of the failed conversation request (#29) are #15[0]',
      // #15 is also in the summary region (before #28), and its image is still not offloaded at #53.
      'INV-38@53: offloads #28[1]; the 1 oldest eligible occurrence of the failed summary request (#52) are #15[0]',
    ])
  })

  it('an image in the system message #2 is never eligible: #28[0] is still the oldest', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      (at(e, 2).data['content'] as unknown[]).push(image('sha256:' + '3'.repeat(64), 'sys.png'))
    }))
    expect(violationLines(r, 'INV-38')).toEqual([])
    expect(failuresOf(r, 'INV-38')).toEqual([])
  })
})

describe('INV-39 — permanence', () => {
  const NOTE = { id: 'INV-39', status: 'partial', reason: 'no request capture: the request half of INV-39 is not evaluated', skipped: 1 }

  it('without a capture, only a log with an offload notes the request half as not evaluated', async () => {
    const turn1 = await checkedReport(appendixB().filter((e) => e.seq <= 25))
    expect(turn1.coverage.find((c) => c.id === 'INV-39')).toEqual({ id: 'INV-39', status: 'evaluated', reason: '', skipped: 0 })
    const full = await checkedReport(appendixB())
    expect(full.coverage.find((c) => c.id === 'INV-39')).toEqual(NOTE)
  })

  it('a prune replacement of an offloaded tool/result that lost the placeholder is reported', async () => {
    const r = await checkedReport(editedAppendixB((e) => {
      const result = at(e, 12).data['message'] as { content: Array<{ content: unknown[] }> }
      result.content[0]?.content.push(image('sha256:' + '4'.repeat(64), 'shot.png'))
      // The step/end #13 becomes the offload of that image; #15 (text only) stays the prune replacement.
      const e13 = at(e, 13)
      e13.type = 'image/offload'
      e13.data = { targets: [{ seq: 12, imageIndexes: [0] }] }
    }))
    expect(violationLines(r, 'INV-39')).toEqual([
      'INV-39@15: the prune replacement of #12 lost the placeholder of offloaded image 0 (shot.png)',
    ])
  })

  it('the real capture shows every offloaded image as its placeholder, and an image of a message without offloads is not judged', async () => {
    // #42 (m-u3, no offload ever) carries an image, so the requests 4 … 7 send an image of a message INV-39 does not track.
    const withImage = (e: Events): void => { (at(e, 42).data['content'] as unknown[]).push(image('sha256:' + '6'.repeat(64), 'u3.png')) }
    const events = editedAppendixB(withImage)
    const r = reportOf(await checkLog(events, { dialect: 'seed', requests: appendixBCapture(editedAppendixB(withImage) as unknown as LogEvent[]) }))
    expect(violationLines(r, 'INV-39')).toEqual([])
    expect(failuresOf(r, 'INV-39')).toEqual([])
    expect(r.coverage.find((c) => c.id === 'INV-39')).toEqual({ id: 'INV-39', status: 'evaluated', reason: '', skipped: 0 })
  })

  it('a captured request that resends an offloaded image names the request, its revision, the image and the message', async () => {
    const events = appendixB()
    const capture = appendixBCapture(events as unknown as LogEvent[])
    const before = appendixBCapture(events as unknown as LogEvent[])
    // Request 3 (revision 32, after the offload #30) resends the messages of request 2 (revision 29): #28 with both images.
    const r3 = capture.find((c) => c.index === 3)
    const r2 = before.find((c) => c.index === 2)
    if (r3 === undefined || r2 === undefined) throw new Error('capture layout changed')
    expect([r3.logRevisionAtDispatch, r2.logRevisionAtDispatch]).toEqual([32, 29])
    r3.messages = r2.messages
    const r = reportOf(await checkLog(events, { dialect: 'seed', requests: capture }))
    expect(violationLines(r, 'INV-39')).toEqual([
      `INV-39@32: captured request 3 (dispatched at revision 32) shows offloaded image ${IMG1} of message m-u2 again`,
    ])
  })
})
