/**
 * WORLD-05 (usage is the world's) and WORLD-06 (every served request belongs to a logged attempt),
 * `src/checker/world.ts`, on the Appendix B log (seq 0…66) with a hand-written request capture and world record,
 * all built inside each test. Appendix B: turn/start #0, step/start #1, request/header #4, assistant/message #10
 * (usage input 150, output 20), compaction/start #51, compaction/summary #54, compaction/end #56, 67 events.
 * Pins:
 * - WORLD-05 judges only attempts both the world and the capture saw succeed; the judged event is the first
 *   assistant/message of the window (not the window's first event); the exact messages for usage logged where
 *   the world reported none, no usage logged where it reported some, and other figures; equal figures pass;
 * - WORLD-06: the step/bracket state at revision L is the one after event L - 1 (step/start opens a step,
 *   compaction/start a bracket, turn/end closes a step); a summary call inside a bracket and a conversation
 *   call inside a step pass; a summary call outside a bracket gets only its own message; a dispatch at the
 *   log's length is judged, one beyond it gets its own message; a revision before the log (negative: only the
 *   check's own API lets one through, checkLog's capture validation refuses it) is outside everything.
 */
import { describe, expect, it } from 'vitest'
import type { CapturedRequest, TokenUsage } from '@compaction-sim/core'
import { checkLog } from '../../src/checker/run.ts'
import type { WorldRecord, WorldRequest } from '../../src/provider/world-record.ts'
import { appendixB, foreign, reportOf, violationLines, type AppendixEvent } from './support.ts'
import { runWorldHooks } from './world-hooks.ts'

type Purpose = 'conversation' | 'compaction'

/** A captured request of `purpose` dispatched at log revision `at`. */
function cap(index: number, purpose: Purpose, at: number, outcome: CapturedRequest['outcome'] = 'stop'): CapturedRequest {
  return { index, logRevisionAtDispatch: at, time: 0, purpose, provider: 'p', model: 'm', messages: [], outcome }
}

/** A world request answered with a complete reply and the given usage (null = none reported). */
function served(index: number, purpose: Purpose, usage: TokenUsage | null = null, extra: Partial<WorldRequest> = {}): WorldRequest {
  return {
    index, purpose, model: 'm', route: 'm', stream: true, images: [],
    answer: { kind: 'reply', status: 200, finish: 'stop' }, failureClass: null,
    ...(usage === null ? { usage: null, usageDelivery: 'omitted' } : { usage, usageDelivery: 'reported' }),
    ...extra,
  } as WorldRequest
}

function world(requests: WorldRequest[]): WorldRecord {
  return { schemaVersion: 1, kind: 'compaction-sim/world-record', wire: 'openai' as WorldRecord['wire'], captureOffset: 0, logOffset: 0, routes: [], requests }
}

/** `id@seq: message` lines of `id`, failing when a check threw. */
async function lines(id: 'WORLD-05' | 'WORLD-06', events: AppendixEvent[], requests: CapturedRequest[], w: WorldRecord): Promise<string[]> {
  const r = reportOf(await checkLog(events as never, { dialect: 'seed', requests, world: w }))
  expect(r.internalErrors).toEqual([])
  return violationLines(r, id)
}

const five = (events: AppendixEvent[], requests: CapturedRequest[], w: WorldRecord): Promise<string[]> => lines('WORLD-05', events, requests, w)
const six = (requests: CapturedRequest[], w: WorldRecord, events: AppendixEvent[] = appendixB()): Promise<string[]> => lines('WORLD-06', events, requests, w)

const usageAt10 = (events: AppendixEvent[]): unknown => (events[10] as AppendixEvent).data['usage']

describe('WORLD-05: which attempts are judged', () => {
  it('the Appendix B event #10 carries usage input 150, output 20 (what these tests rely on)', () => {
    const events = appendixB()
    expect((events[10] as AppendixEvent).type).toBe('assistant/message')
    expect((events[4] as AppendixEvent).type).toBe('request/header')
    expect(usageAt10(events)).toEqual({ inputTokens: 150, outputTokens: 20 })
  })

  it('a successful attempt whose first assistant/message logs the world\'s figures passes (the window starts at a request/header)', async () => {
    expect(await five(appendixB(), [cap(0, 'conversation', 4)], world([served(0, 'conversation', { inputTokens: 150, outputTokens: 20 })]))).toEqual([])
  })

  it('an attempt the world answered but the capture records as failed is not judged', async () => {
    // The world reported no usage, yet #10 logs some: a violation only if the attempt were judged.
    expect(await five(appendixB(), [cap(0, 'conversation', 4, 'error')], world([served(0, 'conversation')]))).toEqual([])
    expect(await five(appendixB(), [cap(0, 'conversation', 4, 'aborted')], world([served(0, 'conversation')]))).toEqual([])
  })

  it('an attempt the world failed (and the capture too) is not judged', async () => {
    const failed = served(0, 'conversation', null, { answer: { kind: 'reject', status: 503 }, failureClass: 'SERVER' })
    expect(await five(appendixB(), [cap(0, 'conversation', 4, 'error')], world([failed]))).toEqual([])
  })

  it('the same attempt, successful on both sides, is judged', async () => {
    expect(await five(appendixB(), [cap(0, 'conversation', 4)], world([served(0, 'conversation')]))).toEqual([
      'WORLD-05@10: assistant/message logs usage (input 150 (cache read 0), output 20), but the world reported none for world request #0 (omitted)',
    ])
  })
})

describe('WORLD-05: the messages', () => {
  it('no usage logged where the world reported some', async () => {
    const events = appendixB()
    delete (events[10] as AppendixEvent).data['usage']
    expect(await five(events, [cap(0, 'conversation', 4)], world([served(0, 'conversation', { inputTokens: 150, cacheReadTokens: 5, outputTokens: 20 })]))).toEqual([
      'WORLD-05@10: assistant/message logs no usage, but the world reported input 155 (cache read 5), output 20 for world request #0',
    ])
  })

  it('no usage logged where the world reported none passes', async () => {
    const events = appendixB()
    delete (events[10] as AppendixEvent).data['usage']
    expect(await five(events, [cap(0, 'conversation', 4)], world([served(0, 'conversation')]))).toEqual([])
  })

  it('other figures, in any of the three, are reported with both', async () => {
    const cases: Array<[TokenUsage, string]> = [
      [{ inputTokens: 151, outputTokens: 20 }, 'input 151 (cache read 0), output 20'],
      [{ inputTokens: 140, cacheReadTokens: 10, outputTokens: 20 }, 'input 150 (cache read 10), output 20'],
      [{ inputTokens: 150, outputTokens: 21 }, 'input 150 (cache read 0), output 21'],
    ]
    for (const [truth, text] of cases) {
      expect(await five(appendixB(), [cap(0, 'conversation', 4)], world([served(0, 'conversation', truth)]))).toEqual([
        `WORLD-05@10: assistant/message logs usage input 150 (cache read 0), output 20; the world reported ${text} for world request #0`,
      ])
    }
  })
})

describe('WORLD-06: the step and bracket state at a dispatch', () => {
  const outsideStep = (seq: number, w: number): string => `WORLD-06@${seq}: world request #${w} is a conversation call dispatched outside any step`
  const outsideBracket = (seq: number, w: number): string => `WORLD-06@${seq}: world request #${w} is a summary call dispatched outside any compaction bracket`

  it('a conversation call right after step/start (revision 2) is inside the step', async () => {
    expect(await six([cap(0, 'conversation', 2)], world([served(0, 'conversation')]))).toEqual([])
  })

  it('a conversation call right after turn/start (revision 1) is outside any step', async () => {
    expect(await six([cap(0, 'conversation', 1)], world([served(0, 'conversation')]))).toEqual([outsideStep(1, 0)])
  })

  it('a summary call inside the bracket (revision 53, no step open) passes', async () => {
    expect(await six([cap(0, 'compaction', 53)], world([served(0, 'compaction')]))).toEqual([])
  })

  it('a summary call right after compaction/start (revision 52) is inside the bracket; right after compaction/end (57) it is not', async () => {
    expect(await six([cap(0, 'compaction', 52)], world([served(0, 'compaction')]))).toEqual([])
    expect(await six([cap(0, 'compaction', 57)], world([served(0, 'compaction')]))).toEqual([outsideBracket(57, 0)])
  })

  it('a summary call outside both a step and a bracket gets only the summary message', async () => {
    expect(await six([cap(0, 'compaction', 1)], world([served(0, 'compaction')]))).toEqual([outsideBracket(1, 0)])
  })

  it('a summary call inside a step but outside a bracket gets the summary message', async () => {
    expect(await six([cap(0, 'compaction', 2)], world([served(0, 'compaction')]))).toEqual([outsideBracket(2, 0)])
  })

  it('turn/end closes a step that step/end did not close', async () => {
    const events = appendixB()
    foreign(events[24] as AppendixEvent) // the step/end before turn/end #25
    expect(await six([cap(0, 'conversation', 25)], world([served(0, 'conversation')]), events)).toEqual([])
    expect(await six([cap(0, 'conversation', 26)], world([served(0, 'conversation')]), appendixB())).toEqual([outsideStep(26, 0)])
    const again = appendixB()
    foreign(again[24] as AppendixEvent)
    expect(await six([cap(0, 'conversation', 26)], world([served(0, 'conversation')]), again)).toEqual([outsideStep(26, 0)])
  })

  it('a dispatch at revision 67 (the log\'s length) is judged by the last event, reported at the last seq', async () => {
    expect(await six([cap(0, 'conversation', 67)], world([served(0, 'conversation')]))).toEqual([outsideStep(66, 0)])
  })

  it('a dispatch beyond the log\'s end gets its own message at the last seq', async () => {
    expect(await six([cap(0, 'conversation', 68)], world([served(0, 'conversation')]))).toEqual([
      'WORLD-06@66: capture request #0 (world request #0) was dispatched at log revision 68, beyond the log\'s 67 events',
    ])
  })
})

describe('WORLD-06 through the check itself: a dispatch revision before the log', () => {
  /** WORLD-06's `id@seq: message` lines for `events` (types only) and the capture, run through its own hooks. */
  const direct = (types: string[], requests: CapturedRequest[], w: WorldRecord): string[] =>
    runWorldHooks('WORLD-06', types.map((type) => ({ type })), requests, w)

  const inside = ['turn/start', 'step/start', 'compaction/start', 'x/note']

  it('is outside any step and any bracket, whatever the log holds', () => {
    expect(direct(inside, [cap(0, 'conversation', 4)], world([served(0, 'conversation')]))).toEqual([])
    expect(direct(inside, [cap(0, 'conversation', -1)], world([served(0, 'conversation')]))).toEqual([
      'WORLD-06@-1: world request #0 is a conversation call dispatched outside any step',
    ])
    expect(direct(inside, [cap(0, 'compaction', -1)], world([served(0, 'compaction')]))).toEqual([
      'WORLD-06@-1: world request #0 is a summary call dispatched outside any compaction bracket',
    ])
  })
})
