/**
 * Drift guard between `schema.json` (source of truth) and the hand-written `types.ts`: (1) a typed example
 * of every definition validates against that definition; (2) for every object definition, the keys of its
 * TypeScript type — listed through a mapped type, so a missing or extra key fails to compile — equal the
 * schema's `properties`; (3) string-literal unions equal the schema enums.
 */
import type { ModelPolicyConfig, ImageAttachmentRef, ToolResultPruneConfig, BasicCompactionConfig } from '@compaction-sim/core'
import type { SchemaObject } from 'ajv'
import { describe, expect, it } from 'vitest'
import type { UsageMode } from '../../src/provider/enforce.ts'
import type { TokenizerName } from '../../src/provider/tokenizers.ts'
import { createScenarioAjv, readScenarioSchema } from '../../src/scenario/build-validator.ts'
import type {
  CompactNowAction, CompactRegionAction, ConcurrentAction, ConcurrentDo, ConcurrentDuring, ConcurrentPoint, PruneAction, CountBound, CountsExpectation, CrashPoint, EventPattern, ExpectConfig, FaultConfig,
  FaultDelivery, FaultKind, FaultParams, FaultWhen, FinalPressureExpectation, GenerateConfig, GeneratedTranscriptConfig,
  InlineImageBlock, InlineReasoningBlock, InlineReply, InlineReplyBlock, InlineReplyObject, InlineResultBlock, InlineStep, InlineTextBlock,
  InlineTokenUsage, InlineTool, NodePattern, PreStepCountsExpectation, RejectionsExpectation, RequestPattern, StringMatcher,
  SummarizedRegionExpectation, WarningPattern, InlineToolCall, InlineToolCallBlock, InlineToolResult, InlineTranscript, InlineTranscriptConfig,
  InlineTurn, InlineUserBlock, ManualAction, PolicyConfig, ProviderCacheConfig, ProviderConfig,
  PrunerConfig, RecordedTranscriptConfig, Scenario, ReportedContextWindowConfig, SummarizerConfig, SummarizerObject, SummarizerPresetName, SummaryAttemptConfig,
  SummaryToolCallConfig, UpstreamSummarizerConfig, EnforceConfig, ImageLimitsConfig, RouteConfig, InlineToolError, InlineToolErrorObject, TranscriptFileHeader,
  FileTranscriptConfig, ImportConfig, ImportTranscriptConfig, ProbeConfig,
  SessionConfig, RestartPoint, VolatileSystemPromptConfig,
  ScenarioEventType, ScenarioFailureCode, ScenarioInvariantId, SubjectName, TranscriptConfig, TurnOutcome, TurnOutcomeKind, WireDialect,
} from '../../src/scenario/types.ts'

const schema = readScenarioSchema()
const definitions = schema['definitions'] as Record<string, SchemaObject>
const ajv = createScenarioAjv()
ajv.addSchema(schema, 'scenario')

function validates(definition: string | null, value: unknown): string[] {
  const validate = ajv.compile({ $ref: definition === null ? 'scenario#' : `scenario#/definitions/${definition}` })
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
}

/** The keys of `T`, every one listed exactly once (a missing or extra key is a compile error). */
const keysOf = <T>(keys: { [K in keyof Required<T>]: true }): string[] => Object.keys(keys).sort()
/** The members of a string-literal union, every one listed exactly once. */
const membersOf = <T extends string>(members: { [K in T]: true }): string[] => Object.keys(members).sort()

const image: ImageAttachmentRef = { attachmentId: 'att-1', mediaType: 'image/png', bytes: 2048, width: 64, height: 48, name: 'plot.png' }
const text: InlineTextBlock = { type: 'text', text: 'hello' }
const reasoning: InlineReasoningBlock = { type: 'reasoning', text: 'thinking' }
const imageBlock: InlineImageBlock = { type: 'image', attachment: image }
const toolCallBlock: InlineToolCallBlock = { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }
const usage: InlineTokenUsage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 4, cacheWriteTokens: 1, reasoningTokens: 1 }
const toolCall: InlineToolCall = { id: 'c2', name: 'read_file', arguments: { path: 'a.ts' } }
const replyObject: InlineReplyObject = { reasoning: 'r', text: 't', toolCalls: [toolCall], usage }
const replyBlocks: InlineReplyObject = { blocks: [text, reasoning, imageBlock, toolCallBlock], usage }
const toolError: InlineToolErrorObject = { code: 'ENOENT', name: 'FileNotFoundError', text: 'no such file' }
const toolResult: InlineToolResult = { callId: 'c2', content: [text, imageBlock], isError: false, meta: { durationMs: 3 } }
const errorResult: InlineToolResult = { callId: 'c3', error: toolError, meta: null }
const step: InlineStep = { reply: replyObject, toolResults: [toolResult], steer: [text, imageBlock] }
const fileHeader: TranscriptFileHeader = { systemPrompt: 'be brief', tools: [{ name: 'read_file' }], facts: ['a fact'] }
const fromFile: FileTranscriptConfig = { file: 'sessions/long.jsonl' }
const importConfig: ImportConfig = { format: 'claude-code', path: 'sessions/s.jsonl', keepSecrets: false }
const imported: ImportTranscriptConfig = { import: importConfig }
const turn: InlineTurn = { user: [text, imageBlock], steps: [step, { reply: 'done' }] }
const tool: InlineTool = { name: 'read_file', description: 'Read a file.', parameters: { type: 'object' } }
const volatileSystemPrompt: VolatileSystemPromptConfig = { every: 'step' }
const inline: InlineTranscript = { systemPrompt: 'be brief', tools: [tool], facts: ['a fact'], turns: [turn], volatileSystemPrompt }
const generate: GenerateConfig = { generator: 'coding-session', turns: 5, params: { hugeOutputs: true }, volatileSystemPrompt: { every: 'turn' } }
const providerCache: ProviderCacheConfig = {
  contract: 'anthropic', deviation: 'half-cached', ttlMs: null, granularityTokens: 1, retention: 'long', breakpoints: [0, 3],
  price: 'anthropic/claude-sonnet-4', minimumCacheableTokens: 512,
}
const summaryToolCall: SummaryToolCallConfig = { name: 'write_checkpoint', arguments: { sections: 8 } }
const summaryAttempt: SummaryAttemptConfig = {
  text: 't', reasoning: 'r', toolCalls: [summaryToolCall, { name: 'noop', arguments: '{}' }], images: 1, finish: 'max-tokens', chunks: 3,
  latencyMs: 250,
}
const summarizer: SummarizerConfig = { script: [summaryAttempt, {}] }
const upstream: UpstreamSummarizerConfig = { url: 'http://127.0.0.1:11434/v1', model: 'llama3.2', apiKeyEnv: 'OPENAI_API_KEY' }
const enforceObject: Exclude<EnforceConfig, string> = { window: 'prompt-plus-max-tokens', pairing: false, images: true, maxOutput: false }
const limits: ImageLimitsConfig = { imagesPerRequest: 4, imageBytes: 5_000_000, requestImageBytes: 20_000_000 }
const route: RouteConfig = {
  model: 'small', wire: 'deepseek', contextWindow: 16000, reportedContextWindow: 0.5, maxOutputTokens: 4096, imageTokens: 85,
  tokenizer: 'o200k_base', enforce: enforceObject, limits, usage: 'late', summarizer,
}
const provider: ProviderConfig = {
  wire: 'deepseek', name: 'ds', model: 'deepseek-chat', contextWindow: 64000, reportedContextWindow: 'none', imageTokens: 85, cache: providerCache,
  maxOutputTokens: 8192, tokenizer: 'dense', enforce: 'off', limits: {}, usage: 'omitted', summarizer: 'reasoning-only',
}
const routedProvider: ProviderConfig = {
  wire: 'deepseek', name: 'ds', enforce: 'on', routes: [{ model: 'big', contextWindow: 128000 }, route], conversation: 'big', summary: 'small',
}
const modelPolicy: ModelPolicyConfig = {
  provider: 'ds', model: 'deepseek-chat', thresholdRatio: 0.7, retainRatio: 0.1, retainTokens: 100, summarizationProvider: 'ds',
  summarizationModel: 'deepseek-chat', maxTokens: 1000, compactionRetries: 2, maxOverflowRetries: 0,
}
const policy: PolicyConfig = {
  thresholdRatio: 0.8, retainRatio: 0.16, retainTokens: 500, summarizationProvider: '', summarizationModel: '', maxTokens: 8192,
  compactionRetries: 1, maxOverflowRetries: 1, modelPolicies: [modelPolicy], auto: true,
}
const prunerConfig: ToolResultPruneConfig = { thresholdChars: 8192, headChars: 4096, tailChars: 1024 }
const when: FaultWhen = {
  requestIndex: 2, purpose: 'conversation', occurrence: 1, afterEvent: 'compaction/start', afterSeq: 10, turn: 2, step: 1, route: 'mock',
  promptTokensAtLeast: 100, maxTokensAbove: 50, hasImages: true, atVirtualMs: 1000,
}
const params: FaultParams = {
  code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long', status: 400, offloadImages: 1.5, delivery: 'after-chunks', chunks: 3,
  retryAfterMs: 100, count: 2, contextWindow: -1, switchTo: 'small', body: '{"error":"x"}', headers: { 'x-a': 'b' },
}
const fault: FaultConfig = { id: 'f1', kind: 'FAULT-01', when, params, optional: true }
const compactNow: CompactNowAction = { action: 'compactNow', afterTurn: 1, sourceCommandId: 'cmd-1' }
const compactRegion: CompactRegionAction = { action: 'compactRegion', turn: 2, beforeStep: 1, start: 1, end: -2 }
const concurrentAction: ConcurrentAction = {
  during: 'summary', occurrence: 1, at: 'after-chunk', chunk: 2, turn: 1, step: 1, afterTurn: 1, do: 'replace-node', node: 'middle',
  signal: 'aborted', imageTokens: 200, start: 1, end: -2,
}
const prune: PruneAction = { action: 'prune', afterTurn: 1 }
const countRange: Exclude<CountBound, number> = { min: 1, max: 3 }
const counts: CountsExpectation = {
  brackets: 1, failedBrackets: 0, prunes: countRange, offloads: { max: 2 }, retries: { min: 0 }, summaryErrors: 0, checkpoints: 1,
}
const finalPressure: FinalPressureExpectation = { ratioMin: 0, ratioMax: 0.8, tokensMin: 0, tokensMax: 1000 }
const outcomeObject: Exclude<TurnOutcome, string> = { kind: 'error', code: 'CONTEXT_WINDOW_EXCEEDED' }
const patternObject: Exclude<EventPattern, string> = { type: 'compaction/end', data: { error: 'x' } }
const contains: StringMatcher = { contains: 'fix the bug' }
const matches: StringMatcher = { matches: '/fix(ed)? the bug/i' }
const textPattern: Exclude<EventPattern, string> = { type: 'user/message', text: contains, data: { content: [{ text: matches }] }, absent: true }
const preStep: PreStepCountsExpectation = { brackets: { max: 1 }, failedBrackets: 0, prunes: { max: 2 }, summaryCalls: { max: 1 }, summaryErrors: 0 }
const node: NodePattern = { type: 'user/message', text: contains, data: { role: 'user' } }
const region: SummarizedRegionExpectation = { bracket: 'any', shadowedSeqs: [3, 4], nodes: { min: 2 }, first: node, last: { type: 'tool/result' } }
const warning: WarningPattern = { matches: '/budget/i', absent: true }
const countedWarning: WarningPattern = { contains: 'no context capacity', count: { min: 1, max: 1 } }
const rejections: RejectionsExpectation = { window: 1, pairing: { min: 1 }, images: 0, maxOutput: 0, fault: 0, unclassified: 0, total: { max: 3 } }
const requestPattern: RequestPattern = {
  purpose: 'conversation', every: true, message: 0, role: 'system', equals: 'first', contains: 'You are', matches: '/^You/',
}
const expectation: ExpectConfig = {
  invariants: ['INV-01', 'INV-45'], outcome: ['completed', outcomeObject], counts, finalPressure,
  events: ['compaction/start', patternObject, textPattern], finalSurfaceNodes: { min: 2 }, perPreStep: preStep, summarized: [region],
  warnings: [warning, contains, countedWarning], rejections, requests: [requestPattern, { purpose: 'compaction', absent: true }],
}
const probe: ProbeConfig = { id: 'path-1', kind: 'artifact', expect: ['src/a.ts', '/ENOENT.*a\\.ts/'], match: 'normalized' }
const recorded: RecordedTranscriptConfig = { recorded: 'fixtures:recorded/x.jsonl', dialect: 'dsh-0.1.0-rc.8' }
const generated: GeneratedTranscriptConfig = { generate }
const inlined: InlineTranscriptConfig = { inline }
const scenario: Scenario = {
  name: 'every-key', description: 'uses every key', tags: ['smoke', 'fast'], seed: 4294967295, subject: 'reference', dialect: 'seed', provider, policy,
  pruner: prunerConfig, transcript: inlined, faults: [fault], manual: [compactNow, compactRegion, prune], concurrent: [concurrentAction],
  probes: [probe, { kind: 'recall', expect: '4821' }],
  expect: expectation,
}
const session: SessionConfig = { name: 'a', transcript: generated, faults: [fault], manual: [compactNow], expect: expectation }
const everySession: Scenario = { ...scenario, name: 'sessions', sessions: [session, { name: 'b' }], restart: [{ afterTurn: 1 }, { inBracket: 1 }] }

/** Typed examples per definition; `null` is the root. */
const examples: Record<string, readonly unknown[]> = {
  '<root>': [scenario, everySession, { name: 'minimal', seed: 0, provider: { wire: 'openai', model: 'm' }, transcript: generated } satisfies Scenario],
  Subject: ['reference'] satisfies SubjectName[],
  Dialect: ['seed', 'dsh-0.1.0-rc.8'],
  Provider: [provider, routedProvider, { wire: 'openai', model: 'gpt' }] satisfies ProviderConfig[],
  Route: [route, { model: 'm' }, { model: 'w', contextWindow: 8000, reportedContextWindow: 128000 }] satisfies RouteConfig[],
  ReportedContextWindow: [0, -4000, 1.5, 128000, 'none'] satisfies ReportedContextWindowConfig[],
  MaxOutputTokens: [1, 8192],
  Tokenizer: ['heuristic', 'o200k_base', 'cl100k_base', 'dense'],
  Enforce: ['on', 'off', enforceObject, { window: true }, { window: false }, {}] satisfies EnforceConfig[],
  ImageLimits: [limits, {}] satisfies ImageLimitsConfig[],
  Usage: ['reported', 'omitted', 'late'],
  ProviderCache: [providerCache, {}, { contract: 'openai', ttlMs: 86_400_000 }] satisfies ProviderCacheConfig[],
  Summarizer: [summarizer, 'builtin', 'reasoning-only', 'tool-call', 'forgets-paths', { fixed: 400 }, { ratio: 1.1 }, { upstream }] satisfies SummarizerConfig[],
  UpstreamSummarizer: [upstream, { url: 'https://api.openai.com/v1' }] satisfies UpstreamSummarizerConfig[],
  Probe: [probe, { kind: 'decision', expect: 'queue' }] satisfies ProbeConfig[],
  SummaryAttempt: [summaryAttempt, {}] satisfies SummaryAttemptConfig[],
  SummaryToolCall: [summaryToolCall, { name: 'ls' }] satisfies SummaryToolCallConfig[],
  Policy: [policy, {}] satisfies BasicCompactionConfig[],
  ModelPolicy: [modelPolicy],
  Pruner: [true, false, prunerConfig, {}] satisfies PrunerConfig[],
  Transcript: [recorded, { recorded: 'logs/a.jsonl' }, generated, inlined, fromFile, imported] satisfies TranscriptConfig[],
  Import: [importConfig, { format: 'dsh', path: 'x.jsonl' }] satisfies ImportConfig[],
  TranscriptFileHeader: [fileHeader, {}] satisfies TranscriptFileHeader[],
  Generate: [generate, { generator: 'runaway', turns: 1 }] satisfies GenerateConfig[],
  InlineTranscript: [inline, { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] }] satisfies InlineTranscript[],
  VolatileSystemPrompt: [volatileSystemPrompt, { every: 'turn' }] satisfies VolatileSystemPromptConfig[],
  InlineTool: [tool, { name: 'ls' }] satisfies InlineTool[],
  InlineTurn: [turn],
  InlineStep: [step, { reply: replyBlocks }, { reply: 'r', steer: 'wait' }] satisfies InlineStep[],
  InlineReply: ['plain', replyObject, replyBlocks, {}] satisfies InlineReply[],
  InlineToolCall: [toolCall, { name: 'ls', arguments: '{}' }, { name: 'ls' }] satisfies InlineToolCall[],
  InlineToolResult: [toolResult, { content: 'ok' }, errorResult, { error: 'failed' }] satisfies InlineToolResult[],
  InlineToolError: [toolError, { code: 'E' }, 'permission denied'] satisfies InlineToolError[],
  UserBlock: [text, imageBlock] satisfies InlineUserBlock[],
  ReplyBlock: [text, reasoning, imageBlock, toolCallBlock] satisfies InlineReplyBlock[],
  ResultBlock: [text, imageBlock] satisfies InlineResultBlock[],
  TextBlock: [text],
  ReasoningBlock: [reasoning],
  ImageBlock: [imageBlock],
  ImageAttachment: [image],
  ToolCallBlock: [toolCallBlock],
  TokenUsage: [usage, { inputTokens: 0, outputTokens: 0 }] satisfies InlineTokenUsage[],
  FaultKind: ['FAULT-01', 'FAULT-84'] satisfies FaultKind[],
  Fault: [fault, { kind: 'FAULT-50' }] satisfies FaultConfig[],
  FaultWhen: [when, {}] satisfies FaultWhen[],
  CrashPoint: ['checkpoint', 'compaction/prune'] satisfies CrashPoint[],
  FaultParams: [params, {}, { delivery: 'before-headers' }, { codes: ['SERVER', 'RATE_LIMIT'], count: 2 }] satisfies FaultParams[],
  FailureCode: ['SERVER', 'UNKNOWN'] satisfies ScenarioFailureCode[],
  ManualAction: [compactNow, compactRegion, prune] satisfies ManualAction[],
  Session: [session, { name: 'b-2' }] satisfies SessionConfig[],
  Restart: [{ afterTurn: 2 }, { inBracket: 1 }] satisfies RestartPoint[],
  CompactNowAction: [compactNow, { action: 'compactNow', afterTurn: 0 }] satisfies CompactNowAction[],
  CompactRegionAction: [compactRegion, { action: 'compactRegion', turn: 1, start: 0, end: 0 }] satisfies CompactRegionAction[],
  ConcurrentAction: [concurrentAction, { during: 'idle', do: 'compact-now' }] satisfies ConcurrentAction[],
  PruneAction: [prune, { action: 'prune', afterTurn: 0 }] satisfies PruneAction[],
  Expect: [expectation, { invariants: 'all' }, {}] satisfies ExpectConfig[],
  InvariantId: ['INV-01', 'INV-47'] satisfies ScenarioInvariantId[],
  TurnOutcomeKind: ['interrupted'] satisfies TurnOutcomeKind[],
  TurnOutcome: ['completed', outcomeObject, { kind: 'aborted' }] satisfies TurnOutcome[],
  Counts: [counts, {}] satisfies CountsExpectation[],
  CountBound: [0, 7, countRange, { min: 1 }, { max: 1 }] satisfies CountBound[],
  FinalPressure: [finalPressure, { tokensMax: 1 }] satisfies FinalPressureExpectation[],
  EventType: ['turn/start', 'image/offload'] satisfies ScenarioEventType[],
  EventPattern: ['llm/retry', patternObject, { type: 'turn/end' }, textPattern] satisfies EventPattern[],
  StringMatcher: [contains, matches] satisfies StringMatcher[],
  PreStepCounts: [preStep, { summaryCalls: 1 }] satisfies PreStepCountsExpectation[],
  SummarizedRegion: [region, { shadowedSeqs: [1] }, { bracket: 2, first: node }] satisfies SummarizedRegionExpectation[],
  NodePattern: [node, { text: matches }] satisfies NodePattern[],
  WarningPattern: [warning, contains, countedWarning, { matches: '/x/', count: 2 }] satisfies WarningPattern[],
  Rejections: [rejections, { window: 0 }] satisfies RejectionsExpectation[],
  RequestPattern: [requestPattern, {}, { purpose: 'compaction', contains: 'summarize' }] satisfies RequestPattern[],
}

/** Object definitions (or the object branch of a union) → the keys of their TypeScript type. */
const typeKeys: Record<string, { pointer: string; keys: string[] }> = {
  '<root>': { pointer: '', keys: keysOf<Scenario>({
    name: true, description: true, tags: true, seed: true, subject: true, dialect: true, provider: true, policy: true, pruner: true,
    transcript: true, faults: true, manual: true, concurrent: true, sessions: true, restart: true, probes: true, expect: true,
  }) },
  Session: { pointer: 'Session', keys: keysOf<SessionConfig>({ name: true, transcript: true, faults: true, manual: true, expect: true }) },
  Restart: { pointer: 'Restart', keys: keysOf<RestartPoint>({ afterTurn: true, inBracket: true }) },
  Probe: { pointer: 'Probe', keys: keysOf<ProbeConfig>({ id: true, kind: true, expect: true, match: true }) },
  Provider: { pointer: 'Provider', keys: keysOf<ProviderConfig>({
    wire: true, name: true, model: true, contextWindow: true, reportedContextWindow: true, imageTokens: true, cache: true, maxOutputTokens: true,
    tokenizer: true,
    enforce: true, limits: true, usage: true, summarizer: true, routes: true, conversation: true, summary: true,
  }) },
  Summarizer: { pointer: 'Summarizer', keys: keysOf<SummarizerObject>({ fixed: true, ratio: true, script: true, upstream: true }) },
  UpstreamSummarizer: { pointer: 'UpstreamSummarizer', keys: keysOf<UpstreamSummarizerConfig>({ url: true, model: true, apiKeyEnv: true }) },
  SummaryAttempt: { pointer: 'SummaryAttempt', keys: keysOf<SummaryAttemptConfig>({
    text: true, reasoning: true, toolCalls: true, images: true, finish: true, chunks: true, latencyMs: true,
  }) },
  SummaryToolCall: { pointer: 'SummaryToolCall', keys: keysOf<SummaryToolCallConfig>({ name: true, arguments: true }) },
  Route: { pointer: 'Route', keys: keysOf<RouteConfig>({
    model: true, wire: true, contextWindow: true, reportedContextWindow: true, maxOutputTokens: true, imageTokens: true, tokenizer: true,
    enforce: true, limits: true,
    usage: true, summarizer: true,
  }) },
  Enforce: { pointer: 'Enforce/else', keys: keysOf<Exclude<EnforceConfig, string>>({ window: true, pairing: true, images: true, maxOutput: true }) },
  ImageLimits: { pointer: 'ImageLimits', keys: keysOf<ImageLimitsConfig>({ imagesPerRequest: true, imageBytes: true, requestImageBytes: true }) },
  ProviderCache: { pointer: 'ProviderCache', keys: keysOf<ProviderCacheConfig>({
    contract: true, deviation: true, ttlMs: true, granularityTokens: true, retention: true, breakpoints: true, price: true,
    minimumCacheableTokens: true,
  }) },
  Policy: { pointer: 'Policy', keys: keysOf<PolicyConfig>({
    thresholdRatio: true, retainRatio: true, retainTokens: true, summarizationProvider: true, summarizationModel: true, maxTokens: true,
    compactionRetries: true, maxOverflowRetries: true, modelPolicies: true, auto: true, profile: true, hardening: true,
  }) },
  ModelPolicy: { pointer: 'ModelPolicy', keys: keysOf<ModelPolicyConfig>({
    provider: true, model: true, thresholdRatio: true, retainRatio: true, retainTokens: true, summarizationProvider: true,
    summarizationModel: true, maxTokens: true, compactionRetries: true, maxOverflowRetries: true,
  }) },
  Pruner: { pointer: 'Pruner', keys: keysOf<ToolResultPruneConfig>({ thresholdChars: true, headChars: true, tailChars: true }) },
  Transcript: { pointer: 'Transcript', keys: [
    ...keysOf<RecordedTranscriptConfig>({ recorded: true, dialect: true }), ...keysOf<GeneratedTranscriptConfig>({ generate: true }),
    ...keysOf<InlineTranscriptConfig>({ inline: true }), ...keysOf<FileTranscriptConfig>({ file: true }),
    ...keysOf<ImportTranscriptConfig>({ import: true }),
  ].sort() },
  Import: { pointer: 'Import', keys: keysOf<ImportConfig>({ format: true, path: true, keepSecrets: true }) },
  TranscriptFileHeader: { pointer: 'TranscriptFileHeader', keys: keysOf<TranscriptFileHeader>({ systemPrompt: true, tools: true, facts: true }) },
  Generate: { pointer: 'Generate', keys: keysOf<GenerateConfig>({ generator: true, turns: true, params: true, volatileSystemPrompt: true }) },
  InlineTranscript: { pointer: 'InlineTranscript', keys: keysOf<InlineTranscript>({ systemPrompt: true, tools: true, facts: true, turns: true, volatileSystemPrompt: true }) },
  VolatileSystemPrompt: { pointer: 'VolatileSystemPrompt', keys: keysOf<VolatileSystemPromptConfig>({ every: true }) },
  InlineTool: { pointer: 'InlineTool', keys: keysOf<InlineTool>({ name: true, description: true, parameters: true }) },
  InlineTurn: { pointer: 'InlineTurn', keys: keysOf<InlineTurn>({ user: true, steps: true }) },
  InlineStep: { pointer: 'InlineStep', keys: keysOf<InlineStep>({ reply: true, toolResults: true, steer: true }) },
  InlineReply: { pointer: 'InlineReply', keys: keysOf<InlineReplyObject>({ reasoning: true, text: true, toolCalls: true, blocks: true, usage: true }) },
  InlineToolError: { pointer: 'InlineToolError', keys: keysOf<InlineToolErrorObject>({ code: true, name: true, text: true }) },
  InlineToolCall: { pointer: 'InlineToolCall', keys: keysOf<InlineToolCall>({ id: true, name: true, arguments: true }) },
  InlineToolResult: { pointer: 'InlineToolResult', keys: keysOf<InlineToolResult>({
    callId: true, content: true, isError: true, error: true, meta: true,
  }) },
  UserBlock: { pointer: 'UserBlock', keys: ['type'] },
  ReplyBlock: { pointer: 'ReplyBlock', keys: ['type'] },
  ResultBlock: { pointer: 'ResultBlock', keys: ['type'] },
  TextBlock: { pointer: 'TextBlock', keys: keysOf<InlineTextBlock>({ type: true, text: true }) },
  ReasoningBlock: { pointer: 'ReasoningBlock', keys: keysOf<InlineReasoningBlock>({ type: true, text: true }) },
  ImageBlock: { pointer: 'ImageBlock', keys: keysOf<InlineImageBlock>({ type: true, attachment: true }) },
  ImageAttachment: { pointer: 'ImageAttachment', keys: keysOf<ImageAttachmentRef>({
    attachmentId: true, mediaType: true, bytes: true, width: true, height: true, name: true,
  }) },
  ToolCallBlock: { pointer: 'ToolCallBlock', keys: keysOf<InlineToolCallBlock>({ type: true, id: true, name: true, arguments: true }) },
  TokenUsage: { pointer: 'TokenUsage', keys: keysOf<InlineTokenUsage>({
    inputTokens: true, outputTokens: true, cacheReadTokens: true, cacheWriteTokens: true, reasoningTokens: true,
  }) },
  Fault: { pointer: 'Fault', keys: keysOf<FaultConfig>({ id: true, kind: true, when: true, params: true, optional: true }) },
  FaultWhen: { pointer: 'FaultWhen', keys: keysOf<FaultWhen>({
    requestIndex: true, purpose: true, occurrence: true, afterEvent: true, afterSeq: true, turn: true, step: true, route: true,
    promptTokensAtLeast: true, maxTokensAbove: true, hasImages: true, atVirtualMs: true,
  }) },
  FaultParams: { pointer: 'FaultParams', keys: keysOf<FaultParams>({
    code: true, message: true, status: true, offloadImages: true, delivery: true, chunks: true, retryAfterMs: true, count: true, contextWindow: true,
    switchTo: true, body: true, headers: true, codes: true,
  }) },
  ManualAction: { pointer: 'ManualAction', keys: ['action'] },
  CompactNowAction: { pointer: 'CompactNowAction', keys: keysOf<CompactNowAction>({ action: true, afterTurn: true, sourceCommandId: true }) },
  CompactRegionAction: { pointer: 'CompactRegionAction', keys: keysOf<CompactRegionAction>({
    action: true, turn: true, beforeStep: true, start: true, end: true,
  }) },
  ConcurrentAction: { pointer: 'ConcurrentAction', keys: keysOf<ConcurrentAction>({
    during: true, occurrence: true, at: true, chunk: true, turn: true, step: true, afterTurn: true, do: true, node: true, signal: true,
    imageTokens: true, start: true, end: true,
  }) },
  PruneAction: { pointer: 'PruneAction', keys: keysOf<PruneAction>({ action: true, afterTurn: true }) },
  Expect: { pointer: 'Expect', keys: keysOf<ExpectConfig>({
    seedSpecific: true, invariants: true, outcome: true, counts: true, finalPressure: true, events: true, finalSurfaceNodes: true,
    perPreStep: true, summarized: true, warnings: true, rejections: true, requests: true,
  }) },
  TurnOutcome: { pointer: 'TurnOutcome/else', keys: keysOf<Exclude<TurnOutcome, string>>({ kind: true, code: true }) },
  Counts: { pointer: 'Counts', keys: keysOf<CountsExpectation>({
    brackets: true, failedBrackets: true, prunes: true, offloads: true, retries: true, summaryErrors: true, checkpoints: true,
  }) },
  CountBound: { pointer: 'CountBound', keys: keysOf<Exclude<CountBound, number>>({ min: true, max: true }) },
  FinalPressure: { pointer: 'FinalPressure', keys: keysOf<FinalPressureExpectation>({ ratioMin: true, ratioMax: true, tokensMin: true, tokensMax: true }) },
  EventPattern: { pointer: 'EventPattern/else', keys: keysOf<Exclude<EventPattern, string>>({ type: true, data: true, text: true, absent: true }) },
  StringMatcher: { pointer: 'StringMatcher', keys: ['contains', 'matches'] },
  PreStepCounts: { pointer: 'PreStepCounts', keys: keysOf<PreStepCountsExpectation>({
    brackets: true, failedBrackets: true, prunes: true, summaryCalls: true, summaryErrors: true,
  }) },
  SummarizedRegion: { pointer: 'SummarizedRegion', keys: keysOf<SummarizedRegionExpectation>({
    bracket: true, shadowedSeqs: true, nodes: true, first: true, last: true,
  }) },
  NodePattern: { pointer: 'NodePattern', keys: keysOf<NodePattern>({ type: true, text: true, data: true }) },
  WarningPattern: { pointer: 'WarningPattern', keys: ['absent', 'contains', 'count', 'matches'] },
  Rejections: { pointer: 'Rejections', keys: keysOf<RejectionsExpectation>({
    window: true, pairing: true, images: true, maxOutput: true, fault: true, unclassified: true, total: true,
  }) },
  RequestPattern: { pointer: 'RequestPattern', keys: keysOf<RequestPattern>({
    purpose: true, every: true, absent: true, message: true, role: true, equals: true, contains: true, matches: true,
  }) },
}

/** Literal unions declared only in TypeScript → the enum they must equal (pointer below #/definitions). */
const unions: Array<{ pointer: string; members: string[] }> = [
  { pointer: 'ConcurrentAction/properties/during', members: membersOf<ConcurrentDuring>({ summary: true, flush: true, 'pre-step': true, idle: true }) },
  { pointer: 'ConcurrentAction/properties/at', members: membersOf<ConcurrentPoint>({
    'before-first-chunk': true, 'after-chunk': true, 'after-resolve': true, seed: true,
  }) },
  { pointer: 'ConcurrentAction/properties/do', members: membersOf<ConcurrentDo>({
    'compact-now': true, 'compact-region': true, 'pressure-check': true, 'replace-node': true, 'price-change': true, 'append-surface': true,
    'append-log-only': true, 'user-prompt': true, 'abort-caller': true, 'cancel-agent': true, 'abort-turn': true,
  }) },
  { pointer: 'Subject', members: membersOf<SubjectName>({ reference: true, dsh: true }) },
  { pointer: 'VolatileSystemPrompt/properties/every', members: membersOf<VolatileSystemPromptConfig['every']>({ step: true, turn: true }) },
  { pointer: 'Provider/properties/wire', members: membersOf<WireDialect>({ openai: true, deepseek: true, anthropic: true }) },
  { pointer: 'Route/properties/wire', members: membersOf<WireDialect>({ openai: true, deepseek: true, anthropic: true }) },
  { pointer: 'Tokenizer', members: membersOf<TokenizerName>({ heuristic: true, o200k_base: true, cl100k_base: true, dense: true }) },
  { pointer: 'Usage', members: membersOf<UsageMode>({ reported: true, omitted: true, late: true }) },
  { pointer: 'ProviderCache/properties/contract', members: membersOf<NonNullable<ProviderCacheConfig['contract']>>({
    protocol: true, openai: true, anthropic: true, deepseek: true,
  }) },
  { pointer: 'ProviderCache/properties/deviation', members: membersOf<NonNullable<ProviderCacheConfig['deviation']>>({
    none: true, 'none-cached': true, 'half-cached': true,
  }) },
  { pointer: 'ProviderCache/properties/retention', members: membersOf<NonNullable<ProviderCacheConfig['retention']>>({
    short: true, long: true,
  }) },
  { pointer: 'Summarizer/then', members: membersOf<SummarizerPresetName>({
    builtin: true, 'reasoning-only': true, 'tool-call': true, 'forgets-paths': true,
  }) },
  { pointer: 'Probe/properties/kind', members: membersOf<ProbeConfig['kind']>({
    recall: true, artifact: true, continuation: true, decision: true,
  }) },
  { pointer: 'Probe/properties/match', members: membersOf<NonNullable<ProbeConfig['match']>>({ exact: true, normalized: true }) },
  { pointer: 'SummaryAttempt/properties/finish', members: membersOf<NonNullable<SummaryAttemptConfig['finish']>>({
    stop: true, 'tool-calls': true, 'max-tokens': true,
  }) },
  { pointer: 'TurnOutcomeKind', members: membersOf<TurnOutcomeKind>({
    completed: true, blocked: true, 'max-tokens': true, aborted: true, error: true, interrupted: true,
  }) },
  { pointer: 'FaultParams/properties/delivery', members: membersOf<FaultDelivery>({ 'before-headers': true, 'after-headers': true, 'after-chunks': true, 'after-timeout': true }) },
  { pointer: 'RequestPattern/properties/purpose', members: membersOf<NonNullable<RequestPattern['purpose']>>({
    conversation: true, compaction: true, 'session-title': true,
  }) },
  { pointer: 'RequestPattern/properties/role', members: membersOf<NonNullable<RequestPattern['role']>>({ system: true, user: true, assistant: true }) },
  { pointer: 'RequestPattern/properties/equals', members: membersOf<NonNullable<RequestPattern['equals']>>({ first: true, previous: true }) },
  { pointer: 'FaultWhen/properties/purpose', members: membersOf<NonNullable<FaultWhen['purpose']>>({ conversation: true, compaction: true }) },
]

function at(pointer: string): SchemaObject {
  let node: unknown = pointer === '' ? schema : definitions
  for (const segment of pointer === '' ? [] : pointer.split('/')) node = (node as Record<string, unknown>)[segment]
  return node as SchemaObject
}

describe('types.ts ⟷ schema.json', () => {
  it('has a typed example for every definition', () => {
    expect(Object.keys(examples).filter((k) => k !== '<root>').sort()).toEqual(Object.keys(definitions).sort())
  })

  it.each(Object.entries(examples))('every example of %s validates against its definition', (name, values) => {
    for (const value of values) expect(validates(name === '<root>' ? null : name, value)).toEqual([])
  })

  it('covers every object definition of the schema with a key list', () => {
    const withProperties = Object.entries(definitions).filter(([, d]) => d['properties'] !== undefined || d['else'] !== undefined).map(([n]) => n)
    expect(Object.keys(typeKeys).filter((k) => k !== '<root>').sort()).toEqual(withProperties.sort())
  })

  it.each(Object.entries(typeKeys))('the keys of the %s type equal the schema properties', (_name, { pointer, keys }) => {
    expect(keys).toEqual(Object.keys(at(pointer)['properties'] as object).sort())
  })

  it.each(unions.map((u) => [u.pointer, u.members] as const))('the union behind %s equals the schema enum', (pointer, members) => {
    expect(members).toEqual([...(at(pointer)['enum'] as string[])].sort())
  })
})
