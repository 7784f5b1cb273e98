/**
 * Provider-side enforcement of one route (issue #15): what a real provider refuses before it answers.
 * Each rule answers with the real status and body of its wire (not a protocol code); the subject's adapter
 * has to classify it.
 * - window: the prompt, counted by the route's tokenizer, exceeds the window (`prompt`), or prompt +
 *   `max_tokens` does (`prompt-plus-max-tokens`);
 * - pairing: a tool call without its result, a result without its call, results out of order where the
 *   wire forbids it, Anthropic role alternation, orphan reasoning items;
 * - images: images per request, bytes per image, image bytes per request → `IMAGE_OFFLOAD_REQUIRED` with
 *   the `offloadImages` count computed from the request;
 * - maxOutput: `max_tokens` above the route's `maxOutputTokens`.
 * Usage reporting (`reported`, `omitted`, `late`) is a route property the response writer honours.
 *
 * CONTRACT (issue #15 wave 1): the specs and `enforcedOutcome` are shared by the routes and enforcement
 * work; the pairing, image and max-output rules are filled in by the enforcement work.
 */
import type { MockRoute } from './route.ts'
import type { ParsedRequest, PlannedOutcome } from './types.ts'
import { overflowRejection } from './wire-response.ts'

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

/**
 * The rejection the route answers `request` with, or null when every enforced rule passes.
 * `promptTokens` is the prompt as the route's tokenizer counts it.
 */
export function enforcedOutcome(route: MockRoute, request: ParsedRequest, promptTokens: number): PlannedOutcome | null {
  const window = route.contextWindow
  if (route.enforce.window === null || window === null) return null
  const counted = route.enforce.window === 'prompt-plus-max-tokens' ? promptTokens + (request.maxTokens ?? 0) : promptTokens
  if (counted <= window) return null
  return { kind: 'reject', rejection: overflowRejection(request.wire, window, counted), expectedCode: 'CONTEXT_WINDOW_EXCEEDED' }
}
