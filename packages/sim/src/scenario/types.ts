/**
 * TypeScript mirror of the scenario JSON Schema (`schema.json`, the source of truth): `Scenario` is a
 * document as written in YAML after validation, with every optional key still optional. The resolved,
 * defaults-filled form is `ResolvedScenario` in `resolve.ts`. `test/scenario/types.test.ts` validates a
 * typed example of every definition against the schema and checks every schema key is exercised, so the
 * two cannot drift apart.
 */
import type { CacheContractConfig } from '../metrics/contracts.ts'
import type { UsageMode, WindowRule } from '../provider/enforce.ts'
import type { TokenizerName } from '../provider/tokenizers.ts'
import type {
  BasicCompactionConfig, Dialect, EventType, FailureCode, ImageAttachmentRef, ToolResultPruneConfig,
} from '@compaction-sim/core'

/** `#/definitions/Subject`: what runs the session (`dsh` = the released official engine, issue #7). */
export type SubjectName = 'reference' | 'dsh'

/** `#/definitions/Provider/properties/wire`: the wire dialect of the mock provider. */
export type WireDialect = 'openai' | 'deepseek' | 'anthropic'

/**
 * `#/definitions/Provider`: one provider id and wire serving either one route (the shorthand: `model` with
 * the route keys beside it) or `routes` (issue #15). `contextWindow` absent = no capacity reported (FAULT-40).
 */
export interface ProviderConfig {
  wire: WireDialect
  name?: string
  model?: string
  contextWindow?: number
  reportedContextWindow?: ReportedContextWindowConfig
  imageTokens?: number
  maxOutputTokens?: number
  tokenizer?: TokenizerName
  /** With `routes`, the default of every route; with `model`, the one route's. */
  enforce?: EnforceConfig
  limits?: ImageLimitsConfig
  usage?: UsageMode
  summarizer?: SummarizerConfig
  routes?: RouteConfig[]
  conversation?: string
  summary?: string
  cache?: ProviderCacheConfig
}

/** `#/definitions/ReportedContextWindow`: the capacity a route reports (FAULT-41): any number, or `none`. */
export type ReportedContextWindowConfig = number | 'none'

/** `#/definitions/Summarizer/then`: a one-word summarizer (issue #15). */
export type SummarizerPresetName = 'builtin' | 'reasoning-only' | 'tool-call' | 'forgets-paths'

/** The object form of `#/definitions/Summarizer`: exactly one of `fixed`, `ratio`, `script`, `upstream`. */
export interface SummarizerObject {
  fixed?: number
  ratio?: number
  script?: SummaryAttemptConfig[]
  upstream?: UpstreamSummarizerConfig
}

/** `#/definitions/UpstreamSummarizer`: a real OpenAI-compatible summarizer, recorded to a cassette (issue #20). */
export interface UpstreamSummarizerConfig {
  url: string
  model?: string
  apiKeyEnv?: string
}

/** `#/definitions/Summarizer`: what the summary route answers to compaction requests (issue #15). */
export type SummarizerConfig = SummarizerPresetName | SummarizerObject

/** `#/definitions/SummaryToolCall`: a tool call of a scripted summary attempt; `arguments` as JSON text or an object. */
export interface SummaryToolCallConfig {
  name: string
  arguments?: string | Record<string, unknown>
}

/** `#/definitions/SummaryAttempt`: one scripted summary attempt. */
export interface SummaryAttemptConfig {
  text?: string
  reasoning?: string
  toolCalls?: SummaryToolCallConfig[]
  images?: number
  finish?: 'stop' | 'tool-calls' | 'max-tokens'
  chunks?: number
  latencyMs?: number
}

/** `#/definitions/Route`: one route of `provider.routes`. */
export interface RouteConfig {
  model: string
  wire?: WireDialect
  contextWindow?: number
  reportedContextWindow?: ReportedContextWindowConfig
  maxOutputTokens?: number
  imageTokens?: number
  tokenizer?: TokenizerName
  enforce?: EnforceConfig
  limits?: ImageLimitsConfig
  usage?: UsageMode
  summarizer?: SummarizerConfig
}

/** `#/definitions/Enforce`: every rule, none, or rules turned off one by one (missing keys on). */
export type EnforceConfig = 'on' | 'off' | {
  window?: boolean | WindowRule
  pairing?: boolean
  images?: boolean
  maxOutput?: boolean
}

/** `#/definitions/ImageLimits`. */
export interface ImageLimitsConfig {
  imagesPerRequest?: number
  imageBytes?: number
  requestImageBytes?: number
}

/** `#/definitions/ProviderCache`: the prompt-cache contract of the mock (issue #9); the same shape `metrics/contracts.ts` resolves. */
export type ProviderCacheConfig = CacheContractConfig

/** `#/definitions/Policy`: the §3.1 `BasicCompactionConfig` of the core (types checked by the schema). */
export type PolicyConfig = BasicCompactionConfig

/** `#/definitions/Pruner`: not loaded (`false`), defaults (`true`) or §5.1 overrides. */
export type PrunerConfig = boolean | ToolResultPruneConfig

/** `#/definitions/TextBlock`. */
export interface InlineTextBlock { type: 'text'; text: string }
/** `#/definitions/ReasoningBlock`. */
export interface InlineReasoningBlock { type: 'reasoning'; text: string }
/** `#/definitions/ImageBlock`. */
export interface InlineImageBlock { type: 'image'; attachment: ImageAttachmentRef }
/** `#/definitions/ToolCallBlock`: `arguments` is raw JSON text. */
export interface InlineToolCallBlock { type: 'tool-call'; id: string; name: string; arguments: string }

/** `#/definitions/UserBlock`: a block of user input. */
export type InlineUserBlock = InlineTextBlock | InlineImageBlock
/** `#/definitions/ReplyBlock`: a block of a model reply. */
export type InlineReplyBlock = InlineTextBlock | InlineReasoningBlock | InlineImageBlock | InlineToolCallBlock
/** `#/definitions/ResultBlock`: a block of a tool result. */
export type InlineResultBlock = InlineTextBlock | InlineImageBlock

/** `#/definitions/TokenUsage`: provider usage in disjoint buckets (§1.2). */
export interface InlineTokenUsage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

/** `#/definitions/InlineToolCall`: a compact tool call; `arguments` as JSON text or an object. */
export interface InlineToolCall {
  id?: string
  name: string
  arguments?: string | Record<string, unknown>
}

/** The object form of `#/definitions/InlineReply`: compact keys, or the full `blocks` (never both). */
export interface InlineReplyObject {
  reasoning?: string
  text?: string
  toolCalls?: InlineToolCall[]
  blocks?: InlineReplyBlock[]
  usage?: InlineTokenUsage
}

/** `#/definitions/InlineReply`: a string is one text block. */
export type InlineReply = string | InlineReplyObject

/** The object form of `#/definitions/InlineToolError`: a stable code, the error class name and the text the model sees. */
export interface InlineToolErrorObject {
  code: string
  name?: string
  text?: string
}

/** `#/definitions/InlineToolError`: a string is the error text (code `TOOL_ERROR`). */
export type InlineToolError = string | InlineToolErrorObject

/**
 * `#/definitions/InlineToolResult`: matched to the reply's calls by `callId`, else by position; kept in the
 * order given. `content` or `error` (or both) must be present (a cross-field rule of `resolve.ts`).
 */
export interface InlineToolResult {
  callId?: string
  content?: string | InlineResultBlock[]
  isError?: boolean
  error?: InlineToolError
  meta?: unknown
}

/** `#/definitions/InlineStep`: `steer` is a user message entered before the next step's request. */
export interface InlineStep {
  reply: InlineReply
  toolResults?: InlineToolResult[]
  steer?: string | InlineUserBlock[]
}

/** `#/definitions/InlineTurn`. */
export interface InlineTurn {
  user: string | InlineUserBlock[]
  steps: InlineStep[]
}

/** `#/definitions/InlineTool`: a tool schema with optional description and parameters. */
export interface InlineTool {
  name: string
  description?: string
  parameters?: Record<string, unknown>
}

/** `#/definitions/TranscriptFileHeader`: the optional first line of a `transcript.file` JSONL file. */
export interface TranscriptFileHeader {
  systemPrompt?: string
  tools?: InlineTool[]
  facts?: string[]
}

/**
 * `#/definitions/VolatileSystemPrompt`: the rendered system prompt changes at every step open or once per turn
 * (an `<environment>` block after the transcript's prompt, `run/system-prompt.ts`), deterministically.
 */
export interface VolatileSystemPromptConfig {
  every: 'step' | 'turn'
}

/** `#/definitions/InlineTranscript`: a hand-written transcript (a full fixtures `Transcript` also fits). */
export interface InlineTranscript {
  systemPrompt?: string
  tools?: InlineTool[]
  facts?: string[]
  turns: InlineTurn[]
  volatileSystemPrompt?: VolatileSystemPromptConfig
}

/** `#/definitions/Generate`: a seeded generator of packages/fixtures. */
export interface GenerateConfig {
  generator: string
  turns: number
  params?: Record<string, unknown>
  volatileSystemPrompt?: VolatileSystemPromptConfig
}

/** `#/definitions/Transcript`, recorded form: a log path (scenario folder or `fixtures:`) and its dialect. */
export interface RecordedTranscriptConfig { recorded: string; dialect?: Dialect }
/** `#/definitions/Transcript`, generated form. */
export interface GeneratedTranscriptConfig { generate: GenerateConfig }
/** `#/definitions/Transcript`, inline form. */
export interface InlineTranscriptConfig { inline: InlineTranscript }

/** `#/definitions/Transcript`, external-file form: a JSONL transcript (scenario folder or `fixtures:`), any size. */
export interface FileTranscriptConfig { file: string }

/** `#/definitions/Import`: a real session file read by an importer (issue #20). */
export interface ImportConfig {
  format: 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'claude-code' | 'codex' | 'dsh'
  path: string
  keepSecrets?: boolean
}

/** `#/definitions/Transcript`, import form: a real session file (scenario folder or `fixtures:`) and its format. */
export interface ImportTranscriptConfig { import: ImportConfig }

/** `#/definitions/Transcript`: exactly one source. */
export type TranscriptConfig =
  | RecordedTranscriptConfig | GeneratedTranscriptConfig | InlineTranscriptConfig | FileTranscriptConfig | ImportTranscriptConfig

/** Every fault id of protocol §13, in catalog order (`#/definitions/FaultKind`). */
export const FAULT_KINDS = [
  'FAULT-01', 'FAULT-02', 'FAULT-03', 'FAULT-04', 'FAULT-05', 'FAULT-06', 'FAULT-07', 'FAULT-08', 'FAULT-09',
  'FAULT-10', 'FAULT-11', 'FAULT-12', 'FAULT-13', 'FAULT-14', 'FAULT-15', 'FAULT-16', 'FAULT-17',
  'FAULT-20', 'FAULT-21', 'FAULT-22', 'FAULT-23', 'FAULT-24', 'FAULT-25', 'FAULT-26', 'FAULT-27', 'FAULT-28',
  'FAULT-29', 'FAULT-30', 'FAULT-31', 'FAULT-32', 'FAULT-33',
  'FAULT-40', 'FAULT-41', 'FAULT-42', 'FAULT-43', 'FAULT-44', 'FAULT-45', 'FAULT-46',
  'FAULT-50', 'FAULT-51', 'FAULT-52', 'FAULT-53', 'FAULT-54', 'FAULT-55', 'FAULT-56', 'FAULT-57',
  'FAULT-60', 'FAULT-61', 'FAULT-62', 'FAULT-63', 'FAULT-64', 'FAULT-65', 'FAULT-66',
  'FAULT-70', 'FAULT-71', 'FAULT-72', 'FAULT-73', 'FAULT-74', 'FAULT-75', 'FAULT-76', 'FAULT-77', 'FAULT-78', 'FAULT-79',
  'FAULT-80', 'FAULT-81', 'FAULT-82', 'FAULT-83', 'FAULT-84',
] as const

/** One fault id of §13 (a closed set; ids are an API and never renumbered). */
export type FaultKind = (typeof FAULT_KINDS)[number]

/** `#/definitions/CrashPoint`: an event type of §1.4, or `checkpoint` (a bracket's replacement `user/message`). */
export type CrashPoint = ScenarioEventType | 'checkpoint'

/** `#/definitions/EventType`: the seed vocabulary of §1.4 (the core's `EventType`). */
export type ScenarioEventType = EventType

/** `#/definitions/FaultWhen`: all given conditions must hold. */
export interface FaultWhen {
  requestIndex?: number
  purpose?: 'conversation' | 'compaction'
  occurrence?: number
  afterEvent?: CrashPoint
  afterSeq?: number
  turn?: number
  step?: number
  route?: string
  promptTokensAtLeast?: number
  maxTokensAbove?: number
  hasImages?: boolean
  atVirtualMs?: number
}

/** `#/definitions/FailureCode`: a canonical failure code of §1.2.1 (the core's `FailureCode`). */
export type ScenarioFailureCode = FailureCode

/** `#/definitions/FaultParams/properties/delivery`: when the failure reaches the client. */
export type FaultDelivery = 'before-headers' | 'after-headers' | 'after-chunks' | 'after-timeout'

/** `#/definitions/FaultParams`. */
export interface FaultParams {
  code?: ScenarioFailureCode
  message?: string
  status?: number
  offloadImages?: number
  delivery?: FaultDelivery
  chunks?: number
  retryAfterMs?: number
  count?: number
  contextWindow?: number
  /** FAULT-44: the declared route to switch to. */
  switchTo?: string
  /** A raw response body, answered verbatim (a string byte for byte, JSON otherwise). */
  body?: string | Record<string, unknown> | unknown[]
  headers?: Record<string, string>
  codes?: ScenarioFailureCode[]
}

/** `#/definitions/Fault`: one injected fault. */
export interface FaultConfig {
  id?: string
  kind: FaultKind
  when?: FaultWhen
  params?: FaultParams
  optional?: boolean
}

/** `#/definitions/CompactNowAction`. */
export interface CompactNowAction {
  action: 'compactNow'
  /** Turns completed before the call; 0 = before the first turn. After a crash restore, due ones of the crash turn run first. */
  afterTurn: number
  sourceCommandId?: string
}

/** `#/definitions/CompactRegionAction`: positions are 0-based, negative counts from the end. */
export interface CompactRegionAction {
  action: 'compactRegion'
  turn: number
  beforeStep?: number
  start: number
  end: number
}

/** `#/definitions/PruneAction`: the pruner called between turns, with no turn open (FAULT-66). */
export interface PruneAction {
  action: 'prune'
  afterTurn: number
}

/** `#/definitions/ManualAction`. */
export type ManualAction = CompactNowAction | CompactRegionAction | PruneAction

/** `#/definitions/ConcurrentAction/properties/during`: what is in flight when the action runs. */
export type ConcurrentDuring = 'summary' | 'flush' | 'pre-step' | 'idle'

/** `#/definitions/ConcurrentAction/properties/at`: a point of a summary call. */
export type ConcurrentPoint = 'before-first-chunk' | 'after-chunk' | 'after-resolve' | 'seed'

/** The actions of `#/definitions/ConcurrentAction/properties/do`, in schema order. */
export const CONCURRENT_DOS = [
  'compact-now', 'compact-region', 'pressure-check', 'replace-node', 'price-change', 'append-surface', 'append-log-only',
  'user-prompt', 'abort-caller', 'cancel-agent', 'abort-turn',
] as const

/** One action of `concurrent:`. */
export type ConcurrentDo = (typeof CONCURRENT_DOS)[number]

/** `#/definitions/ConcurrentAction`: one action run while something else is in flight (§13.6, §13.7). */
export interface ConcurrentAction {
  during: ConcurrentDuring
  occurrence?: number
  at?: ConcurrentPoint
  chunk?: number
  turn?: number
  step?: number
  afterTurn?: number
  do: ConcurrentDo
  node?: 'first' | 'middle' | 'last'
  signal?: 'live' | 'aborted'
  imageTokens?: number
  start?: number
  end?: number
}

/** Every invariant id of §12 (`#/definitions/InvariantId`), in catalog order. */
export const SCENARIO_INVARIANT_IDS = [
  'INV-01', 'INV-02', 'INV-03', 'INV-04', 'INV-05', 'INV-06', 'INV-07', 'INV-08', 'INV-09', 'INV-10',
  'INV-11', 'INV-12', 'INV-13', 'INV-14', 'INV-15', 'INV-16', 'INV-17', 'INV-18', 'INV-19', 'INV-20',
  'INV-21', 'INV-22', 'INV-23', 'INV-24', 'INV-25', 'INV-26', 'INV-27', 'INV-28', 'INV-29', 'INV-30',
  'INV-31', 'INV-32', 'INV-33', 'INV-34', 'INV-35', 'INV-36', 'INV-37', 'INV-38', 'INV-39', 'INV-40',
  'INV-41', 'INV-42', 'INV-43', 'INV-44', 'INV-45', 'INV-46', 'INV-47',
] as const

/** One invariant id of §12 a scenario may select. */
export type ScenarioInvariantId = (typeof SCENARIO_INVARIANT_IDS)[number]

/** `#/definitions/TurnOutcomeKind`: the `kind` of a `turn/end` reason. */
export type TurnOutcomeKind = 'completed' | 'blocked' | 'max-tokens' | 'aborted' | 'error' | 'interrupted'

/** `#/definitions/TurnOutcome`: a kind, or a kind with the failure code of an `error` end. */
export type TurnOutcome = TurnOutcomeKind | { kind: TurnOutcomeKind; code?: ScenarioFailureCode }

/** `#/definitions/CountBound`: exact, or an inclusive range with at least one bound. */
export type CountBound = number | { min?: number; max?: number }

/** The names of `#/definitions/Counts`, in schema order. */
export const COUNT_NAMES = ['brackets', 'failedBrackets', 'prunes', 'offloads', 'retries', 'summaryErrors', 'checkpoints'] as const

/** One countable thing of `expect.counts`. */
export type CountName = (typeof COUNT_NAMES)[number]

/** `#/definitions/Counts`. */
export type CountsExpectation = { [K in CountName]?: CountBound }

/** `#/definitions/FinalPressure`: at least one bound. */
export interface FinalPressureExpectation {
  ratioMin?: number
  ratioMax?: number
  tokensMin?: number
  tokensMax?: number
}

/**
 * `#/definitions/StringMatcher`: a substring (`contains`) or a regular expression written `/source/flags`
 * (`matches`, flags `i`, `m`, `s`, `u`); exactly one of the two.
 */
export type StringMatcher = { contains: string; matches?: never } | { matches: string; contains?: never }

/**
 * `#/definitions/EventPattern`: a type, or a type with a partial `data` match and a test of the event's text;
 * `absent: true` = no event of the log matches.
 */
export type EventPattern = ScenarioEventType | {
  type: ScenarioEventType
  data?: Record<string, unknown>
  text?: StringMatcher
  absent?: true
}

/** The names of `#/definitions/PreStepCounts`, in schema order. */
export const PRE_STEP_COUNT_NAMES = ['brackets', 'failedBrackets', 'prunes', 'summaryCalls', 'summaryErrors'] as const

/** One countable thing of `expect.perPreStep`. */
export type PreStepCountName = (typeof PRE_STEP_COUNT_NAMES)[number]

/** `#/definitions/PreStepCounts`: bounds every pre-step window (§12.0) must meet. */
export type PreStepCountsExpectation = { [K in PreStepCountName]?: CountBound }

/** `#/definitions/NodePattern`: a description of one event (type, text test, partial data). */
export interface NodePattern {
  type?: ScenarioEventType
  text?: StringMatcher
  data?: Record<string, unknown>
}

/** `#/definitions/SummarizedRegion`: the region of one successful bracket (`bracket`: 1-based, or `any`). */
export interface SummarizedRegionExpectation {
  bracket?: number | 'any'
  shadowedSeqs?: number[]
  nodes?: CountBound
  first?: NodePattern
  last?: NodePattern
}

/** `#/definitions/WarningPattern`: a string test of a warning; `absent: true` = no warning matches; `count` = how many match. */
export type WarningPattern = StringMatcher & { absent?: true; count?: CountBound }

/** The kinds of `#/definitions/Rejections`, in schema order (`total` counts every rejection). */
export const REJECTION_COUNT_NAMES = ['window', 'pairing', 'images', 'maxOutput', 'fault', 'unclassified', 'total'] as const

/** One key of `expect.rejections`. */
export type RejectionCountName = (typeof REJECTION_COUNT_NAMES)[number]

/** `#/definitions/Rejections`. */
export type RejectionsExpectation = { [K in RejectionCountName]?: CountBound }

/** `#/definitions/RequestPattern`: a test over the requests of one purpose; some, `every` or (`absent`) none pass. */
export interface RequestPattern {
  purpose?: 'conversation' | 'compaction' | 'session-title'
  every?: true
  absent?: true
  message?: number
  role?: 'system' | 'user' | 'assistant'
  equals?: 'first' | 'previous'
  contains?: string
  matches?: string
}

/** `#/definitions/Expect`. */
export interface ExpectConfig {
  /** `true`: every item but `invariants` is pinned to the scenario's own seed (not evaluated under another). */
  seedSpecific?: boolean
  invariants?: 'all' | ScenarioInvariantId[]
  outcome?: TurnOutcome[]
  counts?: CountsExpectation
  finalPressure?: FinalPressureExpectation
  events?: EventPattern[]
  finalSurfaceNodes?: CountBound
  perPreStep?: PreStepCountsExpectation
  summarized?: SummarizedRegionExpectation[]
  warnings?: WarningPattern[]
  rejections?: RejectionsExpectation
  requests?: RequestPattern[]
}

/** The root of the schema: one scenario document as written. */
export interface Scenario {
  name: string
  description?: string
  /** Labels for `sim run --tag` (any-of selection). */
  tags?: string[]
  seed: number
  subject?: SubjectName
  dialect?: Dialect
  provider: ProviderConfig
  policy?: PolicyConfig
  pruner?: PrunerConfig
  transcript: TranscriptConfig
  faults?: FaultConfig[]
  manual?: ManualAction[]
  concurrent?: ConcurrentAction[]
  /** Several sessions in one run (issue #16); each inherits the keys it omits. Default: one session. */
  sessions?: SessionConfig[]
  /** Clean stop points; the next lifecycle restores the log in the same process (§11.4). Default: none. */
  restart?: RestartPoint[]
  /** Retention probes (issue #20), scored after every committed compaction. */
  probes?: ProbeConfig[]
  expect?: ExpectConfig
}

/** A retention probe as the scenario writes it (`probes:` items, issue #20). */
export interface ProbeConfig {
  /** Default `<kind>-<n>`. */
  id?: string
  kind: 'recall' | 'artifact' | 'continuation' | 'decision'
  /** One string or several that must all match; `/source/flags` is a regular expression. */
  expect: string | string[]
  /** Default `exact`. */
  match?: 'exact' | 'normalized'
}

/** One session of a several-session scenario (`sessions:`); omitted keys come from the scenario. */
export interface SessionConfig {
  /** Unique session name (`^[a-z0-9][a-z0-9-]{0,31}$`); names its artifacts. */
  name: string
  transcript?: TranscriptConfig
  faults?: FaultConfig[]
  manual?: ManualAction[]
  expect?: ExpectConfig
}

/** One clean stop point (`restart:`, exactly one key): after a turn, or right after the n-th `compaction/start` is durable. */
export interface RestartPoint {
  afterTurn?: number
  inBracket?: number
}
