/**
 * §12.6 Image offload: INV-36 … INV-40 (seed only: the rc.8 dialect has no `image/offload` and no
 * `compaction/summary-error`, §14.1). Offload targets are re-selected from the failed request's nodes
 * (§6.3; the surface at the failing dispatch, or the bracket's region for a summary request) and compared.
 */
import {
  countImages, hardeningOf, harnessReadOnlyPath, imageOccurrences, isOffloadPlaceholder, jsonEqual, messageContent, offloadCountOf, offloadPlaceholder,
  type LlmFailure, type LogEvent, type OffloadTarget, type SessionEvent,
} from '@compaction-sim/core'
import type { CheckerModel } from './model.ts'
import { innerContent } from './pruning.ts'
import { RequestCursor } from './requests.ts'
import { at, blockText, sameSeqs, seqList } from './support.ts'
import type { Applicability, InvariantCheck, InvariantId, Reporter, RunContext } from './types.ts'
import { plural } from '../plural.ts'

type Check = InvariantCheck<CheckerModel>

const IMAGE_OFFLOAD_REQUIRED = 'IMAGE_OFFLOAD_REQUIRED'

function seedOnly(ctx: RunContext): Applicability {
  return ctx.dialect === 'seed'
    ? { kind: 'applies' }
    : { kind: 'not-applicable', reason: 'the rc.8 dialect has no image/offload and no compaction/summary-error (§14.1)' }
}

/**
 * A seed-only check that judges each `image/offload` before it is folded (INV-36 … INV-38 share this shape;
 * `judge` sees the offload, the model with the surface the offload targets, and the check's reporter).
 */
function offloadCheck(
  id: InvariantId, statement: string, judge: (e: SessionEvent<'image/offload'>, m: CheckerModel, r: Reporter) => void,
): Check {
  return {
    id, family: 'offload', statement, applicability: seedOnly,
    create: (_ctx, r) => ({ types: ['image/offload'], before: (event, _item, m) => judge(event as SessionEvent<'image/offload'>, m, r) }),
  }
}

/** INV-36: targets are unique current user/tool nodes with in-range, ascending, not-yet-offloaded indexes. */
const inv36 = offloadCheck(
  'INV-36',
  'Offload target validity: at least one target; unique current user/message or tool/result nodes; indexes unique, ascending, within the node\'s image count, and not yet offloaded.',
  (e, m, r) => {
    const targets = e.data.targets
    if (targets.length === 0) {
      r.violation(e.seq, 'an image/offload without targets')
      return
    }
    const seen = new Set<number>()
    let total = 0
    for (const t of targets) {
      if (seen.has(t.seq)) r.violation(e.seq, `node ${at(t.seq)} is targeted twice`)
      seen.add(t.seq)
      const node = m.event(t.seq)
      if (m.position(t.seq) < 0 || node === undefined) {
        r.violation(e.seq, `target ${at(t.seq)} is not a current surface node`)
        continue
      }
      if (node.type !== 'user/message' && node.type !== 'tool/result') {
        r.violation(e.seq, `target ${at(t.seq)} is a ${node.type}; only user/message and tool/result images are offloaded`)
        continue
      }
      const images = countImages(messageContent(node))
      const already = m.offloadedIndexes(t.seq)
      let prev = -1
      for (const i of t.imageIndexes) {
        if (i <= prev) r.violation(e.seq, `imageIndexes of ${at(t.seq)} are not strictly ascending`)
        prev = Math.max(prev, i)
        if (i >= images) r.violation(e.seq, `image index ${i} of ${at(t.seq)} is out of range (${plural(images, 'image')})`)
        else if (already.has(i)) r.violation(e.seq, `image ${i} of ${at(t.seq)} is already offloaded`)
      }
      total += t.imageIndexes.length
    }
    if (total === 0) r.violation(e.seq, 'an image/offload that names no image index')
  },
)

/** The failure an offload answers (§6.6, §6.8), read off the line right before it; null when there is none. */
type OffloadCause =
  | { kind: 'conversation'; seq: number; failure: LlmFailure }
  | { kind: 'summary'; seq: number; failure: LlmFailure; region: readonly number[] }

function causeOf(m: CheckerModel): OffloadCause | null {
  const prev = m.prevItem
  if (prev === null || prev.duplicate || prev.event === null) return null
  const e = prev.event as SessionEvent
  if (e.type === 'assistant/chunk') {
    const chunk = e.data.chunk
    const step = m.step
    if (chunk.type !== 'finish' || chunk.reason.kind !== 'error' || step === null || step.turn !== e.data.turn || step.step !== e.data.step) return null
    return { kind: 'conversation', seq: e.seq, failure: chunk.reason.failure }
  }
  if (e.type === 'compaction/summary-error') {
    const b = m.bracket
    if (b === null || b.start.data.compactionId !== e.data.compactionId) return null
    return { kind: 'summary', seq: e.seq, failure: e.data.failure, region: e.data.shadowedSeqs }
  }
  return null
}

/** The IMAGE_OFFLOAD_REQUIRED failure an offload answers, or null (INV-37 reports an offload without one). */
function offloadCause(m: CheckerModel): OffloadCause | null {
  const cause = causeOf(m)
  return cause !== null && cause.failure.code === IMAGE_OFFLOAD_REQUIRED ? cause : null
}

/**
 * INV-37: an offload immediately follows an IMAGE_OFFLOAD_REQUIRED failure with a valid count, in its step or
 * bracket. A `text/offload` (hardened oversizedUserText, HARD-5) has no failure as its cause: the rule is; it
 * is accepted only when the manifest switches that rule on (HARD-5 then judges it), and reported otherwise.
 */
const inv37Image = offloadCheck(
  'INV-37',
  'Offload causality: every image/offload immediately follows an IMAGE_OFFLOAD_REQUIRED failed finish in the open step, or such a summary-error in the open bracket (targets inside its region), with a positive integer offloadImages.',
  (e, m, r) => {
    const cause = offloadCause(m)
    if (cause === null) {
      r.violation(e.seq, `image/offload does not follow an IMAGE_OFFLOAD_REQUIRED failure of the open step or bracket (the line before is ${m.prevItem?.type ?? 'nothing'})`)
      return
    }
    if (offloadCountOf(cause.failure) === undefined) {
      r.violation(e.seq, `the failure ${at(cause.seq)} has offloadImages ${JSON.stringify(cause.failure.offloadImages)}, not a positive integer: it is not handleable (§6.1)`)
    }
    if (cause.kind === 'summary') {
      const region = new Set(cause.region)
      const outside = e.data.targets.map((t) => t.seq).filter((s) => !region.has(s))
      if (outside.length > 0) r.violation(e.seq, `targets ${seqList(outside)} lie outside the summary region ${seqList(cause.region)} of ${at(cause.seq)}`)
    }
  },
)

const inv37: Check = {
  ...inv37Image,
  create: (ctx, r) => {
    const image = inv37Image.create(ctx, r)
    const textRule = hardeningOf(ctx.inputs.policy).oversizedUserText !== null
    return {
      types: ['image/offload', 'text/offload'],
      before: (event, item, m) => {
        if (event.type === 'image/offload') image.before?.(event, item, m)
        else if (!textRule) r.violation(event.seq, 'text/offload is the hardened oversizedUserText projection (HARD-5), but this run\'s manifest does not switch hardening.oversizedUserText on')
      },
    }
  },
}

/** §6.3 selection: the first `count` not-yet-offloaded occurrences of `nodes` (user/tool only), depth-first. */
function expectedTargets(nodes: readonly number[], count: number, m: CheckerModel): OffloadTarget[] {
  const out: OffloadTarget[] = []
  let selected = 0
  const visited = new Set<number>()
  for (const seq of nodes) {
    if (selected >= count) break
    if (visited.has(seq)) continue
    visited.add(seq)
    const event: LogEvent | undefined = m.event(seq)
    if (event === undefined || (event.type !== 'user/message' && event.type !== 'tool/result')) continue
    const images = countImages(messageContent(event))
    const already = m.offloadedIndexes(seq)
    const indexes: number[] = []
    for (let i = 0; i < images && selected < count; i++) {
      if (already.has(i)) continue
      indexes.push(i)
      selected++
    }
    if (indexes.length > 0) out.push({ seq: event.seq, imageIndexes: indexes })
  }
  return out
}

function renderTargets(targets: readonly OffloadTarget[]): string {
  return targets.length === 0 ? 'none' : targets.map((t) => `${at(t.seq)}[${t.imageIndexes.join(',')}]`).join(' ')
}

/** INV-38: the selected occurrences are the oldest not-yet-offloaded ones of the failed request, at most offloadImages. */
const inv38 = offloadCheck(
  'INV-38',
  'Offload selection is oldest-first and bounded: exactly the first min(offloadImages, eligible) not-yet-offloaded occurrences of the failed request\'s eligible nodes, in message order, images depth-first.',
  (e, m, r) => {
    const cause = offloadCause(m)
    if (cause === null) return // INV-37
    const count = offloadCountOf(cause.failure)
    if (count === undefined) return // INV-37
    // Conversation: only chunks were appended since the dispatch, so the request's nodes are the surface now (§6.3).
    const nodes = cause.kind === 'conversation' ? m.nodes : cause.region
    const expected = expectedTargets(nodes, count, m)
    const actual = e.data.targets.map((t) => ({ seq: t.seq, imageIndexes: t.imageIndexes }))
    if (!jsonEqual(actual, expected)) {
      r.violation(e.seq, `offloads ${renderTargets(actual)}; the ${count} oldest eligible ${count === 1 ? 'occurrence' : 'occurrences'} of the failed ${cause.kind} request (${at(cause.seq)}) are ${renderTargets(expected)}`)
    }
  },
)

/** INV-39: offloaded occurrences never come back: not in a later prune replacement, not in a later captured request. */
const inv39: Check = {
  id: 'INV-39',
  family: 'offload',
  statement: 'Offload permanence: once (seq, i) is offloaded, every later prune replacement of seq carries its placeholder instead of the image, and every later captured request containing the node shows the placeholder.',
  applicability: seedOnly,
  create: (ctx, r) => {
    /** Message id → attachment ids offloaded in it (a captured message is matched by id, §10.5). */
    const offloadedByMessage = new Map<string, Set<string>>()
    const cursor = ctx.requests === null ? null : new RequestCursor(ctx.requests)
    let anyOffload = false
    return {
    types: ['image/offload', 'tool/result'],
    input: (item) => {
      if (cursor === null) return
      const due = cursor.upTo(item.seq)
      if (offloadedByMessage.size === 0) return
      for (const req of due) {
        for (const message of req.messages) {
          const gone = offloadedByMessage.get(message.id)
          if (gone === undefined) continue
          const images = imageOccurrences(message.content)
          const back = images.filter((b) => gone.has(b.attachment.attachmentId))
          if (back.length > 0) r.violation(item.seq, `captured request ${req.index} (dispatched at revision ${req.logRevisionAtDispatch}) shows offloaded image ${back[0]?.attachment.attachmentId ?? '?'} of message ${message.id} again`)
        }
      }
    },
    before: (event, _item, m) => {
      if (event.type === 'image/offload') {
        anyOffload = true
        for (const t of (event as SessionEvent<'image/offload'>).data.targets) {
          const node = m.event(t.seq)
          if (node === undefined) continue
          const images = imageOccurrences(messageContent(node))
          const id = (node.data as { id?: unknown; message?: { id?: unknown } })
          const messageId = node.type === 'tool/result' ? id.message?.id : id.id
          if (typeof messageId !== 'string') continue
          let set = offloadedByMessage.get(messageId)
          if (set === undefined) offloadedByMessage.set(messageId, set = new Set())
          for (const i of t.imageIndexes) {
            const image = images[i]
            if (image !== undefined) set.add(image.attachment.attachmentId)
          }
        }
        return
      }
      const op = 'surfaceOp' in event ? event.surfaceOp : undefined
      if (typeof op !== 'object' || op.start !== op.end) return
      const marks = m.offloadedIndexes(op.start)
      const original = m.event(op.start)
      if (marks.size === 0 || original === undefined) return
      const occurrences = imageOccurrences(messageContent(original))
      const replacement = innerContent((event as SessionEvent<'tool/result'>).data.message) ?? []
      const texts = new Set(replacement.map((b) => blockText(b)).filter((t): t is string => t !== undefined && isOffloadPlaceholder(t)))
      for (const i of marks) {
        const ref = occurrences[i]?.attachment
        if (ref === undefined) continue
        const placeholder = offloadPlaceholder(ref, harnessReadOnlyPath(ref))
        if (!texts.has(placeholder)) r.violation(event.seq, `the prune replacement of ${at(op.start)} lost the placeholder of offloaded image ${i} (${ref.name ?? ref.attachmentId})`)
      }
      const keptImages = countImages(replacement)
      const liveImages = occurrences.length - marks.size
      if (keptImages > liveImages) r.violation(event.seq, `the prune replacement of ${at(op.start)} carries ${plural(keptImages, 'image')}; only ${liveImages} of the node's images are not offloaded`)
    },
    end: () => {
      if (cursor === null && anyOffload) r.skip(-1, 'no request capture: the request half of INV-39 is not evaluated')
    },
    }
  },
}

/** INV-40: a summary-error sits inside its bracket before the summary, and is followed by an offload (IOR) or end{error}. */
const inv40: Check = {
  id: 'INV-40',
  family: 'offload',
  statement: 'Summary-error placement: only inside an open bracket before its summary; the next bracket event is an image/offload (only for IMAGE_OFFLOAD_REQUIRED) or compaction/end with error; every attempt record names the bracket\'s entry span.',
  applicability: seedOnly,
  create: (_ctx, r) => {
    let pending: SessionEvent<'compaction/summary-error'> | null = null
    /** The span the bracket's first summary-error named: every later attempt record must name it too (§7.3). */
    let attemptSpan: { seq: number; seqs: readonly number[] } | null = null
    /** A summary-error records the selected span (§1.4.16): consistent ends, the current positional span, the bracket's entry span. */
    const judgeSpan = (e: SessionEvent<'compaction/summary-error'>, m: CheckerModel): void => {
      const seqs = e.data.shadowedSeqs
      const range = e.data.shadowedRange
      if (seqs.length === 0 || range.start !== seqs[0] || range.end !== seqs[seqs.length - 1]) {
        r.violation(e.seq, `shadowedRange ${range.start}…${range.end} does not match the first and last of shadowedSeqs ${seqList(seqs)}`)
        return
      }
      const span = m.span(range.start, range.end)
      if (!span.ok) r.violation(e.seq, `the recorded span ${range.start}…${range.end} is not on the surface: ${span.reason}`)
      else if (!sameSeqs(span.seqs, seqs)) r.violation(e.seq, `shadowedSeqs ${seqList(seqs)} are not the nodes of the span ${range.start}…${range.end} (${seqList(span.seqs)})`)
      if (attemptSpan === null) attemptSpan = { seq: e.seq, seqs }
      else if (!sameSeqs(attemptSpan.seqs, seqs)) r.violation(e.seq, `names shadowedSeqs ${seqList(seqs)}, but summary-error ${at(attemptSpan.seq)} of the same bracket named ${seqList(attemptSpan.seqs)}: every attempt summarises the entry span (§7.3)`)
    }
    return {
      types: ['compaction/start', 'compaction/summary', 'compaction/summary-error', 'compaction/end', 'image/offload', 'session/end-seed'],
      before: (event, _item, m) => {
        const p = pending
        if (event.type === 'session/end-seed') {
          pending = null
          return
        }
        if (p !== null) {
          pending = null
          // Reported where it is detected: the bracket event that does not follow a summary-error as §7.4 allows.
          if (event.type === 'image/offload') {
            if (p.data.failure.code !== IMAGE_OFFLOAD_REQUIRED) r.violation(event.seq, `image/offload after summary-error ${at(p.seq)} whose code is ${p.data.failure.code}`)
          } else if (event.type === 'compaction/end') {
            if ((event as SessionEvent<'compaction/end'>).data.error === undefined) r.violation(event.seq, `compaction/end without error right after summary-error ${at(p.seq)}`)
          } else {
            r.violation(event.seq, `${event.type} follows summary-error ${at(p.seq)}; the next bracket event must be image/offload or compaction/end with error`)
          }
        }
        if (event.type === 'compaction/start') attemptSpan = null
        if (event.type === 'compaction/summary') {
          const summary = event as SessionEvent<'compaction/summary'>
          if (attemptSpan !== null && m.bracket?.start.data.compactionId === summary.data.compactionId && !sameSeqs(attemptSpan.seqs, summary.data.shadowedSeqs)) {
            r.violation(summary.seq, `the summary names shadowedSeqs ${seqList(summary.data.shadowedSeqs)}, but summary-error ${at(attemptSpan.seq)} of the same bracket named ${seqList(attemptSpan.seqs)}: every attempt summarises the entry span (§7.3)`)
          }
          return
        }
        if (event.type !== 'compaction/summary-error') return
        const e = event as SessionEvent<'compaction/summary-error'>
        const b = m.bracket
        if (b === null || b.start.data.compactionId !== e.data.compactionId) r.violation(e.seq, 'compaction/summary-error outside its open bracket')
        else if (b.summary !== null) r.violation(e.seq, `compaction/summary-error after the bracket's summary ${at(b.summary.seq)}`)
        pending = e
        judgeSpan(e, m)
      },
    }
  },
}

/** The §12.6 checks, in id order. */
export const OFFLOAD_CHECKS: readonly Check[] = [inv36, inv37, inv38, inv39, inv40]
