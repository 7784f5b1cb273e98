/** Command: the model calls tools — one call or several parallel calls in one reply (§1.4.8, §4.1). */
import type { AsyncCommand } from 'fast-check'
import type { ContentBlock } from '@compaction-sim/core'
import type { SessionDriver } from '../driver.ts'
import type { SessionModel } from '../model.ts'
import { settleModel, usageAt } from './support.ts'

/** Answers with `calls` tool calls; the agent parks on the first tool execution. Nothing is compacted meanwhile. */
export class AssistantToolBatchCommand implements AsyncCommand<SessionModel, SessionDriver> {
  constructor(readonly calls: number, readonly usageRatio: number | null = null, readonly label = 'tools') {}
  check(m: Readonly<SessionModel>): boolean { return m.phase === 'awaiting-reply' }
  async run(m: SessionModel, d: SessionDriver): Promise<void> {
    const generation = d.log.state.surface.replaceGeneration
    const blocks: ContentBlock[] = Array.from({ length: this.calls }, (_, k) => {
      const id = `c-${m.nextCall + k + 1}`
      return { type: 'tool-call', id, name: 'read', arguments: JSON.stringify({ path: `src/f${m.nextCall + k + 1}.ts` }) }
    })
    m.nextCall += this.calls
    await d.answer(this.usageRatio === null ? { kind: 'reply', blocks } : { kind: 'reply', blocks, usage: usageAt(d, this.usageRatio) })
    await settleModel(m, d, this.toString(), ['awaiting-results'])
    if (m.pendingCalls !== this.calls) throw new Error(`after ${this.toString()}: ${m.pendingCalls} calls pending`)
    if (d.log.state.surface.replaceGeneration !== generation) throw new Error(`after ${this.toString()}: replaceGeneration changed`)
  }
  toString(): string { return `${this.label}(${this.calls}${this.usageRatio === null ? '' : `, usage ${this.usageRatio}`})` }
}
