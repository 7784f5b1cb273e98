/**
 * §5.2 measured length in code points, on the inputs where counting UTF-16 units and counting code points
 * part ways: lone surrogates (each counts 1, as `Array.from` does), a high surrogate followed by something
 * that is not a low one, and a text field that is not a string. Also the §5.3 layout when the head or the
 * tail ends exactly on a block boundary, written out by hand.
 */
import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '../../src/log/llm.ts'
import { resolvePruneConfig } from '../../src/prune/config.ts'
import { measuredChars, pruneContent } from '../../src/prune/content.ts'

const text = (t: string): ContentBlock => ({ type: 'text', text: t })
const MARKER = '\n\n[... middle of tool result omitted ...]\n\n'

describe('measuredChars (§5.2)', () => {
  const cases: ReadonlyArray<[string, string, number]> = [
    ['a pair', 'a\u{1F600}', 2],
    ['a lone high surrogate at the end', 'a\uD83D', 2],
    ['a lone high surrogate before an ASCII letter', '\uD83Dx', 2],
    ['a lone low surrogate after an ASCII letter', 'x\uDE00', 2],
    ['a lone low surrogate alone', '\uDE00', 1],
    ['a high surrogate before a private-use character above the low range', '\uD83D\uE000', 2],
    ['a private-use character before a low surrogate', '\uE000\uDC00', 2],
    ['two pairs', '\u{1F600}\u{1F601}', 2],
  ]
  for (const [what, t, n] of cases) {
    it(`${what}: ${n}`, () => {
      expect(measuredChars([text(t)])).toBe(n)
    })
  }

  it('a text block whose text is not a string is not measured', () => {
    expect(measuredChars([{ type: 'text', text: 5 } as unknown as ContentBlock, text('ab')])).toBe(2)
  })
})

describe('pruneContent (§5.3) with the head or tail ending on a block boundary', () => {
  const spec = resolvePruneConfig({ thresholdChars: 49, headChars: 3, tailChars: 3 })

  it('head = the whole first block: the first block is kept as it is, the marker starts the next one', () => {
    const blocks = [text('abc'), text('x'.repeat(50)), text('def')]
    const out = pruneContent(blocks, spec)
    expect(out).toEqual([text('abc'), text(MARKER), text('def')])
    expect(out?.[0]).toBe(blocks[0])
    expect(out?.[2]).toBe(blocks[2])
  })
})
