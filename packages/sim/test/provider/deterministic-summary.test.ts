/**
 * The deterministic summarizer (§8.3, §7.5): eight headings in instruction order, facts from the region,
 * a framed price within the budget (so strictly smaller than the source), merge of an earlier checkpoint.
 */
import { describe, expect, it } from 'vitest'
import {
  blocksPrice,
  CallId,
  CHECKPOINT_CLOSE_TAG,
  CHECKPOINT_OPEN_TAG,
  CHECKPOINT_PREAMBLE,
  COMPACTION_INSTRUCTION,
  ROLE_OVERHEAD,
} from '@compaction-sim/core'
import {
  CHECKPOINT_HEADINGS,
  deterministicSummary,
  minimumSourceTokens,
  regionOf,
  summarizeRegion,
} from '../../src/provider/deterministic-summary.ts'
import type { DecodedMessage } from '../../src/provider/types.ts'

const t = (text: string) => ({ type: 'text' as const, text })
const region: DecodedMessage[] = [
  { role: 'user', content: [t('Please fix the failing build in packages/core/src/log/store.ts.\nIt started after the upgrade.')] },
  {
    role: 'assistant',
    content: [
      t('Reading the store first.'),
      { type: 'tool-call', id: CallId('c1'), name: 'read_file', arguments: '{"path":"packages/core/src/log/store.ts"}' },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool-result',
        toolCallId: CallId('c1'),
        content: [t(`${'x'.repeat(3000)}\nError: ENOENT while opening ./data/session.jsonl\n${'y'.repeat(2000)}`)],
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      t('The path is wrong; switching to an absolute path.'),
      { type: 'tool-call', id: CallId('c2'), name: 'bash', arguments: '{"cmd":"pnpm test"}' },
    ],
  },
  { role: 'user', content: [{ type: 'tool-result', toolCallId: CallId('c2'), content: [t('1 passed')] }] },
  { role: 'user', content: [t('Also keep the DB port at 5433, never 5432.')] },
]
const request = (messages: DecodedMessage[]) => ({
  messages: [
    { role: 'system' as const, content: [t('sys')] },
    ...messages,
    { role: 'user' as const, content: [t(COMPACTION_INSTRUCTION)] },
  ],
})

function headings(text: string): string[] {
  return text.split('\n').filter((l) => l.startsWith('## '))
}

describe('deterministicSummary', () => {
  it('has the eight instruction headings, in order, exactly once', () => {
    expect(CHECKPOINT_HEADINGS).toHaveLength(8)
    expect(headings(deterministicSummary(request(region)))).toEqual(CHECKPOINT_HEADINGS)
    expect(headings(deterministicSummary(request([])))).toEqual(CHECKPOINT_HEADINGS)
  })

  it('excludes the system head and the instruction from the region', () => {
    expect(regionOf(request(region).messages)).toEqual(region)
  })

  it('strips the instruction merged into the last user turn (the anthropic wire), and summarizes as if it were separate', () => {
    const merged = request(region).messages
    const tail = merged.splice(-2, 2)
    merged.push({ role: 'user', content: tail.flatMap((m) => m.content) })
    expect(merged.at(-1)?.content).toEqual([t('Also keep the DB port at 5433, never 5432.'), t(COMPACTION_INSTRUCTION)])
    expect(regionOf(merged)).toEqual(region)
    expect(deterministicSummary({ messages: merged })).toBe(deterministicSummary(request(region)))
    const notLast = [...request(region).messages.slice(0, -1), { role: 'user' as const, content: [t(COMPACTION_INSTRUCTION), t('after')] }]
    expect(regionOf(notLast)).toEqual(notLast.slice(1))
  })

  it('fills sections from the region deterministically', () => {
    const text = deterministicSummary(request(region))
    expect(text).toBe(deterministicSummary(request(region)))
    expect(text).toMatchInlineSnapshot(`
      "## Primary Request and Intent
      - "Please fix the failing build in packages/core/src/log/store.ts."
      - "Also keep the DB port at 5433, never 5432."

      ## Key Technical Concepts
      - tools used: read_file, bash

      ## Files and Code
      - packages/core/src/log/store.ts
      - ./data/session.jsonl

      ## Errors and Fixes
      - Error: ENOENT while opening ./data/session.jsonl

      ## Pending Jobs
      - latest request: "Also keep the DB port at 5433, never 5432."

      ## Current Work
      - last tool call: bash({"cmd":"pnpm test"})

      ## Next Step
      - The path is wrong; switching to an absolute path.

      ## Critical Context
      - condensed 6 messages: 2 user, 2 assistant, 2 tool results"
    `)
  })

  it('keeps the framed checkpoint within ratio × the region price (strictly smaller than the source)', () => {
    for (const ratio of [0.5, 0.25, 0.15]) {
      const s = summarizeRegion(region, { ratio })
      const framed =
        blocksPrice([t(`${CHECKPOINT_PREAMBLE}\n\n${CHECKPOINT_OPEN_TAG}`), t(s.text), t(CHECKPOINT_CLOSE_TAG)]) + ROLE_OVERHEAD
      expect(s.sourceTokens).toBeGreaterThanOrEqual(minimumSourceTokens(ratio))
      expect(s.framedTokens).toBe(framed)
      expect(framed).toBeLessThanOrEqual(Math.floor(s.sourceTokens * ratio))
      expect(framed).toBeLessThan(s.sourceTokens)
      expect(headings(s.text)).toEqual(CHECKPOINT_HEADINGS)
    }
    expect(summarizeRegion(region, { ratio: 0.15 }).text.length).toBeLessThan(summarizeRegion(region).text.length)
  })

  it('returns the bare skeleton for a region too small to shrink (the engine then refuses it, FAULT-27)', () => {
    const tiny: DecodedMessage[] = [{ role: 'user', content: [t('hi')] }]
    const s = summarizeRegion(tiny)
    expect(s.sourceTokens).toBeLessThan(minimumSourceTokens())
    expect(s.text).toBe(CHECKPOINT_HEADINGS.map((h) => `${h}\n(none)`).join('\n\n'))
    expect(s.framedTokens).toBeGreaterThan(s.sourceTokens)
  })

  it('merges still-true bullets of an earlier checkpoint and drops its stale sections', () => {
    const first = deterministicSummary(request(region))
    const checkpoint: DecodedMessage = {
      role: 'user',
      content: [t(`${CHECKPOINT_PREAMBLE}\n\n${CHECKPOINT_OPEN_TAG}`), t(first), t(CHECKPOINT_CLOSE_TAG)],
    }
    const later: DecodedMessage[] = [
      checkpoint,
      { role: 'user', content: [t(`Now rename src/util/io.ts to src/util/fs.ts.\n${'z'.repeat(4000)}`)] },
      { role: 'assistant', content: [t('Renaming.')] },
    ]
    const merged = deterministicSummary(request(later))
    expect(headings(merged)).toEqual(CHECKPOINT_HEADINGS)
    expect(merged).toContain('- "Also keep the DB port at 5433, never 5432."')
    expect(merged).toContain('- "Now rename src/util/io.ts to src/util/fs.ts."')
    expect(merged).toContain('- src/util/io.ts')
    expect(merged).not.toContain('last tool call: bash')
    expect(merged).toContain('- latest request: "Now rename src/util/io.ts to src/util/fs.ts."')
  })

  it('rejects a ratio outside (0, 1)', () => {
    expect(() => summarizeRegion(region, { ratio: 1 })).toThrow(RangeError)
  })
})
