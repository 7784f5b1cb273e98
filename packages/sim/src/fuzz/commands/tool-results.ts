/**
 * Command: the tool batch returns — each result normal, huge (pruner and overflow food), with images, or
 * errored (§1.4.9). The agent then runs the next step's pre-step (queued explicit regions first) and parks.
 */
import type { AsyncCommand } from 'fast-check'
import type { ToolOutcome } from '@compaction-sim/core'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { filler, images, settleModel } from './support.ts'

/** The kind of one tool result. */
export type ResultKind = 'normal' | 'huge' | 'images' | 'error'

/** Answers every pending call; `kinds[i]` (cycled) shapes call i's result. */
export class ToolResultsCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly kinds: readonly ResultKind[], readonly hugeSize = 12_000) {}
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'awaiting-results' }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const outcomes = d.pendingCalls.map((id, i): ToolOutcome => {
      const kind = this.kinds[i % Math.max(1, this.kinds.length)] ?? 'normal'
      switch (kind) {
        case 'normal': return { content: [{ type: 'text', text: filler(200, `out-${id}`) }] }
        case 'huge': return { content: [{ type: 'text', text: filler(this.hugeSize, `log-${id}`) }] }
        case 'images': return { content: [{ type: 'text', text: `screenshot ${id}` }, ...images(2, id)] }
        case 'error': return { content: [{ type: 'text', text: `ENOENT: no such file ${id}` }], isError: true }
      }
    })
    await d.results(outcomes)
    // The next step parks on its request; a step limit may end the turn instead.
    await settleModel(m, d, this.toString(), ['awaiting-reply', 'idle'])
  }
  toString(): string { return `results(${this.kinds.join(',')})` }
}
