/**
 * Image occurrences and the image-offload projection (§6.2, §6.5). Pure functions of a message and
 * the set of offloaded depth-first indexes recorded for its node.
 */
import type { ContentBlock, ImageAttachmentRef, ImageBlock, Message, TextBlock } from '../log/llm.ts'

const PLACEHOLDER_OPENING = "[image omitted from this request to stay within the provider's image budget: "
const ENDING_WITH_PATH = '. Read it again if you still need it.]'
const ENDING_WITHOUT_PATH = '. Ask for it again if you still need it.]'

/** Maps an attachment to the read-only path a model can read it from, or undefined when none exists. */
export type ReadOnlyPathResolver = (ref: ImageAttachmentRef) => string | undefined

/**
 * The harness read-only path (§6.5, Appendix A): `attachments/<first 12 hex of the sha256 digest>.<subtype>`.
 * Returns undefined for an attachment id that is not `sha256:<hex>`.
 */
export const harnessReadOnlyPath: ReadOnlyPathResolver = (ref) => {
  const match = /^sha256:([0-9a-f]{64})$/.exec(ref.attachmentId)
  if (match === null) return undefined
  const subtype = ref.mediaType.split('/')[1] ?? ''
  const extension = subtype.split(/[+;]/)[0] ?? ''
  return `attachments/${(match[1] ?? '').slice(0, 12)}.${extension}`
}

/** The placeholder text for one offloaded image (Appendix A, [project constant]). */
export function offloadPlaceholder(ref: ImageAttachmentRef, path: string | undefined): string {
  const label = ref.name ?? ref.attachmentId
  return path === undefined
    ? `${PLACEHOLDER_OPENING}${label}${ENDING_WITHOUT_PATH}`
    : `${PLACEHOLDER_OPENING}${label}; read-only copy: ${path}${ENDING_WITH_PATH}`
}

/** True exactly for strings `offloadPlaceholder` can produce (§6.5). */
export function isOffloadPlaceholder(text: string): boolean {
  return text.startsWith(PLACEHOLDER_OPENING) && (text.endsWith(ENDING_WITH_PATH) || text.endsWith(ENDING_WITHOUT_PATH))
}

/** Number of image occurrences in a message, by the depth-first walk of §6.2. */
export function countImages(content: readonly ContentBlock[]): number {
  let count = 0
  const walk = (blocks: readonly ContentBlock[]): void => {
    for (const b of blocks) {
      if (b.type === 'image') count++
      else if (b.type === 'tool-result' && Array.isArray(b['content'])) walk(b['content'] as ContentBlock[])
    }
  }
  walk(content)
  return count
}

/** The image blocks of a message in depth-first pre-order (§6.2); index in the array = imageIndex. */
export function imageOccurrences(content: readonly ContentBlock[]): ImageBlock[] {
  const out: ImageBlock[] = []
  const walk = (blocks: readonly ContentBlock[]): void => {
    for (const b of blocks) {
      if (b.type === 'image') out.push(b as ImageBlock)
      else if (b.type === 'tool-result' && Array.isArray(b['content'])) walk(b['content'] as ContentBlock[])
    }
  }
  walk(content)
  return out
}

/**
 * The image-offload projection (§6.5): each image whose depth-first index is in `offloaded` is replaced
 * in place by one placeholder text block; everything else (ids, source, nesting) is unchanged. Returns
 * the input message itself when nothing is offloaded.
 */
export function imageOffloadProjection<M extends Message>(
  message: M,
  offloaded: ReadonlySet<number>,
  readOnlyPath: ReadOnlyPathResolver = harnessReadOnlyPath,
): M {
  if (offloaded.size === 0) return message
  let index = 0
  const walk = (blocks: readonly ContentBlock[]): ContentBlock[] => blocks.map((b) => {
    if (b.type === 'image') {
      const own = index++
      if (!offloaded.has(own)) return b
      const ref = (b as ImageBlock).attachment
      const text: TextBlock = { type: 'text', text: offloadPlaceholder(ref, readOnlyPath(ref)) }
      return text
    }
    if (b.type === 'tool-result' && Array.isArray(b['content'])) return { ...b, content: walk(b['content'] as ContentBlock[]) } as ContentBlock
    return b
  })
  return { ...message, content: walk(message.content) }
}
