/**
 * The pruner's content transform (§5.2, §5.3): keep a head and a tail of the measured text of a
 * tool result, in Unicode code points, with one marker in between; every other block stays whole and
 * in order. Pure: the input blocks are never modified.
 */
import { assertNever, InvariantError } from '../errors.ts'
import type { Dialect } from '../log/events.ts'
import type { ContentBlock, TextBlock } from '../log/llm.ts'
import { isOffloadPlaceholder } from '../offload/projection.ts'
import type { PruneSpec } from './config.ts'

/**
 * True for a measured text block (§5.2): a `text` block that is not an offload placeholder. In the
 * rc.8 dialect placeholders do not exist, so every `text` block is measured (§14.1 "Pruning").
 */
export function isMeasuredTextBlock(block: ContentBlock, dialect: Dialect = 'seed'): block is TextBlock {
  if (block.type !== 'text' || typeof block['text'] !== 'string') return false
  switch (dialect) {
    case 'seed':
      return !isOffloadPlaceholder(block['text'])
    case 'dsh-0.1.0-rc.8':
      return true
    default:
      return assertNever(dialect, 'dialect')
  }
}

/** Σ code points (`Array.from(text).length`) over the measured text blocks of `blocks` (§5.2). */
export function measuredChars(blocks: readonly ContentBlock[], dialect: Dialect = 'seed'): number {
  let total = 0
  for (const block of blocks) {
    if (isMeasuredTextBlock(block, dialect)) total += codePointCount(block.text)
  }
  return total
}

/**
 * `pruneContent` of §5.3 over the top-level blocks of one tool-result block. Returns null when the
 * measured text is within `spec.thresholdChars`; otherwise new blocks holding the first `headChars`
 * and the last `tailChars` code points of the measured text, `spec.marker` exactly once right after
 * the head, and every non-measured block (images, reasoning, calls, nested results, unknown blocks,
 * offload placeholders) unchanged and in order. Text blocks are cut at code-point boundaries only, so
 * no surrogate pair is split; a measured block that ends up empty is dropped; other fields of a cut
 * block are preserved. `spec` must come from `resolvePruneConfig` (its budget rule is what makes the
 * result fit); throws `InvariantError` if the §5.3 postconditions fail.
 */
export function pruneContent(blocks: readonly ContentBlock[], spec: PruneSpec, dialect: Dialect = 'seed'): ContentBlock[] | null {
  const total = measuredChars(blocks, dialect)
  if (total <= spec.thresholdChars) return null
  const removedStart = spec.headChars
  const removedEnd = total - spec.tailChars
  let consumed = 0
  let markerInserted = false
  const out: ContentBlock[] = []
  for (const block of blocks) {
    if (!isMeasuredTextBlock(block, dialect)) {
      out.push(block)
      continue
    }
    const cps = Array.from(block.text)
    const bs = consumed
    const be = bs + cps.length
    consumed = be
    const headEnd = Math.min(cps.length, Math.max(0, removedStart - bs))
    const tailStart = Math.min(cps.length, Math.max(0, removedEnd - bs))
    const intersects = bs < removedEnd && be > removedStart
    const marker = intersects && !markerInserted ? spec.marker : ''
    if (marker !== '') markerInserted = true
    if (marker === '' && (headEnd === cps.length || tailStart === 0)) {
      // Entirely retained (head or tail side): `join` would rebuild the same text, so the block is kept as it is.
      if (block.text !== '') out.push(block)
      continue
    }
    const text = cps.slice(0, headEnd).join('') + marker + cps.slice(tailStart).join('')
    if (text !== '') out.push({ ...block, text })
  }
  if (!markerInserted) throw new InvariantError(`pruneContent: no block intersected the removed middle [${removedStart}, ${removedEnd})`)
  const after = measuredChars(out, dialect)
  if (after > spec.thresholdChars || after >= total) {
    throw new InvariantError(`pruneContent: ${total} → ${after} code points breaks the threshold ${spec.thresholdChars} (§5.1 budget)`)
  }
  return out
}

function codePointCount(text: string): number {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    // A high surrogate followed by a low surrogate is one code point; lone surrogates count 1 (as Array.from does).
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    count++
  }
  return count
}
