/**
 * World-truth checks WORLD-01 … WORLD-06 (issue #21): the log and its request capture (§1.1) judged against
 * the world record (`provider/world-record.ts`), i.e. what the provider actually answered, rather than only
 * against themselves (§12). They need the log, the capture and the record; without a record or a capture
 * they are not evaluated.
 *
 * Joining the world to the capture: both list requests in dispatch order (a subject's calls are sequential).
 * From the record's `captureOffset`, each world request (session-title calls aside) is paired with the next
 * capture entry of the same purpose and model; a capture entry that failed may be passed over (it never
 * reached the provider: a middleware failure, a refused route), a successful one may not. A world request the
 * world failed cannot pair with a capture entry that succeeded. A world request left without a pair is
 * WORLD-06. The window of a paired request is the log from its dispatch revision up to the next capture
 * entry's: what the subject logged about that attempt lies there.
 */
import type { CapturedRequest, ContentBlock, LogEvent, TokenUsage } from '@compaction-sim/core'
import type { WorldRecord, WorldRequest } from '../provider/world-record.ts'
import type { CheckerModel } from './model.ts'
import type { Applicability, InvariantCheck, Reporter, RunContext } from './types.ts'

type Check = InvariantCheck<CheckerModel>

/** Fault kinds that make a route's reported capacity differ from its true window by design (WORLD-02). */
const CAPACITY_FAULTS: ReadonlySet<string> = new Set(['FAULT-40', 'FAULT-41', 'FAULT-44'])

/** A world request and the capture entry that is its logged attempt. */
interface Pair {
  readonly w: WorldRequest
  readonly c: CapturedRequest
  /** The log revision the next capture entry was dispatched at (the end of this attempt's window); null = end of log. */
  readonly until: number | null
}

/** A world request no capture entry accounts for. */
interface Orphan {
  readonly w: WorldRequest
  readonly seq: number
  readonly message: string
}

/** What every world check reads: the log, the pairs, the orphans. */
interface Joined {
  readonly events: readonly LogEvent[]
  readonly pairs: readonly Pair[]
  readonly orphans: readonly Orphan[]
  /** The last seq of the log (0 for an empty log): where findings with no better place are reported. */
  readonly lastSeq: number
  /**
   * Events before this seq were written while a crashed child's world served the requests (`logOffset`): that
   * world is not in the record, so what it served cannot be judged.
   */
  readonly recordedFrom: number
}

const failedOutcome = (c: CapturedRequest): boolean => c.outcome === 'error' || c.outcome === 'aborted'

function describeWorld(w: WorldRequest): string {
  const answer = w.failureClass === null ? `a reply (${w.answer.finish ?? 'stop'})` : `${w.failureClass}${w.answer.status === null ? '' : ` (HTTP ${w.answer.status})`}`
  return `world request #${w.index} (${w.purpose}, ${w.model}) answered ${answer}`
}

/** Pairs the world's requests with the capture (module doc). Pure. */
export function joinWorld(world: WorldRecord, requests: readonly CapturedRequest[], events: readonly LogEvent[]): Joined {
  const caps = [...requests].sort((a, b) => a.index - b.index)
  const lastSeq = Math.max(0, events.length - 1)
  const clamp = (revision: number): number => Math.min(Math.max(0, revision), lastSeq)
  const pairs: Array<{ w: WorldRequest; c: CapturedRequest; at: number }> = []
  const orphans: Orphan[] = []
  let j = Math.min(world.captureOffset, caps.length)
  for (const w of world.requests) {
    if (w.purpose === 'session-title') continue
    let matched = false
    while (j < caps.length) {
      const c = caps[j] as CapturedRequest
      const fits = c.purpose === w.purpose && c.model === w.model && (w.failureClass === null || failedOutcome(c))
      if (fits) {
        pairs.push({ w, c, at: j })
        j++
        matched = true
        break
      }
      if (failedOutcome(c)) {
        j++ // a failed attempt that never reached the provider
        continue
      }
      orphans.push({
        w, seq: clamp(c.logRevisionAtDispatch),
        message: `${describeWorld(w)}, but the capture's next request #${c.index} is a ${c.purpose} request to ${c.model} that ended ${c.outcome}: a request the log and capture do not show (a hidden retry, or a request left out of the capture)`,
      })
      matched = true
      break
    }
    if (!matched) {
      orphans.push({ w, seq: lastSeq, message: `${describeWorld(w)}, but the capture has no request left for it: a request the log and capture do not show` })
    }
  }
  const out: Pair[] = pairs.map((p) => {
    const next = caps[p.at + 1]
    return { w: p.w, c: p.c, until: next === undefined ? null : next.logRevisionAtDispatch }
  })
  return { events, pairs: out, orphans, lastSeq, recordedFrom: world.logOffset }
}

/** Events of the pair's window: from its dispatch revision up to (excluding) the next dispatch's. */
function windowOf(j: Joined, p: Pair): readonly LogEvent[] {
  const from = p.c.logRevisionAtDispatch
  const to = p.until ?? j.events.length
  return j.events.slice(from, Math.max(from, to))
}

function data(e: LogEvent): Record<string, unknown> {
  return (e as unknown as { data: Record<string, unknown> }).data
}

function failureCodeOf(e: LogEvent, purpose: 'conversation' | 'compaction'): string | null | undefined {
  const d = data(e)
  if (purpose === 'compaction') return e.type === 'compaction/summary-error' ? String((d['failure'] as { code?: unknown } | undefined)?.code) : undefined
  if (e.type === 'llm/retry') return String((d['failure'] as { code?: unknown } | undefined)?.code)
  if (e.type === 'turn/end') {
    const reason = d['reason'] as { kind?: string; error?: { code?: unknown } } | undefined
    return reason?.kind === 'error' ? String(reason.error?.code) : undefined
  }
  return undefined
}

const texts = (blocks: unknown): string =>
  Array.isArray(blocks) ? (blocks as ContentBlock[]).filter((b) => b.type === 'text').map((b) => String((b as { text: string }).text)).join('') : ''

/** The usage figures every wire carries: total input, cache reads, output (a cache write is input on the OpenAI wire). */
function wireUsage(u: TokenUsage): [number, number, number] {
  return [u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0), u.cacheReadTokens ?? 0, u.outputTokens]
}

function usageText(u: TokenUsage): string {
  const [input, read, output] = wireUsage(u)
  return `input ${input} (cache read ${read}), output ${output}`
}

/** One join per run context, shared by the six checks. */
const joins = new WeakMap<RunContext, { events: LogEvent[]; joined: Joined | null }>()

function collector(ctx: RunContext): { events: LogEvent[]; joined: () => Joined } {
  let entry = joins.get(ctx)
  if (entry === undefined) {
    entry = { events: [], joined: null }
    joins.set(ctx, entry)
  }
  const e = entry
  return {
    events: e.events,
    joined: () => {
      e.joined ??= joinWorld(ctx.world as WorldRecord, ctx.requests ?? [], e.events)
      return e.joined
    },
  }
}

const needsWorld = (ctx: RunContext): Applicability => {
  if (ctx.world === null) return { kind: 'not-evaluated', reason: 'no world record (sim run writes <slug>.world.json; pass sim check --world)' }
  if (ctx.requests === null) return { kind: 'not-evaluated', reason: 'no request capture (the world is joined to the log through it)' }
  return { kind: 'applies' }
}

/**
 * A world check: the first registered check of a run context collects the folded events (one list, shared);
 * each judges the joined run at the end of the log.
 */
function worldCheck(
  id: Check['id'], statement: string, judge: (j: Joined, r: Reporter, ctx: RunContext) => void,
  applicability: (ctx: RunContext) => Applicability = needsWorld,
): Check {
  return {
    id, family: 'world', statement, applicability,
    create: (ctx, r) => {
      const first = !joins.has(ctx)
      const c = collector(ctx)
      return {
        ...(first ? { after: (event: LogEvent): void => { c.events.push(event) } } : {}),
        end: () => judge(c.joined(), r, ctx),
      }
    },
  }
}

const world01 = worldCheck(
  'WORLD-01',
  'Failure classes are the world\'s: for every attempt the world failed, the failure code the capture and the log record for it (its llm/retry or turn/end error, or its compaction/summary-error) equals the §1.2.2 class of the answer the world actually sent (§1.2.1, §1.2.2, §3.10).',
  (j, r) => {
    for (const p of j.pairs) {
      const cls = p.w.failureClass
      if (cls === null) continue
      const at = Math.min(p.c.logRevisionAtDispatch, j.lastSeq)
      if (p.c.failureCode !== undefined && p.c.failureCode !== cls) {
        r.violation(at, `${describeWorld(p.w)}; the capture records request #${p.c.index} as ${p.c.failureCode}`)
      }
      for (const e of windowOf(j, p)) {
        const code = failureCodeOf(e, p.c.purpose)
        if (code === undefined) continue
        if (code !== cls) r.violation(e.seq, `${describeWorld(p.w)}; the log records this attempt's failure as ${code} (${e.type})`)
        break
      }
    }
  },
)

const world02 = worldCheck(
  'WORLD-02',
  'Capacity is the world\'s: every request/context names, for a route the world serves with a known window, exactly that true window, unless the run declares a capacity fault (FAULT-40, FAULT-41, FAULT-44) (§1.4.11, §2.7).',
  (j, r, ctx) => {
    const windows = new Map((ctx.world as WorldRecord).routes.map((route) => [route.model, route.contextWindow]))
    for (const e of j.events) {
      if (e.type !== 'request/context') continue
      const d = data(e)
      const truth = windows.get(String(d['model']))
      if (truth === undefined || truth === null) continue
      const reported = d['contextWindow']
      if (reported !== truth) {
        r.violation(e.seq, `request/context gives route ${String(d['provider'])}/${String(d['model'])} ${reported === undefined ? 'no capacity' : `capacity ${String(reported)}`}; the world's true window is ${truth}`)
      }
    }
  },
  (ctx) => {
    const base = needsWorld(ctx)
    if (base.kind !== 'applies') return base
    const fault = ctx.inputs.faults.find((f) => CAPACITY_FAULTS.has(f.kind))
    return fault === undefined ? base : { kind: 'not-applicable', reason: `the run declares capacity fault ${fault.kind}` }
  },
)

const world03 = worldCheck(
  'WORLD-03',
  'Offload obeys the world: after the world answers IMAGE_OFFLOAD_REQUIRED with count n, the retried request (the next one of the same purpose in the same turn or bracket) carries exactly the input images of the rejected one minus its first min(n, images) occurrences, oldest first (§6.1, §6.3, §6.6, §6.8).',
  (j, r) => {
    for (const [i, p] of j.pairs.entries()) {
      const n = p.w.offloadImages
      if (p.w.failureClass !== 'IMAGE_OFFLOAD_REQUIRED' || n === undefined || !Number.isSafeInteger(n) || n <= 0) continue
      const next = j.pairs.slice(i + 1).find((q) => q.c.purpose === p.c.purpose)
      if (next === undefined) continue
      const between = j.events.slice(p.c.logRevisionAtDispatch, next.c.logRevisionAtDispatch)
      const ends = p.c.purpose === 'conversation' ? ['turn/end'] : ['compaction/end', 'compaction/start']
      if (between.some((e) => ends.includes(e.type))) continue // not a retry: the turn or bracket ended
      const expected = p.w.images.slice(Math.min(n, p.w.images.length))
      const got = next.w.images
      if (expected.length === got.length && expected.every((id, k) => got[k] === id)) continue
      const offload = between.find((e) => e.type === 'image/offload')
      const seq = offload?.seq ?? Math.min(next.c.logRevisionAtDispatch, j.lastSeq)
      const removed = p.w.images.filter((id) => !got.includes(id)).length
      r.violation(seq, `${describeWorld(p.w)} demanding offloadImages ${n} of ${p.w.images.length} images; its retry, world request #${next.w.index}, carries ${got.length} images (${removed} removed)${got.length === expected.length ? ', not the oldest ones' : `, expected ${expected.length}`}`)
    }
  },
)

const world04 = worldCheck(
  'WORLD-04',
  'Checkpoints are the world\'s: a bracket whose compaction/summary has llmStreamCall commits only when the last summary call the world served inside it succeeded (a complete reply, not at the output cap), and both the summary and the checkpoint\'s framed text are the text the world returned (§7.4, §7.7, §8.4, §8.5).',
  (j, r) => {
    let start = -1
    for (const e of j.events) {
      if (e.type === 'compaction/start') start = e.seq
      if (e.type !== 'compaction/summary' || start < j.recordedFrom) continue
      const d = data(e)
      if (d['llmStreamCall'] !== true) continue
      const calls = j.pairs.filter((p) => p.c.purpose === 'compaction' && p.c.logRevisionAtDispatch > start && p.c.logRevisionAtDispatch <= e.seq)
      const last = calls.at(-1)
      if (last === undefined) {
        r.violation(e.seq, 'the bracket commits a summary from a stream call, but the world served no summary call inside it')
        continue
      }
      if (last.w.failureClass !== null || last.w.answer.finish === 'max-tokens') {
        r.violation(e.seq, `the bracket commits a checkpoint, but its summary call failed in the world: ${describeWorld(last.w)}`)
        continue
      }
      const truth = last.w.summaryText ?? ''
      const summary = texts(d['summary'])
      if (summary !== truth) {
        r.violation(e.seq, `compaction/summary.summary is not the text the world returned (world request #${last.w.index}: ${JSON.stringify(truth.slice(0, 60))}…, logged ${JSON.stringify(summary.slice(0, 60))}…)`)
        continue
      }
      const checkpoint = j.events[e.seq + 1]
      if (checkpoint?.type !== 'user/message') continue // INV-12 owns a missing checkpoint
      const content = (data(checkpoint)['content'] ?? []) as ContentBlock[]
      const framed = texts(content.slice(1, -1))
      if (framed !== truth) {
        r.violation(checkpoint.seq, `the checkpoint's summary text (framing aside) is not the text the world returned for world request #${last.w.index}`)
      }
    }
  },
)

const world05 = worldCheck(
  'WORLD-05',
  'Usage is the world\'s: the usage logged for a successful attempt (its assistant/message or compaction/summary) is absent when the world reported none, and otherwise carries the world\'s total input, cache reads and output (§1.2, §1.4.7, §1.4.15, §9.3).',
  (j, r) => {
    for (const p of j.pairs) {
      if (p.w.failureClass !== null || failedOutcome(p.c)) continue
      const type = p.c.purpose === 'conversation' ? 'assistant/message' : 'compaction/summary'
      const e = windowOf(j, p).find((x) => x.type === type)
      if (e === undefined) continue
      const logged = data(e)['usage'] as TokenUsage | undefined
      const truth = p.w.usage
      if (truth === null) {
        if (logged !== undefined) r.violation(e.seq, `${type} logs usage (${usageText(logged)}), but the world reported none for world request #${p.w.index} (${p.w.usageDelivery})`)
        continue
      }
      if (logged === undefined) {
        r.violation(e.seq, `${type} logs no usage, but the world reported ${usageText(truth)} for world request #${p.w.index}`)
        continue
      }
      const [a, b] = [wireUsage(logged), wireUsage(truth)]
      if (a.some((x, k) => x !== b[k])) {
        r.violation(e.seq, `${type} logs usage ${usageText(logged)}; the world reported ${usageText(truth)} for world request #${p.w.index}`)
      }
    }
  },
)

const world06 = worldCheck(
  'WORLD-06',
  'The capture is complete: every request the world served is in the request capture and belongs to a logged attempt (a conversation request inside a step, a summary request inside a bracket), so a retry the log does not show or a compaction request missing from the capture is a violation and INV-43/INV-44 are never vacuous (§1.1, §10.4, §12.7).',
  (j, r) => {
    for (const o of j.orphans) r.violation(o.seq, o.message)
    let step = false
    let bracket = false
    const open: Array<{ step: boolean; bracket: boolean }> = []
    for (const e of j.events) {
      if (e.type === 'step/start') step = true
      if (e.type === 'step/end' || e.type === 'turn/end') step = false
      if (e.type === 'compaction/start') bracket = true
      if (e.type === 'compaction/end') bracket = false
      if (e.type === 'session/end-seed') step = bracket = false
      open.push({ step, bracket })
    }
    for (const p of j.pairs) {
      const L = p.c.logRevisionAtDispatch
      if (L > j.events.length) {
        r.violation(j.lastSeq, `capture request #${p.c.index} (world request #${p.w.index}) was dispatched at log revision ${L}, beyond the log's ${j.events.length} events`)
        continue
      }
      const state = L === 0 ? { step: false, bracket: false } : open[L - 1] ?? { step: false, bracket: false }
      if (p.c.purpose === 'compaction' && !state.bracket) {
        r.violation(Math.min(L, j.lastSeq), `world request #${p.w.index} is a summary call dispatched outside any compaction bracket`)
      }
      if (p.c.purpose === 'conversation' && !state.step && !state.bracket) {
        r.violation(Math.min(L, j.lastSeq), `world request #${p.w.index} is a conversation call dispatched outside any step`)
      }
    }
  },
)

/** The world-truth checks, in id order. */
export const WORLD_CHECKS: readonly Check[] = [world01, world02, world03, world04, world05, world06]
