/**
 * The `concurrent:` block of a scenario run in-process by the reference subject (§11, §13.6, §13.7; issue #16).
 * Each item runs one action while something else is in flight:
 *
 * - `during: summary` — the `occurrence`-th summary call of the run, at a named point: before its first stream chunk
 *   or after chunk N (an adapter wrapper around the summary route's stream), or after the summarizer resolved and
 *   before the bracket revalidates (a summarizer wrapper: revalidation runs after the summarizer continuation,
 *   FAULT-79). `at: seed` leaves the point to a fast-check `Scheduler` sampled from the scenario's seed — the same
 *   mechanism `sim fuzz` interleaves its §13.6 commands with (`fuzz/commands/concurrent-compaction.ts`): every
 *   point of the call and the action are scheduled tasks, and the scheduler releases them in a seeded order.
 * - `during: flush` — inside the engine's §7.11 durability checkpoint of the `occurrence`-th closed manual bracket.
 * - `during: pre-step` — right before the pre-step check of turn `turn`, step `step` (§3.9; FAULT-72, FAULT-83).
 * - `during: idle` — between turns, after `afterTurn` turns (FAULT-80: `compact-now` with an aborted signal).
 *
 * Every action's outcome becomes one warning `concurrent[<i>] <do> during <what>: <outcome>` (an API call's
 * result, `busy`/`changed`/… with the error's message, or the exact reason thrown), so `expect.warnings` judges
 * them; an item that never ran is reported the same way (`… never ran: …`).
 */
import {
  assertNever, CallId, type ContentBlock, type EventDraft, type EventLog, type GenerateOptions, type LlmAdapter, ManualCompactionError, MessageId, Seq,
  type CompactionEngine, type LogEvent, type StreamChunk, type Summarizer, type SummaryInput, type SummaryOutput,
} from '@compaction-sim/core'
import fc, { type Scheduler } from 'fast-check'
import { plural } from '../plural.ts'
import type { ResolvedConcurrent } from '../scenario/resolve.ts'

/** What the plan needs from the running session (the subject owns engine, agent and log). */
export interface ConcurrencyContext {
  readonly log: EventLog
  readonly engine: () => CompactionEngine
  /** Manual compaction through the agent's admission (§3.7). */
  readonly compactNow: (signal: AbortSignal) => Promise<unknown>
  /** The agent cancels its maintenance reservation (FAULT-82); false when none is held. */
  readonly cancelMaintenance: (reason: unknown) => boolean
  /** True while the agent holds an idle-maintenance reservation. */
  readonly reserved: () => boolean
  /** Prompts the next transcript turn now (it queues behind a held reservation); null when none is left. */
  readonly promptNextTurn: () => Promise<unknown> | null
  /** Aborts the open turn's signal (the subject's own controller for the turn). */
  readonly abortTurn: (reason: unknown) => void
  /** The route of the open conversation (for a foreign `request/context`). */
  readonly route: () => { provider: string; model: string; contextWindow: number | null; imageTokens: number | null }
  readonly now: () => number
  readonly warn: (message: string) => void
  /** Called when item `index` runs (the world counts the scenario's §13.6/§13.7 faults as fired). */
  readonly ran: (index: number) => void
}

/** A summary point of the call in flight. */
type Point = { kind: 'before-first-chunk' } | { kind: 'after-chunk'; chunk: number } | { kind: 'after-resolve' }

/** The run-time state of the `concurrent:` items of one session (module doc). */
export class ConcurrencyPlan {
  private readonly items: readonly ResolvedConcurrent[]
  private readonly ctx: ConcurrencyContext
  private readonly scheduler: Scheduler | null
  private readonly ran = new Set<number>()
  private readonly pending: Array<Promise<void>> = []
  private summaries = 0
  private flushes = 0
  /** The selected span of the summary call in flight (from the summarizer input), in surface order. */
  private span: readonly number[] = []
  /** The caller signal of the manual compaction in flight (`abort-caller`). */
  private caller: AbortController | null = null
  private foreign = 0
  /** How far the summary call in flight got (a seeded action's warning says where it landed). */
  private chunks = 0
  private resolved = false

  constructor(items: readonly ResolvedConcurrent[], seed: number, ctx: ConcurrencyContext) {
    this.items = items
    this.ctx = ctx
    // One scheduler per session, drawn from the seed: the same seed releases the same tasks in the same order.
    const seeded = items.some((i) => i.during === 'summary' && i.at === 'seed')
    this.scheduler = seeded ? (fc.sample(fc.scheduler(), { seed, numRuns: 1 })[0] ?? null) : null
  }

  /** True when the scenario declares no item (the subject then installs no wrapper). */
  get empty(): boolean { return this.items.length === 0 }

  /** Awaits `task`, releasing the seed scheduler's tasks while it runs (no scheduler: `task` itself). */
  waitFor<T>(task: Promise<T>): Promise<T> {
    return this.scheduler === null ? task : this.scheduler.waitFor(task)
  }

  /** A fresh caller signal for the next manual compaction (`abort-caller` aborts it). */
  callerSignal(): AbortSignal {
    this.caller = new AbortController()
    return this.caller.signal
  }

  /** The summary route's adapter with the chunk points (before the first chunk, after chunk N) of summary calls. */
  wrapAdapter(inner: LlmAdapter): LlmAdapter {
    return {
      resolveModel: (provider, model, signal) => inner.resolveModel(provider, model, signal),
      stream: (options) => (options.purpose === 'compaction' ? this.summaryStream(inner, options) : inner.stream(options)),
    }
  }

  /** The summarizer with the after-resolve point (after it resolved, before the bracket's revalidation, FAULT-79). */
  wrapSummarizer(inner: Summarizer): Summarizer {
    return {
      summarize: async (input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput> => {
        this.span = this.spanOf(input)
        const output = await inner.summarize(input, signal)
        this.resolved = true
        await this.at({ kind: 'after-resolve' })
        return output
      },
    }
  }

  /** The engine's §7.11 flush: the `during: flush` items of this flush run first, then `inner` is awaited. */
  flush(inner: () => Promise<void>): () => Promise<void> {
    return async () => {
      const n = ++this.flushes
      const items = this.items.filter((i) => i.during === 'flush' && i.occurrence === n)
      for (const item of items) this.run(item, `flush ${n}`)
      await inner()
      for (const item of items) {
        this.ctx.warn(`${label(item)} during flush ${n}: the flush completed ${this.ctx.reserved() ? 'with the reservation still held' : 'after the reservation was released'}`)
      }
    }
  }

  /** Runs the `during: pre-step` items of `turn`/`step` (right before the pre-step check). */
  preStep(turn: number | null, step: number): void {
    for (const item of this.items) {
      if (item.during === 'pre-step' && item.turn === turn && item.step === step) this.run(item, `pre-step of turn ${turn} step ${step}`)
    }
  }

  /** Runs the `during: idle` items after `afterTurn` turns. */
  idle(afterTurn: number): void {
    for (const item of this.items) if (item.during === 'idle' && item.afterTurn === afterTurn) this.run(item, `idle after turn ${afterTurn}`)
  }

  /** Awaits every action started so far (and the scheduler's leftover tasks); then reports items that never ran. */
  async settle(): Promise<void> {
    if (this.scheduler !== null) await this.scheduler.waitIdle()
    while (this.pending.length > 0) await this.waitFor(this.pending.shift() ?? Promise.resolve())
  }

  /** Warns once for each item that never ran (call after the last turn). */
  reportUnrun(): void {
    for (const item of this.items) {
      if (this.ran.has(item.index)) continue
      const made = `${plural(this.summaries, 'summary call')} and ${plural(this.flushes, 'manual flush', 'manual flushes')}`
      this.ctx.warn(`${label(item)} never ran: ${whereOf(item)} was not reached (the run made ${made})`)
    }
  }

  private async *summaryStream(inner: LlmAdapter, options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const n = ++this.summaries
    this.chunks = 0
    this.resolved = false
    const seeded = this.items.filter((i) => i.during === 'summary' && i.occurrence === n && i.at === 'seed')
    const s = this.scheduler
    if (s !== null) {
      // Each seeded action is one scheduled task; the points of the call below are the others (fuzz `duringSummary`).
      for (const item of seeded) {
        this.pending.push(s.schedule(Promise.resolve(), `${label(item)}`).then(() => { this.run(item, `summary ${n} ${this.progress(n)} (seed)`) }))
      }
    }
    await this.at({ kind: 'before-first-chunk' }, n)
    let chunk = 0
    for await (const c of inner.stream(options)) {
      yield c
      this.chunks = ++chunk
      await this.at({ kind: 'after-chunk', chunk }, n)
    }
  }

  /** Where summary call `n` is now: before its first chunk, after chunk k, after it resolved, or past it. */
  private progress(n: number): string {
    if (n !== this.summaries) return 'after the call'
    if (this.resolved) return 'after-resolve'
    return this.chunks === 0 ? 'before-first-chunk' : `after chunk ${this.chunks}`
  }

  /** Runs the named items of `point` of summary call `n` (default: the one in flight), then lets the scheduler interleave. */
  private async at(point: Point, n = this.summaries): Promise<void> {
    for (const item of this.items) {
      if (item.during !== 'summary' || item.occurrence !== n || item.at !== point.kind) continue
      if (point.kind === 'after-chunk' && item.chunk !== point.chunk) continue
      this.run(item, `summary ${n} ${pointText(point)}`)
    }
    if (this.scheduler !== null) await this.scheduler.schedule(Promise.resolve(), `summary ${n} ${pointText(point)}`)
  }

  /** Runs one item now; an API call's settlement is recorded when it comes (awaited by `settle`). */
  private run(item: ResolvedConcurrent, where: string): void {
    if (this.ran.has(item.index)) return
    this.ran.add(item.index)
    this.ctx.ran(item.index)
    const head = `${label(item)} during ${where}`
    const record = (outcome: string): void => { this.ctx.warn(`${head}: ${outcome}`) }
    let result: Promise<unknown> | string
    try {
      result = this.act(item)
    } catch (err) {
      record(`threw synchronously ${describe(err)}`)
      return
    }
    if (typeof result === 'string') {
      record(result)
      return
    }
    this.pending.push(result.then((value) => { record(`ok${value === null ? ' (nothing compacted)' : ''}`) }, (err: unknown) => { record(`rejected ${describe(err)}`) }))
  }

  /** The action itself: a promise for API calls, a description for foreign writes and signals. */
  private act(item: ResolvedConcurrent): Promise<unknown> | string {
    const { ctx } = this
    switch (item.do) {
      case 'compact-now': {
        const signal = item.signal === 'aborted'
          ? AbortSignal.abort(new Error(`concurrent[${item.index}]: the caller's signal was already aborted`))
          : new AbortController().signal
        return ctx.compactNow(signal)
      }
      case 'compact-region': {
        const nodes = ctx.log.state.surface.nodes
        const at = (p: number | null): number => nodes[(p ?? 0) < 0 ? nodes.length + (p ?? 0) : p ?? 0] ?? -1
        return ctx.engine().compactRegion(at(item.start), at(item.end))
      }
      case 'pressure-check':
        return ctx.engine().compactIfNeeded('pressure')
      case 'replace-node':
        return this.replaceNode(item)
      case 'price-change': {
        const route = ctx.route()
        const imageTokens = item.imageTokens ?? (route.imageTokens ?? 0) + 100
        ctx.log.append({
          time: ctx.now(), type: 'request/context',
          data: { provider: route.provider, model: route.model, ...(route.contextWindow === null ? {} : { contextWindow: route.contextWindow }), imageTokens },
        } as EventDraft)
        return `a foreign request/context set the image price to ${imageTokens}`
      }
      case 'append-surface': {
        const event = ctx.log.append({
          time: ctx.now(), type: 'user/message', surfaceOp: 'append',
          data: { id: MessageId(`m-foreign-${++this.foreign}`), role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: 'queued context from another writer' }] },
        })
        return `a foreign user/message was appended at #${event.seq}`
      }
      case 'append-log-only': {
        const draft = { seq: Seq(ctx.log.length), time: ctx.now(), type: 'inbox/note', data: { text: 'a note from another writer' }, ignorable: true }
        const event = ctx.log.accept(draft as unknown as LogEvent)
        return `a foreign ignorable inbox/note was appended at #${event.seq}`
      }
      case 'user-prompt': {
        const turn = ctx.promptNextTurn()
        return turn === null ? 'no transcript turn is left to prompt' : turn
      }
      case 'abort-caller': {
        const caller = this.caller
        if (caller === null) return 'no manual compaction has a caller signal to abort'
        caller.abort(new Error(`concurrent[${item.index}]: the caller aborted`))
        return 'the caller aborted the manual compaction'
      }
      case 'cancel-agent': {
        const held = ctx.cancelMaintenance(new Error(`concurrent[${item.index}]: the agent cancelled maintenance`))
        return held ? 'the agent cancelled its maintenance reservation' : 'no maintenance reservation was held'
      }
      case 'abort-turn':
        ctx.abortTurn(new Error(`concurrent[${item.index}]: the turn was aborted`))
        return 'the open turn was aborted'
      default:
        return assertNever(item.do, 'concurrent action')
    }
  }

  /**
   * A foreign replacement (another writer, §13.6) of the selected node `item.node` of the bracket in flight, as one
   * foreign `user/message`. The replaced run is widened to whole tool units so the surface stays balanced (§4.1).
   */
  private replaceNode(item: ResolvedConcurrent): string {
    const { log } = this.ctx
    const span = this.span
    if (span.length === 0) return 'no selected span is known (no summary call has started)'
    const pick = item.node === 'first' ? 0 : item.node === 'last' ? span.length - 1 : Math.floor(span.length / 2)
    const nodes = log.state.surface.nodes
    let i = nodes.indexOf(Seq(span[pick] ?? -1))
    if (i < 0) return `selected node #${span[pick] ?? -1} is no longer on the surface`
    // A tool result belongs to the assistant message that called it: start the run there.
    const callerOf = (p: number): number => {
      const id = resultCallId(log.event(nodes[p] ?? -1))
      if (id === null) return p
      for (let k = p - 1; k >= 0; k--) if (callIds(log.event(nodes[k] ?? -1)).includes(id)) return k
      return p
    }
    i = callerOf(i)
    let j = i
    const open = new Set<string>(callIds(log.event(nodes[i] ?? -1)))
    while (open.size > 0 && j + 1 < nodes.length) {
      j++
      const event = log.event(nodes[j] ?? -1)
      const id = resultCallId(event)
      if (id !== null) open.delete(id)
      for (const c of callIds(event)) open.add(c)
    }
    const start = nodes[i] ?? -1
    const end = nodes[j] ?? -1
    const text = 'edited by another writer'
    const event = log.append({
      time: this.ctx.now(), type: 'user/message', surfaceOp: { op: 'replace', start: Seq(start), end: Seq(end) },
      sourceEventSeqs: nodes.slice(i, j + 1),
      data: { id: MessageId(`m-foreign-${++this.foreign}`), role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text }] },
    })
    return `a foreign user/message #${event.seq} replaced #${start}${end === start ? '' : `…#${end}`}`
  }

  /** The surface seqs of the summarizer input's messages (by message id), in order. */
  private spanOf(input: SummaryInput): number[] {
    const { log } = this.ctx
    const byId = new Map<string, number>()
    for (const seq of log.state.surface.nodes) {
      const id = messageIdOf(log.event(seq))
      if (id !== null) byId.set(id, seq)
    }
    return input.messages.flatMap((m) => {
      const seq = byId.get(m.id)
      return seq === undefined ? [] : [seq]
    })
  }
}

/** `concurrent[<i>] <do>`. */
function label(item: ResolvedConcurrent): string {
  return `concurrent[${item.index}] ${item.do}`
}

function pointText(point: Point): string {
  return point.kind === 'after-chunk' ? `after chunk ${point.chunk}` : point.kind
}

/** Where an item was due (for the never-ran warning). */
function whereOf(item: ResolvedConcurrent): string {
  switch (item.during) {
    case 'summary': return `summary call ${item.occurrence}${item.at === 'after-chunk' ? ` chunk ${item.chunk ?? 0}` : ''}`
    case 'flush': return `manual flush ${item.occurrence}`
    case 'pre-step': return `the pre-step of turn ${item.turn ?? 0} step ${item.step}`
    case 'idle': return `the idle gap after turn ${item.afterTurn ?? 0}`
    default: return assertNever(item.during, 'concurrent during')
  }
}

/** `<Name>[<code>]: <message>` of a thrown value (the exact reason when it is not an Error). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return `a non-error ${JSON.stringify(String(err))}`
  const code = err instanceof ManualCompactionError ? err.code : (err as { code?: unknown }).code
  return `${err.name}${typeof code === 'string' ? `[${code}]` : ''}: ${err.message}`
}

function messageIdOf(event: LogEvent | undefined): string | null {
  if (event === undefined) return null
  const data = event.data as { id?: unknown; message?: { id?: unknown } }
  const id = data.message?.id ?? data.id
  return typeof id === 'string' ? id : null
}

/** Call ids of an assistant message's tool calls ([] for any other event). */
function callIds(event: LogEvent | undefined): string[] {
  if (event?.type !== 'assistant/message') return []
  const content = (event.data as { message: { content: ContentBlock[] } }).message.content
  return content.flatMap((b) => (b.type === 'tool-call' ? [String(b['id'])] : []))
}

/** The call id a tool result answers, or null. */
function resultCallId(event: LogEvent | undefined): string | null {
  if (event?.type !== 'tool/result') return null
  return CallId((event.data as { message: { source: { callId: string } } }).message.source.callId)
}
