/**
 * fast-check arbitraries for the event catalog (§1.2, §1.4): valid payloads of every EventType and
 * valid standalone events (envelope, INV-03 surface metadata, INV-04 provenance) for codec round trips.
 * They do NOT produce surface-valid logs (replace spans naming real nodes etc.); see the surface tests.
 */
import fc from 'fast-check'
import { CallId, CompactionId, MessageId, Seq } from '../../src/brand.ts'
import {
  EVENT_TYPES, vocabulary, type Dialect, type EpochHeader, type EventDataMap, type EventType, type ForeignEvent,
  type HeaderReason, type LogEvent, type OffloadTarget, type SeqRange, type SessionEvent, type SurfaceOp, type TurnEndReason,
} from '../../src/log/events.ts'
import type { JsonObject, JsonValue } from '../../src/log/json.ts'
import type {
  AssistantMessage, ContentBlock, FinishReason, ImageAttachmentRef, ImageBlock, LlmCallConfig, LlmFailure, MessageSource,
  ReasoningBlock, StreamChunk, SystemMessage, TextBlock, TokenUsage, ToolCallBlock, ToolResultBlock, ToolResultMessage,
  ToolSchema, UserMessage,
} from '../../src/log/llm.ts'

/** Seed of every property test (one convention: support/seed.ts); re-exported for the log tests. */
export { FC_SEED } from './seed.ts'

const RECORD = { noNullPrototype: true } as const

// ---------------------------------------------------------------------------------------------
// Primitives

/** Strings of any code points (lone surrogates included: JSON escapes them and reads them back). */
export const textArb: fc.Arbitrary<string> = fc.oneof(fc.string({ maxLength: 24 }), fc.string({ unit: 'binary', maxLength: 24 }))
const nameArb = fc.string({ minLength: 1, maxLength: 10 })
const nonEmptyArb = fc.string({ minLength: 1, maxLength: 12 })
const posIntArb = fc.integer({ min: 1, max: 10_000 })
const natArb = fc.nat({ max: 1_000_000 })
const seqArb = fc.nat({ max: 100_000 }).map(Seq)
const callIdArb = fc.string({ minLength: 1, maxLength: 12 }).map(CallId)
const compactionIdArb = nonEmptyArb.map(CompactionId)
const messageIdArb = nameArb.map(MessageId)
/** Finite numbers other than -0 (§1.1 rule 2). */
export const finiteArb: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
)
/** Epoch-millisecond-like times (finite; sometimes fractional). */
export const timeArb: fc.Arbitrary<number> = fc.oneof(fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }), finiteArb)
const keyArb = fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__')

/** Lossless JSON values (§1.1 rule 2): no -0, no non-finite numbers, plain objects only. */
export const jsonValueArb: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3 },
    fc.constant(null),
    fc.boolean(),
    finiteArb,
    textArb,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(keyArb, tie('value'), { maxKeys: 4, noNullPrototype: true }),
  ),
})).value

/** Lossless JSON objects. */
export const jsonObjectArb: fc.Arbitrary<JsonObject> = fc.dictionary(keyArb, jsonValueArb, { maxKeys: 4, noNullPrototype: true })

// ---------------------------------------------------------------------------------------------
// LLM vocabulary (§1.2)

const textBlockArb: fc.Arbitrary<TextBlock> = fc.record({ type: fc.constant('text'), text: textArb }, RECORD)
const reasoningBlockArb: fc.Arbitrary<ReasoningBlock> = fc.record({ type: fc.constant('reasoning'), text: textArb }, RECORD)
const attachmentArb: fc.Arbitrary<ImageAttachmentRef> = fc.record(
  {
    attachmentId: fc.stringMatching(/^sha256:[0-9a-f]{64}$/),
    mediaType: fc.constantFrom('image/png', 'image/jpeg', 'image/webp'),
    bytes: natArb,
    width: posIntArb,
    height: posIntArb,
    name: nameArb,
  },
  { requiredKeys: ['attachmentId', 'mediaType', 'bytes', 'width', 'height'], ...RECORD },
)
const imageBlockArb: fc.Arbitrary<ImageBlock> = fc.record({ type: fc.constant('image'), attachment: attachmentArb }, RECORD)
const toolCallBlockArb: fc.Arbitrary<ToolCallBlock> = fc.record(
  { type: fc.constant('tool-call'), id: callIdArb, name: nameArb, arguments: textArb },
  RECORD,
)
const unknownBlockArb: fc.Arbitrary<ContentBlock> = fc.record(
  { type: fc.constantFrom('citation', 'x-vendor-block'), payload: jsonValueArb },
  RECORD,
)

/** Content blocks of every known type plus unknown ones, with nested tool results (§1.2). */
export const contentBlockArb: fc.Arbitrary<ContentBlock> = fc.letrec<{ block: ContentBlock }>((tie) => ({
  block: fc.oneof(
    { maxDepth: 2 },
    textBlockArb,
    reasoningBlockArb,
    imageBlockArb,
    toolCallBlockArb,
    unknownBlockArb,
    fc.record(
      { type: fc.constant('tool-result'), toolCallId: callIdArb, content: fc.array(tie('block'), { maxLength: 3 }), isError: fc.boolean() },
      { requiredKeys: ['type', 'toolCallId', 'content'], ...RECORD },
    ) as fc.Arbitrary<ToolResultBlock>,
  ),
})).block

const contentArb = fc.array(contentBlockArb, { maxLength: 4 })

const userishSourceArb: fc.Arbitrary<MessageSource> = fc.oneof(
  fc.constant({ kind: 'user' as const }),
  fc.record(
    { kind: fc.constant('plugin' as const), plugin: nameArb, compactionId: nonEmptyArb, sourceCommandId: nonEmptyArb },
    { requiredKeys: ['kind', 'plugin'], ...RECORD },
  ),
)
const modelSourceArb: fc.Arbitrary<AssistantMessage['source']> = fc.record(
  { kind: fc.constant('model' as const), provider: nameArb, model: nameArb, replayState: jsonValueArb },
  { requiredKeys: ['kind', 'provider', 'model'], ...RECORD },
)

/** A `system/message` payload (§1.4.5). */
export const systemMessageArb: fc.Arbitrary<SystemMessage> = fc.record(
  { id: messageIdArb, role: fc.constant('system' as const), content: contentArb, source: userishSourceArb },
  RECORD,
)
/** A `user/message` payload (§1.4.3). */
export const userMessageArb: fc.Arbitrary<UserMessage> = fc.record(
  { id: messageIdArb, role: fc.constant('user' as const), content: contentArb, source: userishSourceArb },
  RECORD,
)
/** An assistant message (§1.4.7). */
export const assistantMessageArb: fc.Arbitrary<AssistantMessage> = fc.record(
  { id: messageIdArb, role: fc.constant('assistant' as const), content: contentArb, source: modelSourceArb },
  RECORD,
)
/** A tool-result message: one `tool-result` block answering `source.callId` (§1.2). */
export const toolResultMessageArb: fc.Arbitrary<ToolResultMessage> = fc
  .record({ id: messageIdArb, callId: callIdArb, content: contentArb, isError: fc.option(fc.boolean(), { nil: undefined }) }, RECORD)
  .map(({ id, callId, content, isError }) => {
    const block: ToolResultBlock = isError === undefined
      ? { type: 'tool-result', toolCallId: callId, content }
      : { type: 'tool-result', toolCallId: callId, content, isError }
    return { id, role: 'user', content: [block], source: { kind: 'tool', callId } }
  })

/** Provider usage (§1.2). */
export const usageArb: fc.Arbitrary<TokenUsage> = fc.record(
  { inputTokens: natArb, outputTokens: natArb, cacheReadTokens: natArb, cacheWriteTokens: natArb, reasoningTokens: natArb },
  { requiredKeys: ['inputTokens', 'outputTokens'], ...RECORD },
)
/** A structured failure (§1.2). */
export const failureArb: fc.Arbitrary<LlmFailure> = fc.record(
  {
    message: textArb,
    code: fc.constantFrom('CONTEXT_WINDOW_EXCEEDED', 'IMAGE_OFFLOAD_REQUIRED', 'SERVER', 'RATE_LIMIT', 'UNKNOWN'),
    status: fc.integer({ min: 100, max: 599 }),
    providerRetryAfterMs: natArb,
    requestId: nameArb,
    offloadImages: posIntArb,
  },
  { requiredKeys: ['message', 'code'], ...RECORD },
)
const finishReasonArb: fc.Arbitrary<FinishReason> = fc.oneof(
  fc.constantFrom<FinishReason>({ kind: 'stop' }, { kind: 'tool-calls' }, { kind: 'max-tokens' }),
  fc.record({ kind: fc.constantFrom('aborted' as const, 'error' as const), failure: failureArb }, RECORD),
)
const indexArb = fc.nat({ max: 16 })
/** Every StreamChunk variant (§1.2). */
export const streamChunkArb: fc.Arbitrary<StreamChunk> = fc.oneof(
  fc.record({ type: fc.constant('block-start' as const), index: indexArb, blockType: fc.constantFrom('text', 'reasoning', 'tool-call', 'x') }, RECORD),
  fc.record({ type: fc.constantFrom('text-delta' as const, 'reasoning-delta' as const), index: indexArb, text: textArb }, RECORD),
  fc.record(
    { type: fc.constant('tool-call-delta' as const), index: indexArb, id: callIdArb, name: nameArb, argumentsDelta: textArb },
    { requiredKeys: ['type', 'index', 'id', 'argumentsDelta'], ...RECORD },
  ),
  fc.record({ type: fc.constant('block-end' as const), index: indexArb, block: contentBlockArb }, RECORD),
  fc.record({ type: fc.constant('usage' as const), usage: usageArb }, RECORD),
  fc.record({ type: fc.constant('finish' as const), reason: finishReasonArb, replayState: jsonValueArb }, { requiredKeys: ['type', 'reason'], ...RECORD }),
)

const toolSchemaArb: fc.Arbitrary<ToolSchema> = fc.record({ name: nameArb, description: textArb, parameters: jsonObjectArb }, RECORD)
const callConfigArb: fc.Arbitrary<LlmCallConfig> = fc.record(
  {
    provider: nameArb,
    model: nameArb,
    reasoningEffort: fc.constantFrom('low', 'medium', 'high'),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }).filter((n) => !Object.is(n, -0)),
    maxTokens: posIntArb,
    stop: fc.array(textArb, { maxLength: 3 }),
  },
  { requiredKeys: ['provider', 'model'], ...RECORD },
)

function headerArb(dialect: Dialect): fc.Arbitrary<EpochHeader> {
  const base = {
    config: callConfigArb,
    adapterDefaults: fc.record({ reasoningEffort: fc.constant(true as const), maxTokens: fc.constant(true as const) }, { requiredKeys: [], ...RECORD }),
    tools: fc.array(toolSchemaArb, { minLength: 1, maxLength: 3 }),
  }
  return dialect === 'seed'
    ? fc.record(base, { requiredKeys: ['config'], ...RECORD })
    : fc.record({ ...base, system: textArb }, { requiredKeys: ['config'], ...RECORD })
}

const rangeArb: fc.Arbitrary<SeqRange> = fc.record({ start: seqArb, end: seqArb }, RECORD)
const turnEndReasonArb: fc.Arbitrary<TurnEndReason> = fc.oneof(
  fc.constantFrom<TurnEndReason>({ kind: 'completed' }, { kind: 'blocked' }, { kind: 'max-tokens' }, { kind: 'interrupted' }),
  fc.record({ kind: fc.constant('error' as const), error: failureArb }, RECORD),
  fc.record(
    {
      kind: fc.constant('aborted' as const),
      reason: fc.record(
        { kind: fc.constantFrom('user' as const, 'parent' as const, 'disposed' as const, 'hook' as const, 'legacy' as const), reason: textArb },
        { requiredKeys: ['kind'], ...RECORD },
      ),
    },
    RECORD,
  ),
)
const ownerTurnArb = fc.option(posIntArb, { nil: null })

// ---------------------------------------------------------------------------------------------
// Payloads of every event type (§1.4)

type DataArbs = { [T in EventType]: fc.Arbitrary<EventDataMap[T]> }

function dataArbs(dialect: Dialect): DataArbs {
  const turnStep = { turn: posIntArb, step: posIntArb }
  const reasons: HeaderReason[] = dialect === 'seed' ? ['initial', 'resume', 'change', 'series'] : ['initial', 'resume', 'change']
  return {
    'turn/start': fc.record({ turn: posIntArb }, RECORD),
    'turn/end': fc.record({ turn: posIntArb, reason: turnEndReasonArb }, RECORD),
    'step/start': fc.record(turnStep, RECORD),
    'step/end': fc.record(turnStep, RECORD),
    'system/message': systemMessageArb,
    'user/message': userMessageArb,
    'assistant/chunk': fc.record({ ...turnStep, chunk: streamChunkArb }, RECORD),
    'assistant/message': fc.record(
      { ...turnStep, message: assistantMessageArb, usage: usageArb, interrupted: fc.constant(true as const) },
      { requiredKeys: ['turn', 'step', 'message'], ...RECORD },
    ),
    'tool/call': fc.record({ ...turnStep, callId: callIdArb, name: nameArb, arguments: textArb }, RECORD),
    'tool/result': fc.record(
      {
        ...turnStep,
        message: toolResultMessageArb,
        error: fc.record({ name: nameArb, code: nameArb }, RECORD),
        meta: jsonValueArb,
        'x-extra': jsonValueArb,
      },
      { requiredKeys: ['turn', 'step', 'message'], ...RECORD },
    ),
    'request/header': dialect === 'seed'
      ? fc.record({ header: headerArb(dialect), reason: fc.constantFrom(...reasons), startsSeries: fc.constant(true as const) }, { requiredKeys: ['header', 'reason'], ...RECORD })
      : fc.record({ header: headerArb(dialect), reason: fc.constantFrom(...reasons) }, RECORD),
    'request/context': fc.record(
      { provider: nameArb, model: nameArb, contextWindow: posIntArb, imageTokens: posIntArb },
      { requiredKeys: ['provider', 'model'], ...RECORD },
    ),
    'session/end-seed': fc.constant({}),
    'llm/retry': fc.record(
      {
        retryId: nameArb, ...turnStep, provider: nameArb, mode: fc.constantFrom('normal' as const, 'always' as const), policyKey: textArb,
        retry: posIntArb, maxRetries: posIntArb, delayMs: natArb, failure: failureArb,
      },
      { requiredKeys: ['retryId', 'turn', 'step', 'provider', 'mode', 'policyKey', 'retry', 'delayMs', 'failure'], ...RECORD },
    ),
    'llm/retry-started': fc.record({ retryId: nameArb, ...turnStep, retry: posIntArb }, RECORD),
    'compaction/start': fc.record(
      { compactionId: compactionIdArb, sourceCommandId: nonEmptyArb, turn: ownerTurnArb },
      { requiredKeys: ['compactionId', 'turn'], ...RECORD },
    ),
    'compaction/summary': fc.oneof(
      fc.record(
        {
          compactionId: compactionIdArb, sourceCommandId: nonEmptyArb, summary: fc.array(textBlockArb, { maxLength: 3 }), shadowedRange: rangeArb,
          shadowedSeqs: fc.array(seqArb, { minLength: 1, maxLength: 5 }), shadowedTokenCount: natArb, provider: nameArb, model: nameArb,
          maxTokens: posIntArb, usage: usageArb, rawOutput: contentArb, llmStreamCall: fc.constant(true as const),
        },
        { requiredKeys: ['compactionId', 'summary', 'shadowedRange', 'shadowedSeqs', 'shadowedTokenCount', 'provider', 'model', 'rawOutput', 'llmStreamCall'], ...RECORD },
      ),
      fc.record(
        {
          compactionId: compactionIdArb, summary: fc.array(textBlockArb, { maxLength: 3 }), shadowedRange: rangeArb,
          shadowedSeqs: fc.array(seqArb, { minLength: 1, maxLength: 5 }), shadowedTokenCount: natArb, provider: nameArb, model: nameArb,
          rawOutput: contentArb,
        },
        { requiredKeys: ['compactionId', 'summary', 'shadowedRange', 'shadowedSeqs', 'shadowedTokenCount', 'provider', 'model'], ...RECORD },
      ),
    ),
    'compaction/summary-error': fc.record(
      {
        compactionId: compactionIdArb, sourceCommandId: nonEmptyArb, shadowedRange: rangeArb, shadowedSeqs: fc.array(seqArb, { maxLength: 5 }),
        failure: failureArb, provider: nameArb, model: nameArb, maxTokens: posIntArb,
      },
      { requiredKeys: ['compactionId', 'shadowedRange', 'shadowedSeqs', 'failure'], ...RECORD },
    ),
    'compaction/prune': fc.record(
      { shadowedRange: rangeArb, shadowedSeqs: fc.tuple(seqArb), shadowedTokenCount: natArb },
      RECORD,
    ),
    'compaction/end': fc.record(
      { compactionId: compactionIdArb, sourceCommandId: nonEmptyArb, turn: ownerTurnArb, error: textArb },
      { requiredKeys: ['compactionId', 'turn'], ...RECORD },
    ),
    'image/offload': fc.record(
      {
        targets: fc.array(
          fc.record({ seq: seqArb, imageIndexes: fc.uniqueArray(fc.nat({ max: 20 }), { maxLength: 4 }).map((a) => a.sort((x, y) => x - y)) }, RECORD) as fc.Arbitrary<OffloadTarget>,
          { minLength: 1, maxLength: 3 },
        ),
      },
      RECORD,
    ),
    'text/offload': fc.record({ seq: seqArb, blockIndex: natArb, tokens: natArb, bound: natArb, path: nonEmptyArb }, RECORD),
  }
}

const DATA_ARBS: Record<Dialect, DataArbs> = { seed: dataArbs('seed'), 'dsh-0.1.0-rc.8': dataArbs('dsh-0.1.0-rc.8') }

/** A valid payload of `type` in `dialect` (default seed). */
export function eventDataArb<T extends EventType>(type: T, dialect: Dialect = 'seed'): fc.Arbitrary<EventDataMap[T]> {
  return DATA_ARBS[dialect][type]
}

// ---------------------------------------------------------------------------------------------
// Standalone events

interface SurfaceMeta {
  surfaceOp: SurfaceOp
  sourceEventSeqs?: Seq[]
}

function provenanceArb(seq: number, minLength: number): fc.Arbitrary<Seq[]> {
  if (seq === 0) return fc.constant([])
  return fc.uniqueArray(fc.integer({ min: 0, max: seq - 1 }).map(Seq), { minLength, maxLength: Math.min(6, seq) })
}

/** INV-03/INV-04-valid surface metadata for a surface event with seq `seq`. */
function surfaceMetaArb(type: EventType, seq: number): fc.Arbitrary<SurfaceMeta> {
  const options: fc.Arbitrary<SurfaceMeta>[] = [fc.constant({ surfaceOp: 'append' })]
  if (type === 'assistant/message') options.push(provenanceArb(seq, 0).map((p) => ({ surfaceOp: 'append', sourceEventSeqs: p })))
  if (seq > 0) {
    options.push(provenanceArb(seq, 1).map((p) => ({ surfaceOp: 'append', sourceEventSeqs: p })))
    options.push(
      fc
        .record({ start: fc.integer({ min: 0, max: seq - 1 }), end: fc.integer({ min: 0, max: seq - 1 }), sources: provenanceArb(seq, 1) }, RECORD)
        .map(({ start, end, sources }) => ({ surfaceOp: { op: 'replace', start: Seq(start), end: Seq(end) }, sourceEventSeqs: sources })),
    )
  }
  return fc.oneof(...options)
}

/** Options of `eventArb`. */
export interface EventArbOptions {
  dialect?: Dialect
  /** Fixes the seq (e.g. to build a contiguous log); random otherwise. */
  seq?: number
}

/**
 * A valid standalone event of `type`: lossless payload (§1.4), surfaceOp iff surface-eligible (INV-03),
 * well-formed provenance (INV-04). Not meaningful against other events (spans, pairing).
 */
export function eventArb<T extends EventType>(type: T, options: EventArbOptions = {}): fc.Arbitrary<SessionEvent<T>> {
  const dialect = options.dialect ?? 'seed'
  const surface = vocabulary(dialect).surfaceTypes.has(type)
  const seqs = options.seq === undefined ? fc.nat({ max: 100_000 }) : fc.constant(options.seq)
  return seqs.chain((seq) =>
    fc
      .record({ time: timeArb, data: eventDataArb(type, dialect), meta: surface ? surfaceMetaArb(type, seq).map((m): SurfaceMeta | undefined => m) : fc.constant(undefined) }, RECORD)
      .map(({ time, data, meta }) => {
        const event = { seq: Seq(seq), time, type, data, ...meta }
        return event as unknown as SessionEvent<T>
      }),
  )
}

/** Any valid standalone event of the dialect's vocabulary. */
export function anyEventArbFor(dialect: Dialect, options: Omit<EventArbOptions, 'dialect'> = {}): fc.Arbitrary<SessionEvent> {
  const types = EVENT_TYPES.filter((t) => vocabulary(dialect).eventTypes.has(t))
  return fc.oneof(...types.map((t) => eventArb(t, { ...options, dialect }) as fc.Arbitrary<SessionEvent>))
}

/** Any valid standalone event of the seed dialect. */
export const anyEventArb: fc.Arbitrary<SessionEvent> = anyEventArbFor('seed')

/** A foreign log-only event of type `type` (declare the type known, or it is marked ignorable). */
export function foreignEventArb(type: string, ignorable: boolean): fc.Arbitrary<ForeignEvent> {
  return fc.record({ seq: fc.nat({ max: 100_000 }), time: timeArb, data: jsonObjectArb }, RECORD).map(({ seq, time, data }) => {
    const event: ForeignEvent = { seq: Seq(seq), time, type, data }
    if (ignorable) event.ignorable = true
    return event
  })
}

/** A contiguous log of `n` standalone-valid events with seqs 0 … n-1 (not surface-valid). */
export function contiguousEventsArb(maxLength: number, dialect: Dialect = 'seed'): fc.Arbitrary<LogEvent[]> {
  return fc.nat({ max: maxLength }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, seq) => anyEventArbFor(dialect, { seq }))))
}
