/**
 * Provider tokenizer benchmark (tinybench 6, run by `bench/run.ts`; issue #15): the provider side of one
 * 200-turn session — every chat request the subject would send, as OpenAI wire JSON, handled by the mock
 * provider (`MockProvider.handle`: parse, §9 cache estimate, the route's tokenizer count, reply) — with the
 * route counting by `heuristic` and by `o200k_base`, measured in the same run. Because the BPE tokenizer
 * caches per message, a request costs one key per message plus BPE work for the new ones, so the o200k_base
 * run must cost at most `TOKENIZER_RATIO_MAX` × the heuristic run. A fresh provider per sample (a cold
 * message cache, as at the start of a real run); the BPE table is loaded once before timing (the one-off
 * load is reported separately). The tokenizer-only ratio (the counts alone, without the rest of the
 * provider's work) is printed for information.
 *
 * The session (seeded): a system prompt, then per turn a user message, an assistant tool call, its result
 * (0.3–3 KB of code-like text) and an assistant answer; a request per step. When the heuristic prompt passes
 * 80% of a 64k window, the oldest 60% of the history (after the system prompt) becomes one summary message,
 * as a compacting subject would do, so prompts stay bounded like a real session's.
 */
import { Bench } from 'tinybench'
import { ENFORCE_OFF, NO_IMAGE_LIMITS } from '../packages/sim/src/provider/enforce.ts'
import { MockProvider } from '../packages/sim/src/provider/mock-provider.ts'
import type { MockRoute } from '../packages/sim/src/provider/route.ts'
import { BUILTIN_SUMMARIZER } from '../packages/sim/src/provider/summarizers.ts'
import { createTokenizer, type TokenizerName } from '../packages/sim/src/provider/tokenizers.ts'
import type { DecodedMessage, ReplyPlan } from '../packages/sim/src/provider/types.ts'
import { parseChatRequest } from '../packages/sim/src/provider/wire-request.ts'
import { medianMs, samples } from './fold.bench.ts'
import { settleYoungGeneration } from './gc.ts'
import { mulberry32 } from './synthetic-log.ts'

/** Bound of the o200k_base / heuristic ratio of the provider's time over the session (issue #15). */
export const TOKENIZER_RATIO_MAX = 2
/** Turns of the benchmarked session. */
export const SESSION_TURNS = 200

const MODEL = 'bench-model'
const WINDOW_TOKENS = 64_000
const URL_ = 'http://bench.mock.sim.test/v1/chat/completions'
const WORDS = ['const', 'value', 'return', 'function', 'await', 'import', 'export', 'if', 'else', 'for', 'let', 'type', 'string', 'number',
  'the', 'file', 'config', 'test', 'error', 'result', 'index', 'map', 'filter', 'async', 'promise', '=>', '{', '}', '(', ')', ';', '\n']

/** One row: the median time of the whole session per tokenizer, and the ratios. */
export interface TokenizerBenchResult {
  turns: number
  requests: number
  /** Prompt tokens of the last request by each tokenizer (a sanity figure). */
  lastPrompt: { heuristic: number; o200k: number }
  heuristicMs: number
  o200kMs: number
  ratio: number
  /** Tokenizer counts alone (no parsing, estimate or reply): heuristic and o200k_base medians, and their ratio. */
  countOnly: { heuristicMs: number; o200kMs: number; ratio: number }
  /** One-off load of the o200k_base table, ms (wall clock, once). */
  loadMs: number
  samples: number
}

/** The session's request bodies (OpenAI wire JSON), in order (module doc). */
export function sessionBodies(seed: number, turns = SESSION_TURNS): string[] {
  const rand = mulberry32(seed)
  const words = (n: number): string => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)] ?? '').join(' ')
  const heuristic = createTokenizer('heuristic')
  const system = { role: 'system', content: `You are a coding agent. ${words(300)}` }
  let history: Array<Record<string, unknown>> = []
  const bodies: string[] = []
  const tools = [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }]
  const send = (): void => {
    const body = { model: MODEL, stream: false, messages: [system, ...history], tools }
    const text = JSON.stringify(body)
    bodies.push(text)
    const decoded = parseChatRequest('openai', text, new Headers())
    if (heuristic.promptTokens(decoded.messages, decoded.tools, undefined) > 0.8 * WINDOW_TOKENS) {
      const cut = Math.ceil(history.length * 0.6)
      // Keep tool pairs whole: never start the kept part with a tool result.
      let at = cut
      while (at < history.length && history[at]?.['role'] === 'tool') at++
      history = [{ role: 'user', content: `Summary of the earlier conversation: ${words(250)}` }, ...history.slice(at)]
    }
  }
  for (let turn = 1; turn <= turns; turn++) {
    history.push({ role: 'user', content: `Turn ${turn}: ${words(20 + Math.floor(rand() * 60))}` })
    const id = `call_${turn}`
    history.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/f${turn}.ts` }) } }] })
    send()
    history.push({ role: 'tool', tool_call_id: id, content: words(60 + Math.floor(rand() * 500)) })
    history.push({ role: 'assistant', content: words(20 + Math.floor(rand() * 80)) })
    send()
  }
  return bodies
}

/** Runs the benchmark (module doc). */
export async function runTokenizerBench(options: { seed: number }): Promise<TokenizerBenchResult> {
  const bodies = sessionBodies(options.seed)
  const loadStarted = performance.now()
  createTokenizer('o200k_base').textTokens('warm up')
  const loadMs = performance.now() - loadStarted
  const plan: ReplyPlan = { next: () => ({ kind: 'reply', reply: { blocks: [{ type: 'text', text: 'ok' }] } }) }
  const provider = (tokenizer: TokenizerName): MockProvider => new MockProvider({
    wire: 'openai', plan, clock: { now: () => 0 }, routes: [route(tokenizer)],
  })
  let last = { heuristic: 0, o200k: 0 }
  const session = async (p: MockProvider): Promise<number> => {
    for (const body of bodies) {
      const response = await p.handle(new Request(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
      if (response.status !== 200) throw new Error(`mock answered ${response.status}: ${await response.text()}`)
      await response.arrayBuffer()
    }
    return p.captured.at(-1)?.providerPromptTokens ?? 0
  }
  const bench = new Bench({ iterations: 3, time: 0, warmupIterations: 1, warmupTime: 0, throws: true })
  bench.add('session heuristic', async () => { last.heuristic = await session(provider('heuristic')) }, { beforeEach: settleYoungGeneration })
  bench.add('session o200k_base', async () => { last.o200k = await session(provider('o200k_base')) }, { beforeEach: settleYoungGeneration })
  // Counts alone over the decoded requests (decoding outside the timed part).
  const decoded = bodies.map((b) => parseChatRequest('openai', b, new Headers()))
  const counts = (name: TokenizerName): void => {
    const t = createTokenizer(name)
    for (const d of decoded) t.promptTokens(d.messages as DecodedMessage[], d.tools, undefined)
  }
  bench.add('counts heuristic', () => counts('heuristic'), { beforeEach: settleYoungGeneration })
  bench.add('counts o200k_base', () => counts('o200k_base'), { beforeEach: settleYoungGeneration })
  await bench.run()
  const heuristicMs = medianMs(bench, 'session heuristic')
  const o200kMs = medianMs(bench, 'session o200k_base')
  const countHeuristic = medianMs(bench, 'counts heuristic')
  const countO200k = medianMs(bench, 'counts o200k_base')
  return {
    turns: SESSION_TURNS, requests: bodies.length, lastPrompt: last, heuristicMs, o200kMs, ratio: o200kMs / heuristicMs,
    countOnly: { heuristicMs: countHeuristic, o200kMs: countO200k, ratio: countO200k / countHeuristic }, loadMs, samples: samples(bench),
  }
}

/** The result as text lines, with the verdict of the bound. */
export function formatTokenizerResult(r: TokenizerBenchResult): string {
  const verdict = r.ratio <= TOKENIZER_RATIO_MAX ? 'ok' : 'OVER BOUND'
  return [
    `${r.turns} turns, ${r.requests} requests (last prompt: heuristic ${r.lastPrompt.heuristic}, o200k_base ${r.lastPrompt.o200k} tokens)`,
    `  mock provider, whole session: heuristic ${r.heuristicMs.toFixed(1)} ms, o200k_base ${r.o200kMs.toFixed(1)} ms (p50, ${r.samples} samples)`,
    `  counts only (no digests: keys built from the JSON): heuristic ${r.countOnly.heuristicMs.toFixed(1)} ms, o200k_base ${r.countOnly.o200kMs.toFixed(1)} ms `
      + `(${r.countOnly.ratio.toFixed(2)}x, informational); o200k_base table load ${r.loadMs.toFixed(0)} ms once`,
    `tokenizer ratio o200k_base / heuristic: ${r.ratio.toFixed(2)}x (bound ${TOKENIZER_RATIO_MAX}x) ${verdict}`,
  ].join('\n')
}

function route(tokenizer: TokenizerName): MockRoute {
  return {
    model: MODEL, wire: 'openai', contextWindow: WINDOW_TOKENS * 2, maxOutputTokens: null, imageTokens: null, tokenizer,
    enforce: ENFORCE_OFF, imageLimits: NO_IMAGE_LIMITS, usage: 'reported', summarizer: BUILTIN_SUMMARIZER,
  }
}
