/**
 * The §10.5 reconstruction theorem as a checker over a log and the loop's captured conversation requests
 * (INV-43): messages = deriveMessages(log[0:L]); config and tools = foldRequestHeader(log[0:L]); and
 * append-extension of the previous request when no `request/header` lies between them.
 */
import type { ConversationCapture } from '../../src/agent/agent.ts'
import { EventLog } from '../../src/log/event-log.ts'
import type { LogEvent } from '../../src/log/events.ts'
import { jsonEqual } from '../../src/log/json.ts'
import type { Message } from '../../src/log/llm.ts'
import { foldRequestHeader } from '../../src/request/header.ts'

/** Violations of §10.5 clauses 1–3, one line each (empty when the theorem holds). */
export function reconstructionViolations(events: readonly LogEvent[], captures: readonly ConversationCapture[]): string[] {
  const out: string[] = []
  let previous: ConversationCapture | undefined
  for (const [i, r] of captures.entries()) {
    const L = r.logRevisionAtDispatch
    const prefix = EventLog.fromEvents(events.slice(0, L), { dialect: 'seed' })
    if (!jsonEqual(r.messages, prefix.deriveMessages())) out.push(`request ${i}: messages differ from deriveMessages(log[0:${L}])`)
    const header = foldRequestHeader(events.slice(0, L), 'seed')
    if (header === undefined) {
      out.push(`request ${i}: no request/header before ${L}`)
    } else {
      const c = header.config
      const same = r.provider === c.provider && r.model === c.model && r.reasoningEffort === c.reasoningEffort &&
        r.temperature === c.temperature && r.maxTokens === c.maxTokens && jsonEqual((r.stop ?? null), (c.stop ?? null))
      if (!same) out.push(`request ${i}: call configuration differs from the folded header`)
      if (!jsonEqual((r.tools ?? []), (header.tools ?? []))) out.push(`request ${i}: tools differ from the folded header`)
    }
    if (previous !== undefined && previous.logRevisionAtDispatch < L) {
      const between = events.slice(previous.logRevisionAtDispatch, L)
      if (!between.some((e) => e.type === 'request/header') && !isPrefix(previous.messages, r.messages)) {
        out.push(`request ${i}: not an append-extension of request ${i - 1} although no header lies between them`)
      }
    }
    previous = r
  }
  return out
}

function isPrefix(a: readonly Message[], b: readonly Message[]): boolean {
  return a.length <= b.length && a.every((m, k) => jsonEqual(m, b[k]))
}
