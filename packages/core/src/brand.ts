/**
 * Branded identifier types. A brand costs nothing at run time; it stops a call id from being
 * passed where a compaction id is expected. Each type shares its name with its constructor.
 */

declare const brand: unique symbol

/** A nominal subtype of `T` tagged with `Name`. */
export type Branded<T, Name extends string> = T & { readonly [brand]: Name }

/** Zero-based event position in a session log (§0.3 "seq"); a non-negative safe integer. */
export type Seq = Branded<number, 'Seq'>
/** Brands a number as a `Seq` without checking it (callers at trust boundaries validate first). */
export function Seq(value: number): Seq {
  return value as Seq
}

/** Id of a tool call, shared by the `tool-call` block, `tool/call` and `tool/result` (§1.2). */
export type CallId = Branded<string, 'CallId'>
/** Brands a string as a `CallId`. */
export function CallId(value: string): CallId {
  return value as CallId
}

/** Id shared by every event of one compaction bracket and by its checkpoint source (§1.4.14). */
export type CompactionId = Branded<string, 'CompactionId'>
/** Brands a string as a `CompactionId`. */
export function CompactionId(value: string): CompactionId {
  return value as CompactionId
}

/** Stable message identity, preserved by copies and replacements (§1.2). */
export type MessageId = Branded<string, 'MessageId'>
/** Brands a string as a `MessageId`. */
export function MessageId(value: string): MessageId {
  return value as MessageId
}
