/**
 * Survivors of the mutation run (`pnpm mutate`, issue #18) in prune/*.ts that the other pruner tests leave
 * unjudged: a non-string marker, the dialect check of `isMeasuredTextBlock`, where the marker goes when the
 * first block lies wholly in the head, the §5.3 postcondition errors for a hand-made spec that breaks the §5.1
 * budget, a custom read-only path in the session pass, and how a refused or failing append surfaces.
 * Expected blocks and messages are written out by hand.
 */
import { describe, expect, it } from 'vitest'
import { Seq } from '../../src/brand.ts'
import { InvariantError, LogError } from '../../src/errors.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { SessionEvent } from '../../src/log/events.ts'
import type { ContentBlock, ImageBlock, TextBlock } from '../../src/log/llm.ts'
import { offloadPlaceholder } from '../../src/offload/projection.ts'
import { PruneConfigError, resolvePruneConfig, type PruneSpec } from '../../src/prune/config.ts'
import { isMeasuredTextBlock, pruneContent } from '../../src/prune/content.ts'
import { PruneError, pruneSession } from '../../src/prune/session.ts'
import { assistant, marker, result } from '../support/events.ts'

const text = (value: string): TextBlock => ({ type: 'text', text: value })

const plot: ImageBlock = {
  type: 'image',
  attachment: { attachmentId: `sha256:${'ab'.repeat(32)}`, mediaType: 'image/png', bytes: 48213, width: 1024, height: 768, name: 'plot.png' },
}

/** What `f` throws (fails when it throws nothing). */
function thrown(f: () => unknown): unknown {
  try {
    f()
  } catch (err) {
    return err
  }
  throw new Error('expected a throw')
}

describe('resolvePruneConfig: the marker must be a string', () => {
  it('a null marker is a MARKER error, not a TypeError', () => {
    const err = thrown(() => resolvePruneConfig(undefined, null as unknown as string))
    expect(err).toBeInstanceOf(PruneConfigError)
    expect(err).toMatchObject({ code: 'MARKER', key: 'marker', message: 'pruner config marker: the prune marker must be a non-empty string (§5.1)' })
  })
})

describe('isMeasuredTextBlock: an unknown dialect', () => {
  it('is an invariant failure naming the dialect', () => {
    const err = thrown(() => isMeasuredTextBlock(text('a'), 'dsh-9' as never))
    expect(err).toBeInstanceOf(InvariantError)
    expect((err as Error).message).toBe('unexpected dialect: "dsh-9"')
  })
})

describe('pruneContent: the marker goes after the head, in the block that meets the removed middle', () => {
  // threshold 5, head 2, tail 1, marker 'M' (2 + 1 + 1 ≤ 5); 'ab' + 'cdefgh' = 8 code points, removed [2, 7).
  const spec = resolvePruneConfig({ thresholdChars: 5, headChars: 2, tailChars: 1 }, 'M')

  it('a first block that is wholly head is kept as it is; the second carries the marker and the tail', () => {
    const first = text('ab')
    const out = pruneContent([first, text('cdefgh')], spec)
    expect(out).toEqual([text('ab'), text('Mh')])
    expect(out?.[0]).toBe(first)
  })
})

describe('pruneContent: §5.3 postconditions on a spec that breaks the §5.1 budget', () => {
  it('head and tail that overlap leave no removed middle: no block takes the marker', () => {
    const spec: PruneSpec = { thresholdChars: 1, headChars: 5, tailChars: 5, marker: 'M' }
    const err = thrown(() => pruneContent([text('abc')], spec))
    expect(err).toBeInstanceOf(InvariantError)
    expect((err as Error).message).toBe('pruneContent: no block intersected the removed middle [5, -2)')
  })

  it('a tail as long as the text (removed middle [1, 0)): the block starting at the middle\'s end takes no marker', () => {
    const spec: PruneSpec = { thresholdChars: 1, headChars: 1, tailChars: 3, marker: 'M' }
    const err = thrown(() => pruneContent([text('abc')], spec))
    expect(err).toBeInstanceOf(InvariantError)
    expect((err as Error).message).toBe('pruneContent: no block intersected the removed middle [1, 0)')
  })

  it('a negative head (removed middle [-1, 4)): an empty first block meets the middle and carries the marker alone', () => {
    // 'abcde' is then cut to its last code point; 'M' + 'e' = 2 ≤ 3 and < 5, so the result stands.
    const spec: PruneSpec = { thresholdChars: 3, headChars: -1, tailChars: 1, marker: 'M' }
    expect(pruneContent([text(''), text('abcde')], spec)).toEqual([text('M'), text('e')])
  })

  it('a result still over the threshold (2 + 4 + 2 = 8 > 3) is refused, naming the counts', () => {
    const spec: PruneSpec = { thresholdChars: 3, headChars: 2, tailChars: 2, marker: 'MMMM' }
    const err = thrown(() => pruneContent([text('abcdefghij')], spec))
    expect(err).toBeInstanceOf(InvariantError)
    expect((err as Error).message).toBe('pruneContent: 10 → 8 code points breaks the threshold 3 (§5.1 budget)')
  })
})

describe('pruneSession: options and append failures', () => {
  const defaults = resolvePruneConfig(undefined)

  it('a custom readOnlyPath names the offloaded image in the replacement placeholder', () => {
    const log = new EventLog({ dialect: 'seed' })
    log.append(marker('turn/start'))
    log.append(assistant(['c1']))
    const r = result('c1')
    const block = r.data.message.content[0]
    r.data.message.content = [{ ...block, content: [text('x'.repeat(9000)), plot] }]
    log.append(r)
    log.append({ time: 0, type: 'image/offload', data: { targets: [{ seq: Seq(2), imageIndexes: [0] }] } })
    const res = pruneSession(log, defaults, () => 7, { readOnlyPath: () => 'ro/custom-plot.png' })
    expect(res.pruned).toEqual([{ originalSeq: 2, replacementSeq: 5, callId: 'c1', charsBefore: 9000, charsAfter: 5163 }])
    const inner: ContentBlock[] = (log.event(5) as SessionEvent<'tool/result'>).data.message.content[0].content
    const placeholder = offloadPlaceholder(plot.attachment, 'ro/custom-plot.png')
    expect(placeholder).toContain('ro/custom-plot.png')
    expect(inner[1]).toEqual({ type: 'text', text: placeholder })
  })

  function failingLog(error: Error): EventLog {
    class Failing extends EventLog {
      override appendMeteredReplacement(): [SessionEvent, SessionEvent] {
        throw error
      }
    }
    const log = new Failing({ dialect: 'seed' })
    log.append(marker('turn/start'))
    log.append(assistant(['c1']))
    log.append(result('c1', 'a'.repeat(9000)))
    return log
  }

  it('a LogError of the Session is REJECTED with the node and the reason in the message', () => {
    const cause = new LogError('IO', 'storage refused the write')
    const err = thrown(() => pruneSession(failingLog(cause), defaults, () => 0))
    expect(err).toBeInstanceOf(PruneError)
    expect(err).toMatchObject({ code: 'REJECTED', message: 'the Session refused the prune of node 2: storage refused the write', cause })
    expect((err as PruneError).result).toEqual({ pruned: [], charsRemoved: 0 })
  })

  it('any other error of the append is rethrown as it is, not as a PruneError', () => {
    const boom = new TypeError('boom')
    const err = thrown(() => pruneSession(failingLog(boom), defaults, () => 0))
    expect(err).toBe(boom)
  })
})
