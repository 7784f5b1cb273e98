/**
 * The mock's deterministic summarizer (§8.3): for a compaction request it writes a checkpoint with exactly
 * the eight section headings of `COMPACTION_INSTRUCTION`, in order, filled from the region by fixed rules,
 * and capped so that the framed checkpoint (§8.5) prices at most `ratio` × the region's `P_fixed` (§7.5).
 *
 * Fill rules (bullets truncated to `bulletChars`, sections without bullets say `(none)`):
 * 1 Primary Request and Intent — the first line of every user text, quoted; 2 Key Technical Concepts —
 * the tool names called; 3 Files and Code — file paths seen anywhere, first appearance first;
 * 4 Errors and Fixes — tool-result lines that mention an error; 5 Pending Jobs — the latest user request;
 * 6 Current Work — the last tool call; 7 Next Step — the first line of the last assistant text;
 * 8 Critical Context — the region's shape. Bullets of sections 1–4 and 8 of an earlier checkpoint in the
 * region are merged first (still-true facts survive repeated compaction; 5–7 are stale and dropped).
 * Bullets are taken round-robin across sections while they fit the budget.
 *
 * Smaller than its source: the framed checkpoint prices ≤ `floor(ratio × S)` < S whenever the region is
 * large enough to hold the empty skeleton at that ratio (`S ≥ minimumSourceTokens(ratio)`, ≈ 240 tokens at
 * 0.5). Below that no eight-section checkpoint can be smaller; the bare skeleton is returned and the
 * engine's shrink rule rejects it (FAULT-27), as it would for a real model.
 *
 * `forgetPaths` (the `forgets-paths` preset, issue #20): section 3 stays `(none)` and every file path
 * (`PATH_RE`) in any other bullet becomes `[path]` — the same checkpoint, deliberately blind to artifacts.
 */
import {
  blocksPrice,
  CHECKPOINT_CLOSE_TAG,
  CHECKPOINT_OPEN_TAG,
  CHECKPOINT_PREAMBLE,
  COMPACTION_INSTRUCTION,
  ROLE_OVERHEAD,
  type ContentBlock,
} from '@compaction-sim/core'
import type { DecodedMessage } from './types.ts'

/** The eight section headings of `COMPACTION_INSTRUCTION`, in order (each starts with `## `). */
export const CHECKPOINT_HEADINGS: readonly string[] = Object.freeze(COMPACTION_INSTRUCTION.split('\n').filter((l) => l.startsWith('## ')))

/** Options of the summarizer. */
export interface SummaryOptions {
  /** Framed checkpoint ≤ ratio × region price; 0 < ratio < 1. Default 0.5. */
  ratio?: number
  /** Longest bullet text in UTF-16 units. Default 160. */
  bulletChars?: number
  /** Drop every file path (module doc); default false. */
  forgetPaths?: boolean
}

/** A summary with the figures that justify it. */
export interface DeterministicSummary {
  text: string
  /** `P_fixed` of the region (the shadowed content's price, §7.5). */
  sourceTokens: number
  /** `P_fixed` of the framed checkpoint (§8.5). */
  framedTokens: number
}

const PATH_RE = /(?:^|[\s"'`(=:[])((?:\.{0,2}\/)?(?:[\w@.-]+\/)+[\w@.-]+\.[A-Za-z0-9]{1,8})(?=$|[\s"'`),:;\]])/g
const ERROR_RE = /\b(error|exception|failed|failure|traceback|cannot|not found)\b/i
const MERGED_SECTIONS: ReadonlySet<number> = new Set([0, 1, 2, 3, 7])

/** `P_fixed` of `summary` framed as the checkpoint §8.5 frames it (one text block between preamble and close tag). */
export function framedPrice(summary: string): number {
  return (
    blocksPrice([
      { type: 'text', text: `${CHECKPOINT_PREAMBLE}\n\n${CHECKPOINT_OPEN_TAG}` },
      { type: 'text', text: summary },
      { type: 'text', text: CHECKPOINT_CLOSE_TAG },
    ]) + ROLE_OVERHEAD
  )
}

/** `P_fixed` of a region (§2.2, §7.5): Σ block prices + the role overhead per message. */
export function regionPrice(region: readonly DecodedMessage[]): number {
  let sum = 0
  for (const m of region) sum += blocksPrice(m.content) + ROLE_OVERHEAD
  return sum
}

function render(sections: readonly string[][]): string {
  return CHECKPOINT_HEADINGS.map((h, i) => {
    const bullets = sections[i] ?? []
    return `${h}\n${bullets.length === 0 ? '(none)' : bullets.map((b) => `- ${b}`).join('\n')}`
  }).join('\n\n')
}

/** The smallest region price for which the empty skeleton fits the budget at `ratio`. */
export function minimumSourceTokens(ratio = 0.5): number {
  return Math.ceil(framedPrice(render([])) / ratio)
}

/**
 * The opening sentence of the released 0.1.0-rc.8 engine's compaction instruction (its text differs from the seed's,
 * §14.1 "Summarizer request"): the `dsh` subject's summary calls end with it, and it is not part of the region.
 */
export const RC8_INSTRUCTION_OPENING = 'You are now acting as a compaction engine for this AI coding assistant.'

/** True when `block` is the instruction text (the seed's `COMPACTION_INSTRUCTION`, or the rc.8 instruction). */
function isInstructionText(block: ContentBlock | undefined): boolean {
  if (block?.type !== 'text') return false
  const text = String(block['text'])
  return text === COMPACTION_INSTRUCTION || text.startsWith(RC8_INSTRUCTION_OPENING)
}

/**
 * The region of a compaction request (§8.2): without the system head at position 0 and without the final
 * instruction — a last user message whose only block is the instruction text, or, on a wire that merges
 * consecutive user turns (anthropic: the instruction after a region that ends with a user message), the
 * instruction as the last block of the last user message, which is then kept without it.
 */
export function regionOf(messages: readonly DecodedMessage[]): DecodedMessage[] {
  const start = messages[0]?.role === 'system' ? 1 : 0
  const region = messages.slice(start)
  const last = region.at(-1)
  if (last === undefined || last.role !== 'user' || !isInstructionText(last.content.at(-1))) return region
  if (last.content.length === 1) return region.slice(0, -1)
  return [...region.slice(0, -1), { ...last, content: last.content.slice(0, -1) }]
}

function firstLine(text: string): string {
  for (const line of text.split('\n')) {
    const t = line.trim()
    if (t !== '') return t
  }
  return ''
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(1, max - 1))}…`
}

function texts(blocks: readonly ContentBlock[]): string[] {
  const out: string[] = []
  for (const b of blocks) {
    if (b.type === 'text' || b.type === 'reasoning') out.push(String(b['text']))
    else if (b.type === 'tool-call') out.push(String(b['arguments']))
    else if (b.type === 'tool-result') out.push(...texts(b['content'] as ContentBlock[]))
  }
  return out
}

/** Bullets of an earlier checkpoint's sections (by heading index), parsed from its summary text. */
function priorBullets(summary: string, into: string[][]): void {
  let section = -1
  for (const line of summary.split('\n')) {
    const heading = CHECKPOINT_HEADINGS.indexOf(line.trim())
    if (heading !== -1) {
      section = heading
      continue
    }
    if (section !== -1 && MERGED_SECTIONS.has(section) && line.startsWith('- ')) into[section]?.push(line.slice(2))
  }
}

/**
 * A checkpoint by its framing: the seed preamble, or (rc.8 framing, §14.1 "Checkpoint framing": structure only) a
 * first block ending with `\n\n<open tag>` and a last block equal to the close tag.
 */
function isCheckpoint(m: DecodedMessage): boolean {
  const first = m.content[0]
  const last = m.content.at(-1)
  if (m.role !== 'user' || first?.type !== 'text') return false
  if (String(first['text']).startsWith(CHECKPOINT_PREAMBLE)) return true
  return m.content.length >= 3 && String(first['text']).endsWith(`\n\n${CHECKPOINT_OPEN_TAG}`)
    && last?.type === 'text' && last['text'] === CHECKPOINT_CLOSE_TAG
}

/** `text` with every file path replaced by `[path]`. */
function withoutPaths(text: string): string {
  return text.replace(PATH_RE, (whole: string, path: string) => `${whole.slice(0, whole.length - path.length)}[path]`)
}

function candidates(region: readonly DecodedMessage[], bulletChars: number, forgetPaths: boolean): string[][] {
  const sections: string[][] = CHECKPOINT_HEADINGS.map(() => [])
  const push = (i: number, text: string): void => {
    if (forgetPaths && i === 2) return
    const bullet = clip(forgetPaths ? withoutPaths(text) : text, bulletChars)
    const list = sections[i]
    if (bullet !== '' && list !== undefined && !list.includes(bullet)) list.push(bullet)
  }
  const tools: string[] = []
  const paths: string[] = []
  let users = 0
  let assistants = 0
  let results = 0
  let latestUser = ''
  let lastCall = ''
  let lastAssistant = ''
  for (const m of region) {
    if (isCheckpoint(m)) {
      const prior: string[][] = CHECKPOINT_HEADINGS.map(() => [])
      priorBullets(
        m.content
          .slice(1, -1)
          .map((b) => (b.type === 'text' ? String(b['text']) : ''))
          .join('\n'),
        prior,
      )
      prior.forEach((bullets, i) => bullets.forEach((b) => push(i, b)))
      continue
    }
    for (const text of texts(m.content)) {
      for (const match of text.matchAll(PATH_RE)) if (match[1] !== undefined && !paths.includes(match[1])) paths.push(match[1])
    }
    if (m.role === 'assistant') {
      assistants++
      for (const b of m.content) {
        if (b.type === 'tool-call') {
          const name = String(b['name'])
          if (!tools.includes(name)) tools.push(name)
          lastCall = `${name}(${String(b['arguments'])})`
        } else if (b.type === 'text' && firstLine(String(b['text'])) !== '') {
          lastAssistant = firstLine(String(b['text']))
        }
      }
      continue
    }
    if (m.content.some((b) => b.type === 'tool-result')) {
      results++
      for (const text of texts(m.content)) for (const line of text.split('\n')) if (ERROR_RE.test(line)) push(3, line)
      continue
    }
    users++
    for (const b of m.content) {
      if (b.type !== 'text') continue
      const line = firstLine(String(b['text']))
      if (line === '') continue
      push(0, `"${line}"`)
      latestUser = line
    }
  }
  if (tools.length > 0) push(1, `tools used: ${tools.join(', ')}`)
  for (const p of paths) push(2, p)
  if (latestUser !== '') push(4, `latest request: "${latestUser}"`)
  if (lastCall !== '') push(5, `last tool call: ${lastCall}`)
  if (lastAssistant !== '') push(6, lastAssistant)
  push(7, `condensed ${region.length} messages: ${users} user, ${assistants} assistant, ${results} tool results`)
  return sections
}

/**
 * Summarizes `region` (already without system head and instruction) per the module rules. Pure and
 * deterministic. Throws `RangeError` for a ratio outside (0, 1).
 */
export function summarizeRegion(region: readonly DecodedMessage[], options: SummaryOptions = {}): DeterministicSummary {
  const ratio = options.ratio ?? 0.5
  if (!(ratio > 0 && ratio < 1)) throw new RangeError(`ratio must be in (0, 1), got ${ratio}`)
  const bulletChars = options.bulletChars ?? 160
  const sourceTokens = regionPrice(region)
  const budgetTokens = Math.floor(sourceTokens * ratio)
  const pool = candidates(region, bulletChars, options.forgetPaths === true)
  const chosen: string[][] = CHECKPOINT_HEADINGS.map(() => [])
  let text = render(chosen)
  const depth = Math.max(0, ...pool.map((p) => p.length))
  for (let round = 0; round < depth; round++) {
    for (let s = 0; s < pool.length; s++) {
      const bullet = pool[s]?.[round]
      const target = chosen[s]
      if (bullet === undefined || target === undefined) continue
      target.push(bullet)
      const next = render(chosen)
      if (framedPrice(next) <= budgetTokens) text = next
      else target.pop()
    }
  }
  return { text, sourceTokens, framedTokens: framedPrice(text) }
}

/** The checkpoint text for a compaction request's messages (region per `regionOf`). */
export function deterministicSummary(request: { messages: readonly DecodedMessage[] }, options: SummaryOptions = {}): string {
  return summarizeRegion(regionOf(request.messages), options).text
}
