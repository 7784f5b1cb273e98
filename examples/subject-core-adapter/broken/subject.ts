/**
 * A deliberately broken copy of the example subject (`../subject.ts`), kept to show what `sim conform`
 * reports when an adapter breaks a promise: this backend stores a checkpoint's provenance in the wrong
 * order — it writes `sourceEventSeqs` of every checkpoint replacement reversed (§1.4.4 wants the bracket's
 * own events first, then the replaced nodes in surface order). Everything else is the working example.
 *
 * `pnpm sim conform --subject module:examples/subject-core-adapter/broken/subject.ts` fails with INV-14
 * (checkpoint provenance) wherever a checkpoint is written; `packages/sim/test/conformance/example-subject.test.ts`
 * pins that.
 */
import { readFile, writeFile } from 'node:fs/promises'
import type { Subject } from '@compaction-sim/sim'
import working from '../subject.ts'

/** The broken subject: the example's sessions, then the "storage bug" applied to the log file. */
const subject: Subject = {
  name: 'core-adapter-example-broken',
  ...(working.features === undefined ? {} : { features: working.features }),
  runSession: async (options) => {
    const result = await working.runSession(options)
    await reverseCheckpointProvenance(options.logPath)
    return result
  },
}
export default subject

/** The bug: rewrites the log with every checkpoint's `sourceEventSeqs` reversed (a session's last act, so once per log). */
async function reverseCheckpointProvenance(logPath: string): Promise<void> {
  const lines = (await readFile(logPath, 'utf8')).split('\n')
  const rewritten = lines.map((line) => {
    if (!line.includes('"sourceEventSeqs"') || !line.includes('"user/message"')) return line
    const event = JSON.parse(line) as { sourceEventSeqs?: number[]; surfaceOp?: unknown }
    if (event.surfaceOp === undefined || event.sourceEventSeqs === undefined) return line
    return JSON.stringify({ ...event, sourceEventSeqs: [...event.sourceEventSeqs].reverse() })
  })
  await writeFile(logPath, rewritten.join('\n'))
}
