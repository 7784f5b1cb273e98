/**
 * Assembly of one model-call attempt from its stream chunks (§1.4.6, normative): the content of an
 * `assistant/message`, the blocks priced for a usage anchor (§2.5) and the summarizer output (§8.4).
 */
import type { CallId } from '../brand.ts'
import type { ContentBlock, FinishReason, StreamChunk, TokenUsage } from './llm.ts'

/** The assembled attempt: blocks in first-seen index order, the last usage, and the finish reason. */
export interface AssembledAttempt {
  blocks: ContentBlock[]
  usage?: TokenUsage
  finish: FinishReason
}

/** Thrown when chunks cannot be assembled: an unclosed block of a type that has no deltas (§1.4.6). */
export class AssemblyError extends Error {
  override readonly name = 'AssemblyError'
  readonly code = 'UNCLOSED_BLOCK'
}

interface OpenBlock {
  type: string
  text: string
  id: string | undefined
  name: string | undefined
  args: string
  final: ContentBlock | undefined
}

/** Assembles `chunks` (one attempt, stream order) per §1.4.6. Throws `AssemblyError`. */
export function assembleAttempt(chunks: readonly StreamChunk[]): AssembledAttempt {
  const order: number[] = []
  const blocks = new Map<number, OpenBlock>()
  let usage: TokenUsage | undefined
  let finish: FinishReason = { kind: 'stop' }
  for (const c of chunks) {
    switch (c.type) {
      case 'block-start':
        openBlock(blocks, order, c.index, c.blockType)
        break
      case 'text-delta':
      case 'reasoning-delta': {
        const b = openBlock(blocks, order, c.index, c.type === 'text-delta' ? 'text' : 'reasoning')
        if (b.final === undefined) b.text += c.text
        break
      }
      case 'tool-call-delta': {
        const b = openBlock(blocks, order, c.index, 'tool-call')
        if (b.final === undefined) {
          b.id = c.id
          if (c.name !== undefined) b.name = c.name
          b.args += c.argumentsDelta
        }
        break
      }
      case 'block-end': {
        const b = openBlock(blocks, order, c.index, c.block.type)
        if (b.final === undefined) b.final = c.block
        break
      }
      case 'usage':
        usage = c.usage
        break
      case 'finish':
        finish = c.reason
        break
    }
  }
  const out: ContentBlock[] = []
  for (const index of order) {
    const b = blocks.get(index) as OpenBlock
    out.push(b.final ?? fromDeltas(index, b))
  }
  const result: AssembledAttempt = { blocks: finish.kind === 'max-tokens' ? out.filter((b) => b.type !== 'tool-call') : out, finish }
  if (usage !== undefined) result.usage = usage
  return result
}

/** The open block at `index`, created (and its index recorded in `order`) on first sight. */
function openBlock(blocks: Map<number, OpenBlock>, order: number[], index: number, type: string): OpenBlock {
  let b = blocks.get(index)
  if (b === undefined) {
    b = { type, text: '', id: undefined, name: undefined, args: '', final: undefined }
    blocks.set(index, b)
    order.push(index)
  }
  return b
}

function fromDeltas(index: number, b: OpenBlock): ContentBlock {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text }
    case 'reasoning':
      return { type: 'reasoning', text: b.text }
    case 'tool-call':
      return { type: 'tool-call', id: (b.id ?? `call-${index}`) as CallId, name: b.name ?? '', arguments: b.args }
    default:
      throw new AssemblyError(`block ${index} of type ${b.type} never received a block-end`)
  }
}
