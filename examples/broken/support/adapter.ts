/**
 * Helpers the broken subjects of `examples/broken/` share to wrap the example's HTTP adapter (its `adapter`
 * seam): one bug each is planted in how failures or chunks come out of the adapter. Not a subject itself.
 */
import { LlmError, type GenerateOptions, type LlmAdapter, type LlmFailure, type StreamChunk } from '@compaction-sim/core'

/** What a chunk rewrite sees of the call besides the chunk. */
export interface ChunkContext {
  readonly options: GenerateOptions
}

/**
 * `inner` with every streamed chunk passed through `rewrite` (which may return several chunks, or none).
 * A failure the adapter throws is first turned into its terminal `finish` chunk of kind `error`, so a rewrite
 * sees thrown and in-band failures alike; the runtime treats both the same (§1.2.1).
 */
export function rewriteChunks(inner: LlmAdapter, rewrite: (chunk: StreamChunk, ctx: ChunkContext) => StreamChunk[]): LlmAdapter {
  return {
    resolveModel: (provider, model, signal) => inner.resolveModel(provider, model, signal),
    stream: async function* (options) {
      const ctx: ChunkContext = { options }
      try {
        for await (const chunk of inner.stream(options)) {
          for (const out of rewrite(chunk, ctx)) yield out
          if (chunk.type === 'finish') return
        }
      } catch (err) {
        if (!(err instanceof LlmError) || options.signal?.aborted === true) throw err
        for (const out of rewrite({ type: 'finish', reason: { kind: 'error', failure: err.failure } }, ctx)) yield out
      }
    },
  }
}

/** `inner` with every `error` failure passed through `relabel` (thrown or in-band). */
export function relabelFailures(inner: LlmAdapter, relabel: (failure: LlmFailure, ctx: ChunkContext) => LlmFailure): LlmAdapter {
  return rewriteChunks(inner, (chunk, ctx) =>
    chunk.type === 'finish' && chunk.reason.kind === 'error' ? [{ ...chunk, reason: { kind: 'error', failure: relabel(chunk.reason.failure, ctx) } }] : [chunk])
}
