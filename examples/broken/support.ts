/**
 * Shared plumbing of the broken examples: each is the working example subject (`../subject-core-adapter/subject.ts`)
 * with one realistic bug, placed where an adapter author would make it — its HTTP client (`withFetch`), its
 * request capture (`withResult`) or its log storage (`withLog`). Each broken subject's header names the bug
 * and the id `sim conform --level must` fails it with; `packages/sim/test/conformance/broken-examples.test.ts`
 * runs them all.
 */
import { readFile, writeFile } from 'node:fs/promises'
import type { Subject, SubjectSessionOptions, SubjectSessionResult } from '@compaction-sim/sim'
import working from '../subject-core-adapter/subject.ts'

/** The fetch the working example uses: the options' own, else the global one (intercepted in-process). */
type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** A broken copy of the working example named `name`, whose session is `run` around the working one. */
export function brokenSubject(
  name: string, run: (options: SubjectSessionOptions, session: (options: SubjectSessionOptions) => Promise<SubjectSessionResult>) => Promise<SubjectSessionResult>,
): Subject {
  return {
    name,
    ...(working.features === undefined ? {} : { features: working.features }),
    runSession: (options) => run(options, (o) => working.runSession(o)),
  }
}

/** The working session with its HTTP client replaced by `wrap(fetch)`. */
export function withFetch(name: string, wrap: (fetch: Fetch) => Fetch): Subject {
  return brokenSubject(name, (options, session) => {
    const base: Fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
    return session({ ...options, fetch: wrap(base) })
  })
}

/** The working session whose result (turn outcomes, request capture) is passed through `edit`. */
export function withResult(name: string, edit: (result: SubjectSessionResult) => SubjectSessionResult): Subject {
  return brokenSubject(name, async (options, session) => edit(await session(options)))
}

/** One log event as stored (JSON). */
export type StoredEvent = { seq: number; type: string; data: Record<string, unknown>; [key: string]: unknown }

/** The working session whose log file is rewritten, event by event, by `edit` once the session ends. */
export function withLog(name: string, edit: (event: StoredEvent, events: readonly StoredEvent[]) => StoredEvent): Subject {
  return brokenSubject(name, async (options, session) => {
    const result = await session(options)
    const lines = (await readFile(options.logPath, 'utf8')).split('\n').filter((l) => l !== '')
    const events = lines.map((l) => JSON.parse(l) as StoredEvent)
    await writeFile(options.logPath, events.map((e) => `${JSON.stringify(edit(e, events))}\n`).join(''))
    return result
  })
}
