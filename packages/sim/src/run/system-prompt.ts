/**
 * The system prompt the reference subject renders at each step open (§1.4.5: "called once per step open"). A
 * scenario's transcript prompt is fixed unless `volatileSystemPrompt` is set (`inline` or `generate`, issue #19
 * HARD-7): then an `<environment>` block follows it, like the clock, working directory and git status a real
 * harness renders into its prompt. The block changes at every step open (`every: step`) or once per turn
 * (`every: turn`) and is a pure function of the run seed, the turn and the step, so runs stay reproducible.
 */
import type { ResolvedTranscriptSource } from '../scenario/resolve.ts'
import type { VolatileSystemPromptConfig } from '../scenario/types.ts'

/** The volatility of a resolved transcript source, or null when its prompt is fixed. */
export function volatileSystemPromptOf(source: ResolvedTranscriptSource): VolatileSystemPromptConfig | null {
  if (source.kind !== 'inline' && source.kind !== 'generate') return null
  return source.volatileSystemPrompt ?? null
}

/** 2026-01-05T09:00:00Z, the environment block's first clock reading before the seed's offset. */
const CLOCK_BASE_MS = Date.UTC(2026, 0, 5, 9, 0, 0)

/**
 * The `<environment>` block at `turn`/`step` (1-based; 0 before any step). The clock moves 10 min per turn and 37 s
 * per step; 600 and 37 are coprime, so two steps of fewer than 600 steps apart never render the same clock.
 */
export function environmentBlock(seed: number, turn: number, step: number): string {
  const s = Math.abs(Math.trunc(seed))
  const clock = new Date(CLOCK_BASE_MS + (s % 997) * 60_000 + turn * 600_000 + step * 37_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
  const modified = (s + turn * 5 + step * 3) % 9
  const untracked = (s + turn) % 4
  return [
    '<environment>',
    `Date and time: ${clock}`,
    'Working directory: /repo',
    `Git status: branch main, ${modified} modified, ${untracked} untracked`,
    '</environment>',
  ].join('\n')
}

/**
 * The `systemPrompt` callback of the agent: `base` itself when `volatile` is null (the fixed prompt, byte-identical
 * to before), else `base` and the environment block of the step `openStep()` names (the step just opened).
 */
export function systemPromptRenderer(
  base: string, volatile: VolatileSystemPromptConfig | null, seed: number,
  openStep: () => { readonly turn: number; readonly step: number } | null,
): () => string {
  if (volatile === null) return () => base
  return () => {
    const at = openStep()
    const turn = at?.turn ?? 0
    const step = volatile.every === 'turn' ? 1 : at?.step ?? 0
    const block = environmentBlock(seed, turn, step)
    return base === '' ? block : `${base}\n\n${block}`
  }
}
