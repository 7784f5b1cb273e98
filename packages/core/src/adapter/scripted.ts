/**
 * A scripted in-process adapter for tests and the reference subject: replies come from per-purpose
 * queues (or functions of the request), in the chunk shape of Appendix B's "Scripted inputs"; failures
 * are thrown as `LlmError` or delivered in-band as an error finish. Every request is recorded.
 */
import type { ContentBlock, FinishReason, LlmFailure, LlmModelInfo, StreamChunk, TokenUsage } from '../log/llm.ts'
import { FailureCode, LlmError, type GenerateOptions, type LlmAdapter } from './contract.ts'

/** One scripted outcome of a call. `before` runs first (e.g. to wait for a test's gate). */
export type ScriptedReply = (
  | { kind: 'reply'; blocks: ContentBlock[]; usage?: TokenUsage; finish?: FinishReason }
  | { kind: 'chunks'; chunks: StreamChunk[] }
  | { kind: 'fail'; failure: LlmFailure; delivery?: 'thrown' | 'in-band' }
  | { kind: 'wait-for-abort' }
) & { before?: (options: GenerateOptions) => Promise<void> | void }

/** A source of replies: a queue consumed in order, or a function of the request and its per-purpose index. */
export type ReplySource = ScriptedReply[] | ((options: GenerateOptions, index: number) => ScriptedReply)

/** A route the adapter owns and the metadata it reports (§2.7, §2.3). */
export interface ScriptedRoute {
  provider: string
  model: string
  contextWindow?: number
  imageTokens?: number
  /** Reported as `LlmModelInfo.maxOutputTokens` (hardened HARD-2). */
  maxOutputTokens?: number
}

/** Options of a `ScriptedAdapter`. */
export interface ScriptedAdapterOptions {
  routes: ScriptedRoute[]
  conversation?: ReplySource
  compaction?: ReplySource
}

/** The chunks of a successful attempt as Appendix B scripts them: start, one text delta, end per block; usage; finish. */
export function replyChunks(blocks: readonly ContentBlock[], usage?: TokenUsage, finish?: FinishReason): StreamChunk[] {
  const out: StreamChunk[] = []
  blocks.forEach((block, index) => {
    out.push({ type: 'block-start', index, blockType: block.type })
    if (block.type === 'text') out.push({ type: 'text-delta', index, text: String(block['text']) })
    out.push({ type: 'block-end', index, block })
  })
  if (usage !== undefined) out.push({ type: 'usage', usage })
  out.push({ type: 'finish', reason: finish ?? (blocks.some((b) => b.type === 'tool-call') ? { kind: 'tool-calls' } : { kind: 'stop' }) })
  return out
}

/** Thrown when a script runs out of replies: a test bug, not a provider failure. */
export class ScriptExhaustedError extends Error {
  override readonly name = 'ScriptExhaustedError'
}

/** The scripted adapter. `requests` lists every call in dispatch order. */
export class ScriptedAdapter implements LlmAdapter {
  readonly requests: GenerateOptions[] = []
  private readonly routes: ScriptedRoute[]
  private readonly sources: { conversation: ReplySource; compaction: ReplySource }
  private readonly counts = { conversation: 0, compaction: 0 }

  constructor(options: ScriptedAdapterOptions) {
    this.routes = options.routes
    this.sources = { conversation: options.conversation ?? [], compaction: options.compaction ?? [] }
  }

  /** Replies still queued for a purpose (0 for function sources). */
  remaining(purpose: 'conversation' | 'compaction'): number {
    const s = this.sources[purpose]
    return Array.isArray(s) ? s.length - this.counts[purpose] : 0
  }

  async resolveModel(provider: string, model: string): Promise<LlmModelInfo> {
    const route = this.routes.find((r) => r.provider === provider && r.model === model)
    const info: LlmModelInfo = { provider, id: model, name: model }
    if (route?.contextWindow !== undefined) info.context = { contextWindow: route.contextWindow }
    if (route?.imageTokens !== undefined) info.imageTokens = route.imageTokens
    if (route?.maxOutputTokens !== undefined) info.maxOutputTokens = route.maxOutputTokens
    return info
  }

  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    this.requests.push(options)
    const purpose = options.purpose === 'compaction' ? 'compaction' : 'conversation'
    const index = this.counts[purpose]++
    const source = this.sources[purpose]
    const reply = Array.isArray(source) ? source[index] : source(options, index)
    if (reply === undefined) throw new ScriptExhaustedError(`no scripted ${purpose} reply #${index}`)
    await reply.before?.(options)
    switch (reply.kind) {
      case 'reply':
        yield* replyChunks(reply.blocks, reply.usage, reply.finish)
        return
      case 'chunks':
        yield* reply.chunks
        return
      case 'fail':
        if (reply.delivery === 'in-band') {
          yield { type: 'finish', reason: { kind: 'error', failure: reply.failure } }
          return
        }
        throw new LlmError(reply.failure)
      case 'wait-for-abort':
        await new Promise<void>((resolve) => {
          if (options.signal?.aborted === true) resolve()
          options.signal?.addEventListener('abort', () => resolve(), { once: true })
        })
        throw new LlmError({ message: 'request aborted', code: FailureCode.ABORTED })
    }
  }
}
