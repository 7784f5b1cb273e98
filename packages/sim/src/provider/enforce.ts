/**
 * Provider-side enforcement of one route (issue #15): what a real provider refuses before it answers.
 * Each rule answers with the real status and body of its wire (not a protocol code); the subject's adapter
 * has to classify it.
 * - window: the prompt, counted by the route's tokenizer, exceeds the window (`prompt`), or prompt +
 *   `max_tokens` does (`prompt-plus-max-tokens`);
 * - pairing: strict wire validation (`wire-validation.ts`: a tool call without its result, a result without
 *   its call, Anthropic role alternation and result placement, orphan reasoning items; no wire the mock
 *   speaks forbids results out of order);
 * - images: images per request, bytes per image, image bytes per request → `IMAGE_OFFLOAD_REQUIRED` with
 *   the `offloadImages` count computed from the request (`imageOffloadVerdict`);
 * - maxOutput: `max_tokens` above the route's `maxOutputTokens`.
 * Rules are checked in `ENFORCED_RULES` order and the first broken one answers. Usage reporting
 * (`reported`, `omitted`, `late`) is a route property the response writers honour (`wire-response.ts`,
 * `anthropic-response.ts`).
 *
 * CONTRACT (issue #15 wave 1): the specs and `enforcedOutcome` are shared by the routes and enforcement work.
 */
import { assertNever, type ContentBlock, type ImageAttachmentRef } from '@compaction-sim/core'
import type { MockRoute } from './route.ts'
import type { DecodedMessage, ParsedRequest, PlannedOutcome, RejectionKind, WireRejectionPlan } from './types.ts'
import { imageOffloadRejection, maxOutputRejection, overflowRejection } from './wire-response.ts'
import { strictValidationRejection } from './wire-validation.ts'

/** How the window rule counts. */
export type WindowRule = 'prompt' | 'prompt-plus-max-tokens'

/** Which rules a route enforces; `window` null = the window is not enforced. */
export interface EnforceSpec {
  readonly window: WindowRule | null
  readonly pairing: boolean
  readonly images: boolean
  readonly maxOutput: boolean
}

/** Every rule on (the default of a new scenario). */
export const ENFORCE_ALL: EnforceSpec = Object.freeze({ window: 'prompt', pairing: true, images: true, maxOutput: true })

/** Every rule off (`enforce: off`). */
export const ENFORCE_OFF: EnforceSpec = Object.freeze({ window: null, pairing: false, images: false, maxOutput: false })

/** A route's image limits; null = no limit. */
export interface ImageLimitsSpec {
  readonly imagesPerRequestMax: number | null
  readonly imageBytesMax: number | null
  readonly requestImageBytesMax: number | null
}

/** No image limits. */
export const NO_IMAGE_LIMITS: ImageLimitsSpec = Object.freeze({ imagesPerRequestMax: null, imageBytesMax: null, requestImageBytesMax: null })

/** How a route reports usage: in the stream as today, never, or only in the final chunk. */
export type UsageMode = 'reported' | 'omitted' | 'late'

/** The rules, in the order a request is checked (parameter and structure validation before any counting). */
export const ENFORCED_RULES = ['maxOutput', 'pairing', 'images', 'window'] as const

/** One enforcement rule (a closed union). */
export type EnforcedRule = (typeof ENFORCED_RULES)[number]

/** A rejection with the rule that produced it. */
export interface Enforcement {
  readonly rule: EnforcedRule
  readonly outcome: PlannedOutcome & { kind: 'reject' }
}

/** One image occurrence of a request, in request order (the depth-first walk of §6.2, message by message). */
export interface ImageOccurrence {
  /** Index of the decoded message holding it. */
  readonly messageIndex: number
  /** `ImageAttachmentRef.bytes` (0 when the wire did not carry the size, e.g. a remote URL). */
  readonly bytes: number
  /** True when §6.3 lets the subject offload it: an image of a user message or a tool result (role `user`). */
  readonly offloadable: boolean
}

/** The image occurrences of `messages` in request order (§6.2's walk: tool results' content included). */
export function imageOccurrences(messages: readonly DecodedMessage[]): ImageOccurrence[] {
  const out: ImageOccurrence[] = []
  const walk = (blocks: readonly ContentBlock[], messageIndex: number, offloadable: boolean): void => {
    for (const b of blocks) {
      if (b.type === 'image') out.push({ messageIndex, bytes: (b['attachment'] as ImageAttachmentRef).bytes, offloadable })
      else if (b.type === 'tool-result' && Array.isArray(b['content'])) walk(b['content'] as ContentBlock[], messageIndex, offloadable)
    }
  }
  messages.forEach((m, i) => walk(m.content, i, m.role === 'user'))
  return out
}

/** Why a request breaks its route's image limits, and the `offloadImages` count the provider answers. */
export interface ImageVerdict {
  /** The least k (≥ 1) whose removal brings the request within every limit (see `imageOffloadVerdict`). */
  readonly offloadImages: number
  /** Every limit the request breaks, as one sentence. */
  readonly reason: string
}

/**
 * The provider's image verdict for `images` under `limits`, or null when the request is within every limit.
 * `offloadImages` is the least k such that removing the first k images of the removal order brings the
 * count, every image's bytes and the request's image bytes within their limits. The removal order is the
 * subject's own (§6.3): offloadable images (user messages and tool results) oldest first, then — only when
 * those do not suffice — the rest in request order, so the count is never below what must go and the
 * subject's selection of the first k eligible occurrences is exactly what the provider asked for. Because
 * the count is a prefix length, an image above the per-image byte limit is relieved only by a count that
 * reaches it: the count covers it and every offloadable image before it. A count above the offloadable
 * images makes §6.3 select them all (partial relief); the retry is rejected again with the rest, and once
 * nothing offloadable is left the subject's offload path delegates.
 */
export function imageOffloadVerdict(images: readonly ImageOccurrence[], limits: ImageLimitsSpec): ImageVerdict | null {
  const broken: string[] = []
  const total = images.reduce((sum, im) => sum + im.bytes, 0)
  const largest = images.reduce((max, im) => Math.max(max, im.bytes), 0)
  const { imagesPerRequestMax: countMax, imageBytesMax: bytesMax, requestImageBytesMax: totalMax } = limits
  if (countMax !== null && images.length > countMax) {
    broken.push(`the request carries ${images.length} images (limit ${countMax} per request)`)
  }
  if (bytesMax !== null && largest > bytesMax) broken.push(`an image has ${largest} bytes (limit ${bytesMax} per image)`)
  if (totalMax !== null && total > totalMax) broken.push(`the request carries ${total} image bytes (limit ${totalMax} per request)`)
  if (broken.length === 0) return null
  const order = [...images.filter((im) => im.offloadable), ...images.filter((im) => !im.offloadable)]
  // Suffix figures of the removal order: what remains after removing its first k images.
  const suffixBytes: number[] = Array.from({ length: order.length + 1 }, () => 0)
  const suffixLargest: number[] = Array.from({ length: order.length + 1 }, () => 0)
  for (let k = order.length - 1; k >= 0; k--) {
    const bytes = order[k]?.bytes ?? 0
    suffixBytes[k] = (suffixBytes[k + 1] ?? 0) + bytes
    suffixLargest[k] = Math.max(suffixLargest[k + 1] ?? 0, bytes)
  }
  let offloadImages = order.length // removing every image always complies
  for (let k = 1; k < order.length; k++) {
    const within = (countMax === null || order.length - k <= countMax) &&
      (bytesMax === null || (suffixLargest[k] ?? 0) <= bytesMax) &&
      (totalMax === null || (suffixBytes[k] ?? 0) <= totalMax)
    if (within) {
      offloadImages = k
      break
    }
  }
  const sentence = broken.join('; ')
  return { offloadImages, reason: `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}` }
}

function reject(rule: EnforcedRule, rejection: WireRejectionPlan, expectedCode: string): Enforcement {
  return { rule, outcome: { kind: 'reject', rejection, expectedCode, rejectionKind: rejectionKindOf(rule) } }
}

/** The capture's `rejectionKind` of an enforced rule (what `expect.rejections` counts). */
function rejectionKindOf(rule: EnforcedRule): RejectionKind {
  switch (rule) {
    case 'window': return 'window'
    case 'pairing': return 'pairing'
    case 'images': return 'images'
    case 'maxOutput': return 'max-output'
    default: return assertNever(rule, 'enforced rule')
  }
}

/**
 * The first rule `route` enforces that `request` breaks, in `ENFORCED_RULES` order, with the rejection the
 * wire answers (module doc) and the §1.2.2 code a conforming adapter derives from it; null when every
 * enforced rule passes. `promptTokens` is the prompt as the route's tokenizer counts it.
 * - maxOutput: `max_tokens` above `route.maxOutputTokens` → `maxOutputRejection` (`UNKNOWN`);
 * - pairing: `strictValidationRejection` of the wire body (`UNKNOWN`); throws when `request.wireBody` is
 *   absent (a caller bug: `MockProvider` always sets it);
 * - images: `imageOffloadVerdict` over the decoded messages → the project's `IMAGE_OFFLOAD_REQUIRED` body
 *   (`imageOffloadRejection`, §1.2.2) with the computed `offloadImages` (`IMAGE_OFFLOAD_REQUIRED`);
 * - window: prompt (or, under `prompt-plus-max-tokens`, prompt + `max_tokens`) above `route.contextWindow` →
 *   `overflowRejection` (`CONTEXT_WINDOW_EXCEEDED`, except Anthropic's "input length and `max_tokens` exceed
 *   context limit" variant, which §1.2.2 does not list: `UNKNOWN`).
 */
export function enforcementOf(route: MockRoute, request: ParsedRequest, promptTokens: number): Enforcement | null {
  const rules = route.enforce
  const maxOutput = route.maxOutputTokens
  if (rules.maxOutput && maxOutput !== null && request.maxTokens !== undefined && request.maxTokens > maxOutput) {
    const rejection = maxOutputRejection(request.wire, request.model, request.maxTokens, maxOutput, request.maxTokensField)
    return reject('maxOutput', rejection, 'UNKNOWN')
  }
  if (rules.pairing) {
    if (request.wireBody === undefined) throw new Error('enforce: the pairing rule needs request.wireBody (the body as received)')
    const rejection = strictValidationRejection(request.wire, request.wireBody)
    if (rejection !== null) return reject('pairing', rejection, 'UNKNOWN')
  }
  if (rules.images) {
    const verdict = imageOffloadVerdict(imageOccurrences(request.messages), route.imageLimits)
    if (verdict !== null) {
      return reject('images', imageOffloadRejection(verdict.offloadImages, 400, verdict.reason), 'IMAGE_OFFLOAD_REQUIRED')
    }
  }
  const window = route.contextWindow
  if (rules.window !== null && window !== null) {
    const completion = rules.window === 'prompt-plus-max-tokens' ? request.maxTokens : undefined
    if (promptTokens + (completion ?? 0) > window) {
      const rejection = overflowRejection(request.wire, window, promptTokens, completion)
      const listed = request.wire !== 'anthropic' || completion === undefined || promptTokens > window
      return reject('window', rejection, listed ? 'CONTEXT_WINDOW_EXCEEDED' : 'UNKNOWN')
    }
  }
  return null
}

/**
 * The rejection the route answers `request` with, or null when every enforced rule passes (`enforcementOf`
 * without the rule name). `promptTokens` is the prompt as the route's tokenizer counts it.
 */
export function enforcedOutcome(route: MockRoute, request: ParsedRequest, promptTokens: number): PlannedOutcome | null {
  return enforcementOf(route, request, promptTokens)?.outcome ?? null
}
