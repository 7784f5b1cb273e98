/**
 * The fixed token heuristic of §2.2 and the route price of §2.3. `P_fixed` prices every logged shadow
 * price and the shrink rule; `P_route` (images at the route-declared price) prices the meter's nodes.
 */
import type { ContentBlock, Message, ToolSchema } from '../log/llm.ts'

/** Characters per token of the heuristic (Appendix A). */
export const CHARS_PER_TOKEN = 4
/** Tokens added per content block (Appendix A). */
export const BLOCK_OVERHEAD = 4
/** Tokens added per message (Appendix A). */
export const ROLE_OVERHEAD = 4

/** `ceil(len / 4)` with `len` in UTF-16 code units (§2.2). */
export function textTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN)
}

/**
 * Price of one content block (§2.2). `imageTokens`, when given, is the route image price that replaces
 * the fixed rule for image blocks at any nesting depth (§2.3 `P_route`).
 */
export function blockPrice(block: ContentBlock, imageTokens?: number): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return textTokens(String(block['text'])) + BLOCK_OVERHEAD
    case 'tool-call':
      return textTokens(String(block['name'])) + textTokens(String(block['arguments'])) + BLOCK_OVERHEAD
    case 'tool-result': {
      let sum = 0
      for (const inner of block['content'] as ContentBlock[]) sum += blockPrice(inner, imageTokens)
      return sum + BLOCK_OVERHEAD
    }
    case 'image':
      return imageTokens ?? BLOCK_OVERHEAD + textTokens(JSON.stringify(block))
    default:
      return BLOCK_OVERHEAD + textTokens(JSON.stringify(block))
  }
}

/** Σ block prices of `blocks` (no role overhead). */
export function blocksPrice(blocks: readonly ContentBlock[], imageTokens?: number): number {
  let sum = 0
  for (const b of blocks) sum += blockPrice(b, imageTokens)
  return sum
}

/** `P_fixed(message)` of §2.2: Σ block prices + ROLE_OVERHEAD, images by the fixed structural rule. */
export function fixedPrice(message: Message): number {
  return blocksPrice(message.content) + ROLE_OVERHEAD
}

/** `P_route(message)` of §2.3: `P_fixed` with each image at `imageTokens` when it is defined. */
export function routePrice(message: Message, imageTokens: number | undefined): number {
  return blocksPrice(message.content, imageTokens) + ROLE_OVERHEAD
}

/** `price(tools)` of §2.2: 0 when absent or empty, else `ceil(len(json(tools)) / 4) + 4`. */
export function toolsPrice(tools: readonly ToolSchema[] | undefined): number {
  return tools === undefined || tools.length === 0 ? 0 : textTokens(JSON.stringify(tools)) + BLOCK_OVERHEAD
}
