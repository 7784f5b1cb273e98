/**
 * The LLM runtime (§0.2, §1.2.1): a route registry over adapters, live capacity resolution (§2.7), stream
 * middleware that may reroute a call (FAULT-32), and failure normalisation — every adapter failure,
 * thrown or in-band, reaches consumers as a terminal `finish` chunk of kind `error` or `aborted`.
 */
import { errorChain } from '../errors.ts'
import type { FinishReason, LlmFailure, LlmModelInfo, StreamChunk } from '../log/llm.ts'
import { FailureCode, LlmError, type GenerateOptions, type LlmAdapter } from './contract.ts'

/** Rewrites a call before dispatch (e.g. reroutes a summary call); must return complete options. */
export type StreamMiddleware = (options: GenerateOptions) => GenerateOptions

/** One dispatched call: the route actually used (after middleware) and its normalised chunks. */
export interface RuntimeCall {
  provider: string
  model: string
  /** The options as finally dispatched. */
  options: GenerateOptions
  chunks: AsyncIterable<StreamChunk>
}

/** Observers of dispatches (the harness writes its request capture from these). */
export interface LlmRuntimeHooks {
  /** Called synchronously right before the adapter is asked to stream. */
  onDispatch?: (options: GenerateOptions) => void
  /** Called once per call with its terminal finish reason (or `{kind:'stop'}` when the stream had none). */
  onFinish?: (options: GenerateOptions, reason: FinishReason) => void
}

/** The structured failure of any thrown value (§7.4 `structured(err)`). */
export function failureOf(err: unknown, signal?: AbortSignal): LlmFailure {
  if (err instanceof LlmError) return err.failure
  if (signal?.aborted === true) return { message: errorChain(signal.reason ?? err), code: FailureCode.ABORTED }
  const code = typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : FailureCode.UNKNOWN
  return { message: errorChain(err), code: code in FailureCode ? code : FailureCode.UNKNOWN }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

/** A registry of adapters keyed by provider name, with normalised streaming. */
export class LlmRuntime {
  private readonly adapters = new Map<string, LlmAdapter>()
  private readonly middleware: StreamMiddleware[] = []
  private readonly hooks: LlmRuntimeHooks

  constructor(hooks: LlmRuntimeHooks = {}) {
    this.hooks = hooks
  }

  /** Makes `adapter` own every route of `provider`. */
  registerAdapter(provider: string, adapter: LlmAdapter): void {
    this.adapters.set(provider, adapter)
  }

  /** Adds a stream middleware; middleware runs in registration order. */
  use(middleware: StreamMiddleware): void {
    this.middleware.push(middleware)
  }

  /**
   * Resolves route metadata live from the owning adapter (§2.7). Throws `LlmError` with `NO_ADAPTER`,
   * or `INVALID_MODEL_CONTEXT` when a reported context window is not a positive integer.
   */
  async resolveModelInfo(provider: string, model: string, signal?: AbortSignal): Promise<LlmModelInfo> {
    const adapter = this.adapters.get(provider)
    if (adapter === undefined) throw new LlmError({ message: `no adapter owns ${provider}/${model}`, code: FailureCode.NO_ADAPTER })
    const info = await adapter.resolveModel(provider, model, signal)
    const window = info.context?.contextWindow
    if (info.context !== undefined && (typeof window !== 'number' || !Number.isSafeInteger(window) || window <= 0)) {
      throw new LlmError({ message: `${provider}/${model} reported an invalid context window: ${String(window)}`, code: FailureCode.INVALID_MODEL_CONTEXT })
    }
    return info
  }

  /** Dispatches a call. Never throws for adapter failures: they become a terminal finish chunk (§1.2.1). */
  stream(request: GenerateOptions): RuntimeCall {
    let options = request
    for (const m of this.middleware) options = m(options)
    const adapter = this.adapters.get(options.provider)
    return { provider: options.provider, model: options.model, options, chunks: this.normalised(adapter, options) }
  }

  private async *normalised(adapter: LlmAdapter | undefined, options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const signal = options.signal
    let reason: FinishReason = { kind: 'stop' }
    try {
      if (adapter === undefined) throw new LlmError({ message: `no adapter owns ${options.provider}/${options.model}`, code: FailureCode.NO_ADAPTER })
      if (isAborted(signal)) throw signal?.reason ?? new Error('aborted')
      this.hooks.onDispatch?.(options)
      for await (const chunk of adapter.stream(options)) {
        if (isAborted(signal)) throw signal?.reason ?? new Error('aborted')
        // The reason is taken before the finish is handed out: a consumer that stops reading at the finish
        // closes this generator at the yield, and `onFinish` must still see an in-band error as an error.
        if (chunk.type === 'finish') reason = chunk.reason
        yield chunk
        if (chunk.type === 'finish') return
      }
    } catch (err) {
      const failure = failureOf(err, signal)
      reason = isAborted(signal) || failure.code === FailureCode.ABORTED ? { kind: 'aborted', failure: { ...failure, code: FailureCode.ABORTED } } : { kind: 'error', failure }
      yield { type: 'finish', reason }
    } finally {
      this.hooks.onFinish?.(options, reason)
    }
  }
}
