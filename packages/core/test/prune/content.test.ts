/** The pruner transform (§5.2, §5.3) on the §5.5 worked examples, and its measurement rules. */
import { describe, expect, it } from 'vitest'
import { PRUNE_MARKER } from '../../src/constants.ts'
import type { ContentBlock, ImageBlock, TextBlock } from '../../src/log/llm.ts'
import { harnessReadOnlyPath, offloadPlaceholder } from '../../src/offload/projection.ts'
import { resolvePruneConfig } from '../../src/prune/config.ts'
import { isMeasuredTextBlock, measuredChars, pruneContent } from '../../src/prune/content.ts'

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const text = (value: string): TextBlock => ({ type: 'text', text: value })

const plot: ImageBlock = {
  type: 'image',
  attachment: { attachmentId: `sha256:${'ab'.repeat(32)}`, mediaType: 'image/png', bytes: 48213, width: 1024, height: 768, name: 'plot.png' },
}

const defaults = resolvePruneConfig(undefined)

/** The text of block `i` of a pruned result (fails the test when it is not a text block). */
function textAt(blocks: ContentBlock[] | null, i: number): string {
  const block = blocks?.[i]
  if (block?.type !== 'text') throw new Error(`block ${i} is not a text block`)
  return (block as TextBlock).text
}

describe('pruneContent — §5.5 worked example', () => {
  const blocks: ContentBlock[] = [text('a'.repeat(6000)), plot, text('b'.repeat(5000))]

  it('§5.5: 11,000 measured code points > 8,192 → [A 4,139 cp, image, B 1,024 cp] = 5,163 cp', () => {
    expect(PRUNE_MARKER).toHaveLength(43)
    expect(measuredChars(blocks)).toBe(11000)
    const out = pruneContent(blocks, defaults)
    expect(out).toEqual([text('a'.repeat(4096) + PRUNE_MARKER), plot, text('b'.repeat(1024))])
    expect(out?.[1]).toBe(plot)
    expect(Array.from(textAt(out, 0))).toHaveLength(4139)
    expect(measuredChars(out ?? [])).toBe(5163)
    expect(11000 - measuredChars(out ?? [])).toBe(5837)
  })

  it('§5.5: does not modify its input and a second pass returns null (§5.4 rule 5)', () => {
    const copy = structuredClone(blocks)
    const out = pruneContent(blocks, defaults)
    expect(blocks).toEqual(copy)
    expect(pruneContent(out ?? [], defaults)).toBeNull()
  })

  it('§5.5 surrogates: 60 × 😀, threshold 50, head 4, tail 3 → 50 code points, 57 code units, no lone surrogate', () => {
    const spec = resolvePruneConfig({ thresholdChars: 50, headChars: 4, tailChars: 3 })
    const out = pruneContent([text('😀'.repeat(60))], spec)
    expect(out).toEqual([text('😀😀😀😀' + PRUNE_MARKER + '😀😀😀')])
    const result = textAt(out, 0)
    expect(Array.from(result)).toHaveLength(50)
    expect(result).toHaveLength(57)
    expect(LONE_SURROGATE.test(result)).toBe(false)
  })

  it('§5.5 ordering: [A×40, reasoning, B×30, tool-call, C×30] → ["AAAA" + marker, reasoning, tool-call, "CCC"]', () => {
    const spec = resolvePruneConfig({ thresholdChars: 50, headChars: 4, tailChars: 3 })
    const reasoning: ContentBlock = { type: 'reasoning', text: 'thinking' }
    const call: ContentBlock = { type: 'tool-call', id: 'call_9' as never, name: 'grep', arguments: '{}' }
    const out = pruneContent([text('A'.repeat(40)), reasoning, text('B'.repeat(30)), call, text('C'.repeat(30))], spec)
    expect(out).toEqual([text('AAAA' + PRUNE_MARKER), reasoning, call, text('CCC')])
  })
})

describe('pruneContent — §5.2/§5.3 rules', () => {
  const small = resolvePruneConfig({ thresholdChars: 50, headChars: 4, tailChars: 3 })

  it('§5.3: returns null at exactly the threshold and prunes one code point above it', () => {
    expect(pruneContent([text('x'.repeat(50))], small)).toBeNull()
    expect(pruneContent([text('x'.repeat(51))], small)).toEqual([text('xxxx' + PRUNE_MARKER + 'xxx')])
  })

  it('§5.3: headChars = tailChars = 0 leaves the marker alone', () => {
    const spec = resolvePruneConfig({ thresholdChars: 43, headChars: 0, tailChars: 0 })
    expect(pruneContent([text('y'.repeat(44))], spec)).toEqual([text(PRUNE_MARKER)])
  })

  it('§5.3: a block straddling the head boundary is cut; the marker goes into the first block that intersects the middle', () => {
    const out = pruneContent([text('ab'), text('cdefgh'.repeat(10)), text('tail')], small)
    expect(out).toEqual([text('ab'), text('cd' + PRUNE_MARKER), text('ail')])
  })

  it('§5.3: other fields of a cut text block are preserved', () => {
    const tagged = { type: 'text', text: 'z'.repeat(80), cacheHint: 'x' } as ContentBlock
    expect(pruneContent([tagged], small)).toEqual([{ type: 'text', text: 'zzzz' + PRUNE_MARKER + 'zzz', cacheHint: 'x' }])
  })

  it('§5.2 Q-06: offload placeholders are not measured and are kept whole, in order', () => {
    const placeholder = text(offloadPlaceholder(plot.attachment, harnessReadOnlyPath(plot.attachment)))
    expect(isMeasuredTextBlock(placeholder)).toBe(false)
    expect(measuredChars([placeholder, text('abc')])).toBe(3)
    expect(pruneContent([placeholder, text('q'.repeat(40))], small)).toBeNull()
    const out = pruneContent([text('q'.repeat(30)), placeholder, text('r'.repeat(30))], small)
    expect(out).toEqual([text('qqqq' + PRUNE_MARKER), placeholder, text('rrr')])
  })

  it('§14.1 rc.8 dialect: placeholders do not exist, so every text block is measured', () => {
    const placeholder = text(offloadPlaceholder(plot.attachment, undefined))
    expect(isMeasuredTextBlock(placeholder, 'dsh-0.1.0-rc.8')).toBe(true)
    expect(measuredChars([placeholder], 'dsh-0.1.0-rc.8')).toBe(Array.from(placeholder.text).length)
  })

  it('§5.2: nested tool-result text and unknown blocks cost 0 and are preserved', () => {
    const nested: ContentBlock = { type: 'tool-result', toolCallId: 'c' as never, content: [text('n'.repeat(500))] }
    const unknown: ContentBlock = { type: 'custom', payload: 'p'.repeat(500) }
    expect(measuredChars([nested, unknown])).toBe(0)
    expect(pruneContent([nested, unknown, text('s'.repeat(60))], small)).toEqual([nested, unknown, text('ssss' + PRUNE_MARKER + 'sss')])
  })

  it('§5.2: length is in code points, not UTF-16 code units', () => {
    expect(measuredChars([text('😀😀'), text('ab')])).toBe(4)
    expect(pruneContent([text('😀'.repeat(50))], small)).toBeNull()
  })
})
