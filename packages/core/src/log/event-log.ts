/**
 * The in-memory session log (§0.2 "Session"): assigns `seq`, validates every append against §1
 * before it enters the log (a refused event leaves log and surface untouched), deep-freezes accepted
 * events, and keeps the incremental fold (`SessionState`) current.
 */
import type { Seq } from '../brand.ts'
import { LogError } from '../errors.ts'
import type { TextOffloadMarks } from '../offload/text.ts'
import { deriveMessages, deriveNodeMessages, type DeriveSource, type DerivedMessage } from '../surface/derive.ts'
import type { Dialect, EventDraft, LogEvent, SessionEvent } from './events.ts'
import { deepFreeze } from './json.ts'
import type { Message } from './llm.ts'
import { SessionState, type SessionStateOptions } from './session-state.ts'
import { validateEvent } from './validate.ts'

/** Options of an `EventLog`. */
export interface EventLogOptions {
  dialect: Dialect
  /** Foreign log-only types to accept besides the dialect's own (e.g. `--known-type`). */
  knownTypes?: ReadonlySet<string>
  /** Seqs of explicit new-series headers (run manifest), for the series epoch (§10.3). */
  explicitSeriesHeaders?: ReadonlySet<number>
}

/** An append-only, validated, in-memory session log with its folded state. */
export class EventLog implements DeriveSource {
  readonly dialect: Dialect
  private readonly list: LogEvent[] = []
  private readonly knownTypes: ReadonlySet<string> | undefined
  private readonly listeners: Array<(event: LogEvent) => void> = []
  /** The incremental fold: surface, offloads, header, turns, lock. */
  readonly state: SessionState

  constructor(options: EventLogOptions) {
    this.dialect = options.dialect
    this.knownTypes = options.knownTypes
    const stateOptions: SessionStateOptions = { dialect: options.dialect }
    if (options.explicitSeriesHeaders !== undefined) stateOptions.explicitSeriesHeaders = options.explicitSeriesHeaders
    this.state = new SessionState(stateOptions, (seq) => this.list[seq])
  }

  /**
   * Builds a log from complete events (e.g. read from a file), validating each as an append.
   * Throws the first `LogError`, with the seq of the offending event.
   */
  static fromEvents(events: Iterable<LogEvent>, options: EventLogOptions): EventLog {
    const log = new EventLog(options)
    for (const e of events) log.accept(e)
    return log
  }

  /** The events so far; index === seq. Read-only. */
  get events(): readonly LogEvent[] { return this.list }
  /** Number of events; also the next seq. */
  get length(): number { return this.list.length }
  /** Current surface node seqs in position order. */
  get nodes(): readonly Seq[] { return this.state.surface.nodes }
  /** The event at `seq`, or undefined. */
  event(seq: number): LogEvent | undefined { return this.list[seq] }
  /** Offloaded image indexes of a node (§6.4). */
  offloadedIndexes(seq: number): ReadonlySet<number> { return this.state.offloadedIndexes(seq) }
  /** Projected user text blocks of a node (hardened `text/offload`, HARD-5). */
  textOffloads(seq: number): TextOffloadMarks { return this.state.textOffloads(seq) }

  /** Appends a protocol event: assigns its seq, validates it (§1), freezes and folds it. Throws `LogError`. */
  append<T extends EventDraft>(draft: T): SessionEvent {
    const event = this.accept({ ...draft, seq: this.list.length } as LogEvent)
    return event as SessionEvent
  }

  /**
   * Appends a complete event whose seq must equal the log length. Throws `LogError`. `envelopeValidated`
   * skips the per-event shape check for events that a reader of this dialect has just validated.
   */
  accept(event: LogEvent, options: { envelopeValidated?: boolean } = {}): LogEvent {
    const valid = options.envelopeValidated === true ? event : validateEvent(event, { dialect: this.dialect, knownTypes: this.knownTypes })
    const problem = this.state.check(valid)
    if (problem !== undefined) throw problem
    deepFreeze(valid)
    this.list.push(valid)
    this.state.apply(valid)
    this.notify(valid)
    return valid
  }

  /**
   * Validates `draft` as if it were appended after `ahead` more log-only events (0 = next), without
   * appending anything (§7.7 "pre-validate the checkpoint"). Throws `LogError`.
   */
  validate(draft: EventDraft, ahead = 0): void {
    const event = validateEvent({ ...draft, seq: this.list.length + ahead } as LogEvent, { dialect: this.dialect, knownTypes: this.knownTypes })
    const problem = this.state.check(event, ahead)
    if (problem !== undefined) throw problem
  }

  /**
   * Calls `listener` synchronously with every event accepted from now on, in seq order (a durable store
   * attaches here). Returns a function that removes the listener.
   */
  subscribe(listener: (event: LogEvent) => void): () => void {
    this.listeners.push(listener)
    return () => {
      const i = this.listeners.indexOf(listener)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  private notify(event: LogEvent): void {
    for (const l of this.listeners) l(event)
  }

  /**
   * Appends a metering event and the replacement it prices as one synchronous pair (§2.6, §5.4 rule 1,
   * §7.7): both are validated before either is written, so a refused replacement leaves no dangling
   * metering event (D-15). The metering event must be log-only. Returns both events. Throws `LogError`.
   */
  appendMeteredReplacement(metering: EventDraft, replacement: EventDraft): [SessionEvent, SessionEvent] {
    const opts = { dialect: this.dialect, knownTypes: this.knownTypes }
    const first = validateEvent({ ...metering, seq: this.list.length } as LogEvent, opts)
    if ('surfaceOp' in first && first.surfaceOp !== undefined) throw new LogError('SURFACE_OP', 'a metering event must be log-only', { seq: first.seq })
    const second = validateEvent({ ...replacement, seq: this.list.length + 1 } as LogEvent, opts)
    const problem = this.state.check(first) ?? this.state.check(second, 1)
    if (problem !== undefined) throw problem
    for (const e of [first, second]) {
      deepFreeze(e)
      this.list.push(e)
      this.state.apply(e)
    }
    this.notify(first)
    this.notify(second)
    return [first as SessionEvent, second as SessionEvent]
  }

  /** The model-visible messages now (§10.1). */
  deriveMessages(): Message[] { return deriveMessages(this) }
  /** The model-visible messages now, each with its surface node seq. */
  deriveNodeMessages(): DerivedMessage[] { return deriveNodeMessages(this) }
}

/** Re-throws a `LogError` from `fn` with extra location facts; other errors pass through. */
export function withLocation<T>(fn: () => T, location: { file?: string; line?: number }): T {
  try {
    return fn()
  } catch (err) {
    if (err instanceof LogError) throw err.at(location)
    throw err
  }
}
