/**
 * A second deliberately broken copy of the example subject (`../subject.ts`): its request builder "saves
 * tokens" by keeping only the two newest tool results of a conversation request and dropping every older
 * `role: 'tool'` message — but it keeps the assistant messages whose `tool_calls` those results answered.
 * That is the classic history-trimming bug of agent frameworks (a message trimmer or condenser that cuts
 * tool outputs without their calls): the request then carries a tool call with no result, which a strict
 * provider refuses with HTTP 400 ("An assistant message with 'tool_calls' must be followed by tool messages
 * responding to each 'tool_call_id'", §1.2.2 → UNKNOWN). Everything else — log, meter, engine, the §1.1
 * capture of what the subject *meant* to send — is the working example, so only the wire is wrong.
 *
 * `pnpm sim run scenarios/world/pairing-rejection-broken-adapter.yaml --subject
 * module:examples/subject-core-adapter/broken-pairing/subject.ts` fails: the mock's strict pairing validation
 * answers the real 400 once a request carries three or more tool results (`rejections.pairing` ≥ 1), and the
 * turn ends in an error. `packages/sim/test/conformance/example-subject.test.ts` pins that; the reference
 * subject passes the same scenario with `rejections: {pairing: 0}`.
 */
import type { Subject } from '@compaction-sim/sim'
import working from '../subject.ts'

/** How many of the newest tool results the buggy trimmer keeps in a request. */
const KEPT_TOOL_RESULTS = 2

/** The broken subject: the example's sessions, with the buggy trimmer between the adapter and the wire. */
const subject: Subject = {
  name: 'core-adapter-example-broken-pairing',
  ...(working.features === undefined ? {} : { features: working.features }),
  runSession: (options) => working.runSession({ ...options, fetch: trimmingFetch(options.fetch ?? fetch) }),
}
export default subject

/** One chat-completions message as far as the trimmer looks at it. */
interface WireMessage {
  role?: unknown
}

/**
 * Wraps `inner` so that every JSON `POST` body with a `messages` array loses all but its newest
 * `KEPT_TOOL_RESULTS` tool messages (the bug). Other requests pass through untouched.
 */
function trimmingFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    if (typeof init?.body !== 'string') return inner(input, init)
    const body = JSON.parse(init.body) as { messages?: WireMessage[] }
    if (!Array.isArray(body.messages)) return inner(input, init)
    const toolIndexes = body.messages.flatMap((m, i) => (m.role === 'tool' ? [i] : []))
    const dropped = new Set(toolIndexes.slice(0, Math.max(0, toolIndexes.length - KEPT_TOOL_RESULTS)))
    if (dropped.size === 0) return inner(input, init)
    const messages = body.messages.filter((_, i) => !dropped.has(i))
    return inner(input, { ...init, body: JSON.stringify({ ...body, messages }) })
  }
}
