/**
 * Summarizers of a summary route (issue #15): what the mock answers to a `purpose: compaction` request.
 *
 * - `builtin` — the deterministic §8.3 summarizer (`deterministic-summary.ts`), unchanged; with `forgetPaths`
 *   (the `forgets-paths` preset, issue #20) the same checkpoint without any file path: a deliberately forgetful
 *   summarizer, so a retention curve shows artifact probes falling while the other kinds hold.
 * - `fixed` — a summary of exactly `chars` UTF-16 units: the builtin checkpoint followed by the region's own
 *   text (whitespace collapsed, one line per piece), repeated as often as needed and cut at `chars`
 *   (`summaryFiller`). Derived from the region, so two regions get different summaries; never blank.
 * - `ratio` — a summary whose `P_fixed`, framed as §8.5 frames the checkpoint, is `floor(ratio × S)` where S is
 *   the region's `P_fixed` (§7.5): the same filler cut to `4 × (target − frame)` units. `ratio ≥ 1` gives a
 *   framed price ≥ S, which the engine's shrink rule rejects (INV-17, the FAULT-27 outcome) with no fault
 *   declared. A target below the frame's own price yields the one-unit summary (the smallest non-blank one).
 * - `script` — per attempt (1-based, counted per summary route over the whole scenario by the caller), exactly
 *   what the attempt says: blocks in emission order reasoning, text, images, tool calls; its finish (default
 *   `tool-calls` with a call, else `stop`); `chunks` cuts the reply's content into pieces of
 *   `ceil(chars / chunks)` units (so a one-block reply streams in at most `chunks` content events);
 *   `latencyMs` is virtual time before the first byte (`PlannedReply.latencyMs`, realised by the world).
 *   Past the last attempt the last one repeats.
 * - `upstream` — a real OpenAI-compatible summarizer behind a URL, answered from the scenario's cassette
 *   (`upstream.ts`; recorded once with `sim run --record`). Only `run/summaries.ts` can answer it (it holds the
 *   cassette): `summaryReply` throws for it. Not capped here: the upstream was sent the request's `max_tokens`.
 *
 * Output cap (every kind): the request's `max_tokens`, counted by the route's tokenizer (`textTokens`), caps
 * the reply as a real provider does: blocks are kept in emission order while they fit; the block that does
 * not fit is cut at the longest prefix that does (a tool call is dropped whole: a provider's cut call is
 * unparseable JSON) and everything after it is dropped; the finish becomes `max-tokens`. Reasoning counts
 * against the cap, so a reasoning-heavy attempt that spends it yields `max-tokens` with no text. Images
 * cost nothing against the cap. Without `max_tokens` nothing is capped.
 *
 * CONTRACT (issue #15 wave 1): `SummarizerSpec` and `summaryOutcome` are shared by the routes and
 * summarizer work.
 */
import { assertNever, CallId, type ContentBlock } from '@compaction-sim/core'
import { deterministicSummary, framedPrice, regionOf, regionPrice } from './deterministic-summary.ts'
import type { ProviderTokenizer } from './tokenizers.ts'
import type { UpstreamSpec } from './upstream.ts'
import type { DecodedMessage, ParsedRequest, PlannedFinish, PlannedOutcome, PlannedReply } from './types.ts'

/** One scripted attempt of a `script` summarizer (every key optional; absent = nothing of that kind). */
export interface SummaryAttemptSpec {
  readonly text?: string
  readonly reasoning?: string
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string }[]
  readonly images?: number
  readonly finish?: PlannedFinish
  /** SSE data events to cut the reply into (default: the mock's `deltaChars` pieces). */
  readonly chunks?: number
  /** Virtual milliseconds before the first byte. */
  readonly latencyMs?: number
}

/** A summary route's summarizer, resolved. */
export type SummarizerSpec =
  | { readonly kind: 'builtin'; readonly forgetPaths?: true }
  | { readonly kind: 'fixed'; readonly chars: number }
  | { readonly kind: 'ratio'; readonly ratio: number }
  | { readonly kind: 'script'; readonly attempts: readonly SummaryAttemptSpec[] }
  | { readonly kind: 'upstream'; readonly upstream: UpstreamSpec }

/** The default summarizer. */
export const BUILTIN_SUMMARIZER: SummarizerSpec = Object.freeze({ kind: 'builtin' })

/** Every one-word summarizer preset, in documentation order. */
export const SUMMARIZER_PRESETS = ['builtin', 'reasoning-only', 'tool-call', 'forgets-paths'] as const

/** A one-word summarizer (`summarizer: reasoning-only`). */
export type SummarizerPreset = (typeof SUMMARIZER_PRESETS)[number]

/** The reasoning of the `reasoning-only` preset: a model that thinks the checkpoint through and never writes it. */
export const REASONING_ONLY_TEXT = 'The conversation above has to become a checkpoint with eight sections. '
  + 'I should keep the exact paths, commands and error strings, merge any earlier checkpoint, and drop what is stale. '
  + 'Let me go through the messages one by one before I write anything.'

/** The call of the `tool-call` preset: a model that answers the compaction instruction with an action. */
export const TOOL_CALL_PRESET = Object.freeze({ name: 'write_checkpoint', arguments: '{"sections":8}' })

/** The spec of each preset (frozen). */
export const PRESET_SPECS: Readonly<Record<SummarizerPreset, SummarizerSpec>> = Object.freeze({
  'builtin': BUILTIN_SUMMARIZER,
  'reasoning-only': Object.freeze({ kind: 'script', attempts: Object.freeze([Object.freeze({ reasoning: REASONING_ONLY_TEXT })]) }),
  'tool-call': Object.freeze({ kind: 'script', attempts: Object.freeze([Object.freeze({ toolCalls: Object.freeze([TOOL_CALL_PRESET]) })]) }),
  'forgets-paths': Object.freeze({ kind: 'builtin', forgetPaths: true }),
})

/** Longest summary a `fixed`/`ratio` summarizer writes, in UTF-16 units (a bound on the filler loop). */
export const SUMMARY_CHARS_MAX = 4_000_000

/**
 * The outcome of the `attempt`-th (1-based, counted per summary route over the whole scenario) compaction
 * request `request`, with the route's tokenizer for the output cap (module doc). Always a reply.
 */
export function summaryOutcome(
  spec: SummarizerSpec, request: ParsedRequest, attempt: number, tokenizer: ProviderTokenizer,
): PlannedOutcome {
  return { kind: 'reply', reply: summaryReply(spec, request, attempt, tokenizer) }
}

/** The reply `summaryOutcome` serves (module doc), capped at the request's `max_tokens`. Pure. */
export function summaryReply(
  spec: SummarizerSpec, request: Pick<ParsedRequest, 'messages' | 'maxTokens'>, attempt: number, tokenizer: ProviderTokenizer,
): PlannedReply {
  return capReply(uncappedReply(spec, request, attempt), request.maxTokens, tokenizer)
}

function uncappedReply(spec: SummarizerSpec, request: Pick<ParsedRequest, 'messages'>, attempt: number): PlannedReply {
  switch (spec.kind) {
    case 'builtin':
      return { blocks: [{ type: 'text', text: deterministicSummary(request, spec.forgetPaths === true ? { forgetPaths: true } : {}) }] }
    case 'fixed':
      return { blocks: [{ type: 'text', text: summaryFiller(request.messages, spec.chars) }] }
    case 'ratio':
      return { blocks: [{ type: 'text', text: summaryFiller(request.messages, ratioChars(request.messages, spec.ratio)) }] }
    case 'script': {
      const last = spec.attempts.length
      const chosen = spec.attempts[Math.min(Math.max(1, attempt), last) - 1]
      if (chosen === undefined) throw new RangeError('a script summarizer needs at least one attempt')
      return scriptedReply(chosen, attempt)
    }
    case 'upstream':
      throw new RangeError('an upstream summarizer answers from its cassette (run/summaries.ts), not from summaryReply')
    default:
      return assertNever(spec, 'summarizer')
  }
}

/** Length in UTF-16 units of the `ratio` summary of `messages` (module doc): framed price = floor(ratio × S). */
export function ratioChars(messages: readonly DecodedMessage[], ratio: number): number {
  const target = Math.floor(ratio * regionPrice(regionOf(messages)))
  const frame = framedPrice('')
  return Math.min(SUMMARY_CHARS_MAX, Math.max(1, 4 * (target - frame)))
}

function pieces(blocks: readonly ContentBlock[]): string[] {
  const out: string[] = []
  for (const b of blocks) {
    if (b.type === 'text' || b.type === 'reasoning') out.push(String(b['text']))
    else if (b.type === 'tool-call') out.push(String(b['arguments']))
    else if (b.type === 'tool-result') out.push(...pieces(b['content'] as ContentBlock[]))
  }
  return out
}

/**
 * Exactly `chars` UTF-16 units (1 ≤ chars ≤ `SUMMARY_CHARS_MAX`) derived from the region of `messages`: the
 * builtin checkpoint, then every text piece of the region on its own line, repeated and cut (a cut that would
 * split a surrogate pair ends in `.` instead). Starts with a section heading, so it is never blank.
 */
export function summaryFiller(messages: readonly DecodedMessage[], chars: number): string {
  const n = Math.min(SUMMARY_CHARS_MAX, Math.max(1, Math.floor(chars)))
  const lines = regionOf(messages).flatMap((m) => pieces(m.content)).map((p) => p.replace(/\s+/g, ' ').trim()).filter((p) => p !== '')
  const source = [deterministicSummary({ messages }), ...lines].join('\n')
  const unit = `${source}\n\n`
  let text = unit.repeat(Math.ceil(n / unit.length)).slice(0, n)
  const lastCode = text.charCodeAt(n - 1)
  if (lastCode >= 0xd800 && lastCode <= 0xdbff) text = `${text.slice(0, n - 1)}.`
  return text
}

/** The reply of one scripted attempt (module doc); `attempt` numbers its tool-call ids. */
function scriptedReply(spec: SummaryAttemptSpec, attempt: number): PlannedReply {
  const blocks: ContentBlock[] = []
  if (spec.reasoning !== undefined) blocks.push({ type: 'reasoning', text: spec.reasoning })
  if (spec.text !== undefined) blocks.push({ type: 'text', text: spec.text })
  for (let k = 1; k <= (spec.images ?? 0); k++) {
    blocks.push({
      type: 'image',
      attachment: { attachmentId: `sha256:mock-summary-image-${k}`, mediaType: 'image/png', bytes: 68, width: 1, height: 1 },
    })
  }
  ;(spec.toolCalls ?? []).forEach((call, k) => {
    blocks.push({ type: 'tool-call', id: CallId(`call_summary_${attempt}_${k + 1}`), name: call.name, arguments: call.arguments })
  })
  const reply: PlannedReply = { blocks }
  if (spec.finish !== undefined) reply.finish = spec.finish
  if (spec.chunks !== undefined) {
    const chars = pieces(blocks).reduce((sum, p) => sum + p.length, 0)
    reply.deltaChars = Math.max(2, Math.ceil(chars / spec.chunks))
  }
  if (spec.latencyMs !== undefined && spec.latencyMs > 0) reply.latencyMs = spec.latencyMs
  return reply
}

/** The longest prefix of `text` whose `textTokens` is ≤ `budget` (never splitting a surrogate pair). */
function prefixWithin(text: string, budget: number, tokenizer: ProviderTokenizer): string {
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (tokenizer.textTokens(text.slice(0, mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  const code = text.charCodeAt(lo - 1)
  return text.slice(0, lo > 0 && code >= 0xd800 && code <= 0xdbff ? lo - 1 : lo)
}

/**
 * `reply` capped at `maxTokens` output tokens counted by `tokenizer` (module doc "Output cap"); `reply`
 * itself when it fits or `maxTokens` is undefined.
 */
export function capReply(reply: PlannedReply, maxTokens: number | undefined, tokenizer: ProviderTokenizer): PlannedReply {
  if (maxTokens === undefined) return reply
  let left = maxTokens
  const kept: ContentBlock[] = []
  for (const block of reply.blocks) {
    let cost = 0
    if (block.type === 'text' || block.type === 'reasoning') cost = tokenizer.textTokens(String(block['text']))
    else if (block.type === 'tool-call') cost = tokenizer.textTokens(String(block['name'])) + tokenizer.textTokens(String(block['arguments']))
    if (cost <= left) {
      kept.push(block)
      left -= cost
      continue
    }
    if (block.type === 'text' || block.type === 'reasoning') {
      const prefix = prefixWithin(String(block['text']), left, tokenizer)
      if (prefix !== '') kept.push({ ...block, text: prefix })
    }
    return { ...reply, blocks: kept, finish: 'max-tokens' }
  }
  return reply
}
