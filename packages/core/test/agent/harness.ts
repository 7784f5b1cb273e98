/**
 * A small world for agent tests: a seed-dialect log, a virtual clock of 5 ms per event, deterministic ids,
 * the scripted adapter behind a real runtime, an optional real compaction engine, request captures and
 * collected warnings. Only the provider wire and the clock are mocked (AGENTS.md "Mock only …").
 */
import { Agent, type AgentOptions, type ConversationCapture } from '../../src/agent/agent.ts'
import type { AgentCompactionEngine } from '../../src/agent/compaction-port.ts'
import type { MessageKind, ToolExecutor, ToolOutcome, UserInput } from '../../src/agent/options.ts'
import { LlmRuntime } from '../../src/adapter/runtime.ts'
import { ScriptedAdapter, type ReplySource, type ScriptedReply, type ScriptedRoute } from '../../src/adapter/scripted.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { LogEvent, SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock, LlmFailure, TokenUsage, ToolCallBlock, ToolSchema } from '../../src/log/llm.ts'
import { resolveCompactionConfig, type BasicCompactionConfig, type CompactionPolicySpec } from '../../src/policy/config.ts'

/** Time of seq 0. */
export const T0 = 1_700_000_000_005

/** The test route. */
export const ROUTE: ScriptedRoute = { provider: 'mock', model: 'mock-4k', contextWindow: 4000, imageTokens: 85 }

/** The one tool of the tests. */
export const READ_TOOL: ToolSchema = {
  name: 'read',
  description: 'Read a UTF-8 text file from the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}

/** What a test session is built from. */
export interface WorldOptions {
  conversation: ReplySource
  compaction?: ReplySource
  routes?: ScriptedRoute[]
  config?: BasicCompactionConfig
  /** Build an engine over the same log (`makeEngine` supplies it; absent = no engine). */
  makeEngine?: (world: EngineInputs) => AgentCompactionEngine
  systemPrompt?: () => string
  tools?: ToolSchema[]
  executeTool?: ToolExecutor
  agent?: Partial<AgentOptions>
  /** Start from these events instead of an empty log (they are validated as appends). */
  events?: readonly LogEvent[]
  log?: EventLog
}

/** What an engine factory receives. */
export interface EngineInputs {
  log: EventLog
  runtime: LlmRuntime
  policy: CompactionPolicySpec
  clock: () => number
  warn: (message: string) => void
  newCompactionId: () => string
  newMessageId: () => string
}

/** A built world. */
export interface World {
  log: EventLog
  agent: Agent
  adapter: ScriptedAdapter
  runtime: LlmRuntime
  engine: AgentCompactionEngine | undefined
  policy: CompactionPolicySpec
  captures: ConversationCapture[]
  warnings: string[]
  clock: () => number
  /** Types of the events from `from` on. */
  types(from?: number): string[]
  /** Events of one type. */
  ofType<T extends SessionEvent['type']>(type: T): Array<SessionEvent<T>>
}

/** Deterministic per-kind message ids: m-sys, m-u1, m-a1, m-t1, … */
export function messageIds(): (kind: MessageKind) => string {
  const counters: Record<MessageKind, number> = { system: 0, user: 0, assistant: 0, tool: 0 }
  const prefix: Record<MessageKind, string> = { system: 'm-sys', user: 'm-u', assistant: 'm-a', tool: 'm-t' }
  return (kind) => {
    counters[kind]++
    return kind === 'system' && counters[kind] === 1 ? 'm-sys' : `${prefix[kind]}${counters[kind]}`
  }
}

/** A counter-based id generator with a prefix. */
export function ids(prefix: string): () => string {
  let n = 0
  return () => `${prefix}${++n}`
}

/** Builds a world. */
export function world(options: WorldOptions): World {
  const log = options.log ?? (options.events !== undefined ? EventLog.fromEvents(options.events, { dialect: 'seed' }) : new EventLog({ dialect: 'seed' }))
  // 5 ms per event: the k-th reading at one log length is the time of the k-th event still to come.
  let length = -1
  let readings = 0
  const clock = (): number => {
    if (log.length !== length) {
      length = log.length
      readings = 0
    }
    return T0 + 5 * (length + readings++)
  }
  const adapter = new ScriptedAdapter({
    routes: options.routes ?? [ROUTE],
    conversation: options.conversation,
    ...(options.compaction !== undefined ? { compaction: options.compaction } : {}),
  })
  const runtime = new LlmRuntime()
  runtime.registerAdapter('mock', adapter)
  const policy = resolveCompactionConfig(options.config)
  const warnings: string[] = []
  const warn = (message: string): void => { warnings.push(message) }
  const engine = options.makeEngine?.({ log, runtime, policy, clock, warn, newCompactionId: ids('cmp-'), newMessageId: ids('m-ck') })
  const captures: ConversationCapture[] = []
  const agent = new Agent({
    log, runtime, policy, route: { provider: ROUTE.provider, model: ROUTE.model },
    systemPrompt: options.systemPrompt ?? (() => 'You are a careful coding agent.'),
    tools: options.tools ?? [READ_TOOL],
    executeTool: options.executeTool ?? (async () => ({ content: [{ type: 'text', text: 'ok' }] })),
    clock, newMessageId: messageIds(), newRetryId: ids('r-'), sleep: async () => {},
    sessionId: 'session-1',
    onRequest: (r) => { captures.push(r) },
    warn,
    ...(engine !== undefined ? { engine } : {}),
    ...options.agent,
  })
  return {
    log, agent, adapter, runtime, engine, policy, captures, warnings, clock,
    types: (from = 0) => log.events.slice(from).map((e) => e.type),
    ofType: <T extends SessionEvent['type']>(type: T) => log.events.filter((e): e is SessionEvent<T> => e.type === type),
  }
}

/** A text reply. */
export function say(textValue: string, usage?: TokenUsage): ScriptedReply {
  return usage !== undefined ? { kind: 'reply', blocks: [{ type: 'text', text: textValue }], usage } : { kind: 'reply', blocks: [{ type: 'text', text: textValue }] }
}

/** A reply calling `read` once per path (parallel calls when several). */
export function callRead(callIds: string[], usage?: TokenUsage): ScriptedReply {
  const blocks: ContentBlock[] = callIds.map((id): ToolCallBlock => ({ type: 'tool-call', id: id as never, name: 'read', arguments: JSON.stringify({ path: `${id}.ts` }) }))
  return usage !== undefined ? { kind: 'reply', blocks, usage } : { kind: 'reply', blocks }
}

/** A failed attempt. */
export function fail(failure: LlmFailure, delivery: 'thrown' | 'in-band' = 'thrown'): ScriptedReply {
  return { kind: 'fail', failure, delivery }
}

/** A user input of one text block. */
export function prompt(textValue: string, extra: ContentBlock[] = []): UserInput {
  return { content: [{ type: 'text', text: textValue }, ...extra] }
}

/** An image block with a harness attachment id. */
export function image(digit: string, name: string): ContentBlock {
  return { type: 'image', attachment: { attachmentId: `sha256:${digit.repeat(64)}`, mediaType: 'image/png', bytes: 100, width: 10, height: 10, name } }
}

/** A tool executor answering every call with `text` (or a function of the call). */
export function answer(fn: (callId: string) => string | ToolOutcome): ToolExecutor {
  return async (call) => {
    const r = fn(call.callId)
    return typeof r === 'string' ? { content: [{ type: 'text', text: r }] } : r
  }
}
