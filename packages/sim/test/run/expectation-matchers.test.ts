/**
 * The issue #15 `expect` matchers, each passing and failing with its message: text/`absent` event patterns and
 * `{ contains }`/`{ matches }` inside `data`, `perPreStep` (the checker's §12.0 windows), `summarized`,
 * `warnings`, `rejections` (by `rejectionKind`) and `requests`. The run-level cases run two catalog sessions
 * (fault-01: a fault-injected overflow recovered by an overflow bracket; pressure-cycles-openai: pressure
 * brackets in pre-step windows) with their `expect` block replaced, through the real runner.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { faultOutcome, parseFaultParams } from '../../src/provider/faults.ts'
import { evaluateMatcherExpectations, rejectionKey } from '../../src/run/expectation-matchers.ts'
import { runScenario } from '../../src/run/run-scenario.ts'
import type { CapturedWireRequest, ParsedRequest, RejectionKind } from '../../src/provider/types.ts'
import type { ExpectationResult } from '../../src/report/types.ts'
import { resolveScenario } from '../../src/scenario/resolve.ts'
import { REPO_ROOT, tempDir } from '../cli/run-sim.ts'

let tmp: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => { tmp = await tempDir() })
afterAll(async () => { await tmp.cleanup() })

/** Runs a catalog scenario with its `expect` block replaced by `expectYaml`; returns the matcher results (invariants left out). */
async function runWith(catalogFile: string, slug: string, expectYaml: string): Promise<Array<[string, boolean, string, string]>> {
  const text = await readFile(join(REPO_ROOT, catalogFile), 'utf8')
  const cut = text.indexOf('\nexpect:')
  const file = join(tmp.dir, `${slug}.yaml`)
  await writeFile(file, `${cut < 0 ? text : text.slice(0, cut)}\nexpect:\n${expectYaml}`)
  const report = await runScenario(file, { outDir: join(tmp.dir, `${slug}-out`), cwd: tmp.dir })
  if (report.status === 'error') throw new Error(report.error)
  return report.expectations.filter((e) => e.name !== 'invariants').map((e) => [e.name, e.passed, e.expected, e.actual])
}

describe('matchers over a run with an overflow bracket (fault-01)', () => {
  it('pass: text, absent, data regexes, summarized nodes, fault rejections, the stable system head', async () => {
    const results = await runWith('scenarios/faults/fault-01-overflow-thrown.yaml', 'f01-pass', `
  events:
  - {type: user/message, text: {contains: bad key}}
  - {type: user/message, text: {matches: '/fixture and SHOW/i'}}
  - {type: llm/retry, absent: true}
  - {type: compaction/summary, data: {model: {matches: '/^mock-/'}, summary: [{text: {contains: bad key}}]}}
  perPreStep: {brackets: 0, summaryCalls: 0}
  summarized:
  - first: {type: user/message, text: {contains: bad key}}
    last: {type: assistant/message}
  - {bracket: any, nodes: {min: 2}}
  rejections: {fault: 1, window: 0, pairing: 0, total: 1}
  requests:
  - {every: true, purpose: conversation, message: 0, role: system, equals: first}
  - {purpose: compaction, contains: bad key}
  - {purpose: conversation, message: -1, role: user, matches: '/diff/'}
  - {purpose: session-title, absent: true}
`)
    expect(results).toMatchInlineSnapshot(`
      [
        [
          "events[0]",
          true,
          "user/message with text contains "bad key"",
          "seq 3",
        ],
        [
          "events[1]",
          true,
          "user/message with text matches /fixture and SHOW/i",
          "seq 41",
        ],
        [
          "events[2]",
          true,
          "no llm/retry",
          "none in the log",
        ],
        [
          "events[3]",
          true,
          "compaction/summary {"model":{"matches":"/^mock-/"},"summary":[{"text":{"contains":"bad key"}}]}",
          "seq 44",
        ],
        [
          "perPreStep.brackets",
          true,
          "0 brackets in each pre-step window",
          "at most 0 in each of 5 pre-step windows",
        ],
        [
          "perPreStep.summaryCalls",
          true,
          "0 summaryCalls in each pre-step window",
          "at most 0 in each of 5 pre-step windows",
        ],
        [
          "summarized[0]",
          true,
          "successful bracket 1 summarized first: user/message text contains "bad key", last: assistant/message",
          "the bracket summarized at seq 44",
        ],
        [
          "summarized[1]",
          true,
          "some successful bracket summarized nodes ≥ 2",
          "the bracket summarized at seq 44",
        ],
        [
          "rejections.window",
          true,
          "0",
          "0",
        ],
        [
          "rejections.pairing",
          true,
          "0",
          "0",
        ],
        [
          "rejections.fault",
          true,
          "1",
          "1 (requests #2 CONTEXT_WINDOW_EXCEEDED)",
        ],
        [
          "rejections.total",
          true,
          "1",
          "1 (requests #2 CONTEXT_WINDOW_EXCEEDED)",
        ],
        [
          "requests[0]",
          true,
          "every conversation request whose message 0 has role system and is identical to the first request's",
          "all 4 conversation requests pass",
        ],
        [
          "requests[1]",
          true,
          "a compaction request whose text contains "bad key"",
          "#3 passes",
        ],
        [
          "requests[2]",
          true,
          "a conversation request whose message -1 has role user and text matches /diff/",
          "#2 passes",
        ],
        [
          "requests[3]",
          true,
          "no session-title request",
          "no session-title requests",
        ],
      ]
    `)
  }, 120_000)

  it('fail: each message names the expectation, what was expected and what was seen, with seqs or request indexes', async () => {
    const results = await runWith('scenarios/faults/fault-01-overflow-thrown.yaml', 'f01-fail', `
  events:
  - {type: tool/result, text: {contains: loadConfig}, absent: true}
  - {type: user/message, text: {contains: no such words}}
  - {type: compaction/summary, data: {model: {matches: '/^gpt/'}}}
  summarized:
  - {first: {type: tool/result}, last: {text: {contains: quux}}}
  - {shadowedSeqs: [1]}
  rejections: {window: 1, fault: 0}
  requests:
  - {every: true, message: 0, role: user}
  - {purpose: compaction, absent: true}
  - {purpose: conversation, message: 9, contains: x}
`)
    expect(results).toMatchInlineSnapshot(`
      [
        [
          "events[0]",
          false,
          "no tool/result with text contains "loadConfig"",
          "seq 17 matches",
        ],
        [
          "events[1]",
          false,
          "user/message with text contains "no such words"",
          "no matching event in the log",
        ],
        [
          "events[2]",
          false,
          "compaction/summary {"model":{"matches":"/^gpt/"}}",
          "not reached (an earlier pattern did not match)",
        ],
        [
          "summarized[0]",
          false,
          "successful bracket 1 summarized first: tool/result, last: any event text contains "quux"",
          "the bracket summarized at seq 44 has first seq 3 user/message "The config loader rejects repo.config.yaml with a 'bad key' error. Find out why.", last seq 36 assistant/message "The loader compares the raw scalar text of each key with CONFIG_KEYS. When a …"",
        ],
        [
          "summarized[1]",
          false,
          "successful bracket 2 summarized shadowedSeqs [1]",
          "only 1 successful bracket",
        ],
        [
          "rejections.window",
          false,
          "1",
          "0; other rejections: #2 fault",
        ],
        [
          "rejections.fault",
          false,
          "0",
          "1 (requests #2 CONTEXT_WINDOW_EXCEEDED)",
        ],
        [
          "requests[0]",
          false,
          "every request whose message 0 has role user",
          "5 of 5 requests fail: #0's message 0 has role system; #1's message 0 has role system; #2's message 0 has role system; …and 2 more",
        ],
        [
          "requests[1]",
          false,
          "no compaction request",
          "1 of 1 compaction request passes: #3",
        ],
        [
          "requests[2]",
          false,
          "a conversation request whose message 9 text contains "x"",
          "none of 4 conversation requests passes: #0 has 2 messages, no message 9; #1 has 4 messages, no message 9; #2 has 6 messages, no message 9; …and 1 more",
        ],
      ]
    `)
  }, 120_000)
})

describe('perPreStep, summarized and warnings over pressure brackets (pressure-cycles-openai)', () => {
  it('counts per pre-step window: passes within the bound, names each window over it with its seqs', async () => {
    const results = await runWith('scenarios/differential/pressure-cycles-openai.yaml', 'pc', `
  perPreStep: {brackets: {max: 1}, summaryCalls: {max: 1}, prunes: 0}
  summarized:
  - {bracket: any, first: {type: user/message, text: {matches: '/^Automatic checkpoint/'}}}
  warnings:
  - {contains: not smaller}
  - {matches: '/budget exhausted/i', absent: true}
  - {contains: not smaller, absent: true}
  - {matches: '/^never$/'}
`)
    const windows = await runWith('scenarios/differential/pressure-cycles-openai.yaml', 'pc-fail', `
  perPreStep: {brackets: 0, failedBrackets: {min: 1}}
`)
    expect([...results, ...windows]).toMatchInlineSnapshot(`
      [
        [
          "perPreStep.brackets",
          true,
          "0…1 brackets in each pre-step window",
          "at most 1 in each of 15 pre-step windows",
        ],
        [
          "perPreStep.prunes",
          true,
          "0 prunes in each pre-step window",
          "at most 0 in each of 15 pre-step windows",
        ],
        [
          "perPreStep.summaryCalls",
          true,
          "0…1 summaryCalls in each pre-step window",
          "at most 1 in each of 15 pre-step windows",
        ],
        [
          "summarized[0]",
          true,
          "some successful bracket summarized first: user/message text matches /^Automatic checkpoint/",
          "the bracket summarized at seq 107",
        ],
        [
          "warnings[0]",
          true,
          "a warning that contains "not smaller"",
          "warning 1: "step compaction failed: summary is not smaller than the shadowed content (145…"",
        ],
        [
          "warnings[1]",
          true,
          "no warning that matches /budget exhausted/i",
          "none of 5 warnings matches",
        ],
        [
          "warnings[2]",
          false,
          "no warning that contains "not smaller"",
          "warning 1: "step compaction failed: summary is not smaller than the shadowed content (145…"; warning 2: "step compaction failed: summary is not smaller than the shadowed content (145…"; warning 3: "step compaction failed: summary is not smaller than the shadowed content (145…"",
        ],
        [
          "warnings[3]",
          false,
          "a warning that matches /^never$/",
          "none of 5 warnings matches: warning 1: "step compaction failed: summary is not smaller than the shadowed content (145…"; warning 2: "step compaction failed: summary is not smaller than the shadowed content (145…"; warning 3: "step compaction failed: summary is not smaller than the shadowed content (145…"; …and 2 more",
        ],
        [
          "perPreStep.brackets",
          false,
          "0 brackets in each pre-step window",
          "the window opened at seq 48 (turn 3) has 1 (at seq 49); the window opened at seq 62 (turn 3) has 1 (at seq 63); the window opened at seq 75 (turn 4) has 1 (at seq 76); …and 3 more",
        ],
        [
          "perPreStep.failedBrackets",
          false,
          "≥ 1 failedBrackets in each pre-step window",
          "the window opened at seq 0 (turn 1) has 0; the window opened at seq 21 (turn 1) has 0; the window opened at seq 34 (turn 1) has 0; …and 9 more",
        ],
      ]
    `)
  }, 120_000)
})

describe('rejections by kind (synthetic captures)', () => {
  const capture = (index: number, outcome: CapturedWireRequest['outcome'], rejectionKind?: RejectionKind): CapturedWireRequest => ({
    index, time: 0, wire: 'openai', method: 'POST', path: '/v1/chat/completions', headers: {}, purpose: 'conversation', model: 'm',
    messages: [], body: {}, outcome, ...(rejectionKind === undefined ? {} : { rejectionKind }),
  })
  const wire = [
    capture(0, 'reply'), capture(1, 'reject', 'window'), capture(2, 'reject', 'pairing'), capture(3, 'reject', 'pairing'),
    capture(4, 'reject', 'images'), capture(5, 'reject', 'max-output'), capture(6, 'reject'), capture(7, 'reset'),
  ]
  const evaluate = (yaml: Record<string, unknown>): ExpectationResult[] => {
    const scenario = resolveScenario({
      name: 'r', seed: 1, provider: { wire: 'openai', model: 'm' },
      transcript: { inline: { turns: [{ user: 'hi', steps: [{ reply: 'hello' }] }] } }, expect: { rejections: yaml },
    }, { file: 'r.yaml' })
    return evaluateMatcherExpectations({ expect: scenario.expect, events: [], dialect: 'seed', warnings: [], wire, requests: [] })
  }

  it('counts each kind from rejectionKind (a reset is no rejection; a capture without a kind is unclassified)', () => {
    const results = evaluate({ window: 1, pairing: { min: 2 }, images: 1, maxOutput: 1, fault: 0, unclassified: 1, total: 6 })
    expect(results.map((r) => [r.name, r.passed, r.actual])).toMatchInlineSnapshot(`
      [
        [
          "rejections.window",
          true,
          "1 (requests #1)",
        ],
        [
          "rejections.pairing",
          true,
          "2 (requests #2; #3)",
        ],
        [
          "rejections.images",
          true,
          "1 (requests #4)",
        ],
        [
          "rejections.maxOutput",
          true,
          "1 (requests #5)",
        ],
        [
          "rejections.fault",
          true,
          "0",
        ],
        [
          "rejections.unclassified",
          true,
          "1 (requests #6)",
        ],
        [
          "rejections.total",
          true,
          "6 (requests #1; #2; #3; …and 3 more)",
        ],
      ]
    `)
  })

  it('fails with the count seen and the other kinds that were rejected', () => {
    const results = evaluate({ pairing: 0, fault: { min: 1 } })
    expect(results.map((r) => `${r.name}: expected ${r.expected}, got ${r.actual}`)).toMatchInlineSnapshot(`
      [
        "rejections.pairing: expected 0, got 2 (requests #2; #3); other rejections: #1 window; #4 images; #5 maxOutput; …and 1 more",
        "rejections.fault: expected ≥ 1, got 0; other rejections: #1 window; #2 pairing; #3 pairing; …and 3 more",
      ]
    `)
    expect([rejectionKey(undefined), rejectionKey('max-output'), rejectionKey('fault')]).toEqual(['unclassified', 'maxOutput', 'fault'])
  })
})

describe('rejectionKind of fault-injected outcomes', () => {
  const request: ParsedRequest = {
    index: 0, wire: 'openai', purpose: 'conversation', model: 'm', modelInfo: undefined, messages: [], stream: true, includeUsage: true,
  }
  it('a rejection a fault injects is kind fault; a reset, a mid-stream cut or a reply variant carries no kind', () => {
    const kinds = [
      { code: 'SERVER' }, { code: 'CONTEXT_WINDOW_EXCEEDED' }, { code: 'RATE_LIMIT' }, { code: 'TRANSPORT' },
      { code: 'SERVER', delivery: 'in-band' }, { reply: 'empty' },
    ].map((params) => {
      const outcome = faultOutcome(parseFaultParams(params), request, undefined, 10)
      return [outcome.kind, outcome.rejectionKind ?? null]
    })
    expect(kinds).toEqual([['reject', 'fault'], ['reject', 'fault'], ['reject', 'fault'], ['reset', null], ['interrupt', null], ['reply', null]])
  })
})
