/** Loading a session log file into a validated `EventLog` (the read side of `sim inspect`, restore, replay). */
import { assertNever, LogError } from '../errors.ts'
import { EventLog, type EventLogOptions } from './event-log.ts'
import type { SessionHeaderRecord } from './events.ts'
import { streamLogEvents, type TornTail } from './reader.ts'

/** A loaded log: the folded `EventLog`, the optional header record, and a torn tail that was dropped. */
export interface LoadedSessionLog {
  log: EventLog
  header?: SessionHeaderRecord
  tornTail?: TornTail
}

/**
 * Reads `path` (`.jsonl`, `.jsonl.zstd`, DSH packed rows) and folds every event into an `EventLog`,
 * validating each as an append (§1). A torn final line is dropped and returned, never merged (§1.1).
 * Throws `LogError` naming `file:line` for any other bad line or refused event.
 */
export async function loadSessionLog(path: string, options: EventLogOptions): Promise<LoadedSessionLog> {
  const log = new EventLog(options)
  const out: LoadedSessionLog = { log }
  for await (const item of streamLogEvents(path, { dialect: options.dialect, knownTypes: options.knownTypes })) {
    switch (item.kind) {
      case 'header':
        out.header = item.header
        break
      case 'torn':
        out.tornTail = item.tail
        break
      case 'event':
        try {
          log.accept(item.event, { envelopeValidated: true })
        } catch (err) {
          if (err instanceof LogError) throw err.at({ file: path, line: item.line })
          throw err
        }
        break
      default:
        assertNever(item, 'log stream item')
    }
  }
  return out
}
