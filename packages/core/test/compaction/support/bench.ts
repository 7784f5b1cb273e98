/**
 * A test bench for the compaction engine: a validating EventLog seeded from an Appendix B prefix (or given
 * events), a ScriptedAdapter on route mock/mock-4k (window 4000, image price 85), the real runtime, meter,
 * pruner and summarizer, a clock of 5 ms per event on the Appendix B time line, and captured warnings.
 */
import { APPENDIX_B_ROUTE, appendixBEvents, appendixBTime } from '@compaction-sim/fixtures'
import { LlmRuntime } from '../../../src/adapter/runtime.ts'
import { ScriptedAdapter, type ReplySource, type ScriptedReply, type ScriptedRoute } from '../../../src/adapter/scripted.ts'
import { CompactionEngine, type CompactionEngineOptions, type IdleAdmission } from '../../../src/compaction/engine.ts'
import { EventLog } from '../../../src/log/event-log.ts'
import { TokenMeter } from '../../../src/meter/meter.ts'
import type { Dialect, EventDraft, LogEvent, SessionEvent } from '../../../src/log/events.ts'
import type { LlmFailure } from '../../../src/log/llm.ts'
import { resolveCompactionConfig, type BasicCompactionConfig } from '../../../src/policy/config.ts'
import { resolvePruneConfig } from '../../../src/prune/config.ts'

/** Appendix B prefix lengths: 51 = after #50 (turn 3 open, pre-step of step 2); 40 = after #39 (between turns). */
export const PRE_STEP_3_2 = 51
export const BETWEEN_TURNS_2_3 = 40

/** The running example's route as the scripted adapter reports it. */
export const ROUTE: ScriptedRoute = { ...APPENDIX_B_ROUTE }

/** A short successful summary (its framed checkpoint prices far below any span in these tests). */
export const SHORT_SUMMARY = 'Short summary of the earlier work.'

/** A successful scripted summary reply with one text block. */
export function summaryReply(text = SHORT_SUMMARY, extra: Partial<ScriptedReply> = {}): ScriptedReply {
  return { kind: 'reply', blocks: [{ type: 'text', text }], usage: { inputTokens: 100, outputTokens: 20 }, ...extra } as ScriptedReply
}

/** A failed scripted reply with `code` (thrown by the adapter unless `delivery` says in-band). */
export function failReply(code: string, extra: Partial<LlmFailure> = {}, delivery: 'thrown' | 'in-band' = 'thrown'): ScriptedReply {
  return { kind: 'fail', failure: { message: `summary call failed: ${code}`, code, ...extra }, delivery }
}

/** Options of `bench`. */
export interface BenchOptions {
  /** Seed events (default: the Appendix B prefix of `prefix` events). */
  events?: readonly LogEvent[]
  prefix?: number
  dialect?: Dialect
  compaction?: ReplySource
  config?: BasicCompactionConfig
  pruner?: boolean
  routes?: ScriptedRoute[]
  engine?: Partial<CompactionEngineOptions>
}

/** A running bench. */
export interface Bench {
  log: EventLog
  adapter: ScriptedAdapter
  runtime: LlmRuntime
  engine: CompactionEngine
  /** The meter the engine shares (§2): the pressure figures the tests compare. */
  meter: TokenMeter
  warnings: string[]
  infos: string[]
  /** Log length when the bench was built. */
  readonly from: number
  /** Types of the events appended since the bench was built. */
  written(): string[]
  /** The events appended since the bench was built. */
  appended(): LogEvent[]
}

/** Builds a bench; the clock reads `appendixBTime(log.length)`, so each appended event gets its Appendix B time. */
export function bench(options: BenchOptions = {}): Bench {
  const dialect = options.dialect ?? 'seed'
  const seed = options.events ?? appendixBEvents().slice(0, options.prefix ?? PRE_STEP_3_2)
  const log = EventLog.fromEvents(seed, { dialect })
  const adapter = new ScriptedAdapter({ routes: options.routes ?? [ROUTE], compaction: options.compaction ?? [summaryReply()] })
  const runtime = new LlmRuntime()
  runtime.registerAdapter(ROUTE.provider, adapter)
  let compactions = 0
  let checkpoints = 0
  const warnings: string[] = []
  const infos: string[] = []
  const meter = new TokenMeter(log, { dialect })
  const engine = new CompactionEngine({
    log,
    meter,
    runtime,
    policy: resolveCompactionConfig(options.config ?? {}),
    clock: () => appendixBTime(log.length),
    newCompactionId: () => `cmp-${++compactions}`,
    newMessageId: () => `m-ck${++checkpoints}`,
    sessionId: 'session-1',
    warn: (m) => { warnings.push(m) },
    info: (m) => { infos.push(m) },
    ...(options.pruner === true ? { pruner: resolvePruneConfig(undefined) } : {}),
    ...options.engine,
  })
  const from = log.length
  return {
    log, adapter, runtime, engine, meter, warnings, infos, from,
    written: () => log.events.slice(from).map((e) => e.type),
    appended: () => log.events.slice(from),
  }
}

/** An append path that refuses drafts matching `refuse` (an injected storage fault, FAULT-60…63). */
export function faultyAppend(log: EventLog, refuse: (draft: EventDraft) => boolean): (draft: EventDraft) => SessionEvent {
  return (draft) => {
    if (refuse(draft)) throw new Error(`storage fault: ${draft.type} not persisted`)
    return log.append(draft)
  }
}

/** A test double of the agent's idle admission; `busy` refuses every reservation. */
export interface TestAdmission extends IdleAdmission {
  readonly controller: AbortController
  reserved: number
  released: number
}

/** A fresh admission whose reservation signal is `controller.signal`. */
export function admission(busy = false): TestAdmission {
  const controller = new AbortController()
  const a: TestAdmission = {
    controller,
    reserved: 0,
    released: 0,
    tryReserve: () => {
      if (busy) return null
      a.reserved++
      return { signal: controller.signal, release: () => { a.released++ } }
    },
  }
  return a
}

/** A promise with its resolvers (interleaves foreign work with an in-flight summary call). */
export interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (reason: unknown) => void
}

/** A fresh deferred promise. */
export function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => {}
  let reject: (reason: unknown) => void = () => {}
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
  return { promise, resolve, reject }
}

/** The rejection of `p` (fails the test when it resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection, the promise resolved')
}
