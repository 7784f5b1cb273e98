/**
 * `--shard i/n` (issue #10): a stable assignment of keys (sweep cell ids, scenario paths) to shards by a hash of
 * the key, so every key lands in exactly one shard and adding or removing other keys never moves it.
 */
import { createHash } from 'node:crypto'
import { UsageError } from '../cli/exit-codes.ts'

/** One slice: 1-based `index` of `count`. */
export interface Shard {
  index: number
  count: number
}

/** Upper bound on `n` of `--shard i/n`. */
export const SHARD_COUNT_MAX = 1000

/** Parses `i/n` (1 ≤ i ≤ n ≤ 1000); throws `UsageError` naming the flag. */
export function parseShard(text: string, flag = '--shard'): Shard {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim())
  const index = Number(match?.[1])
  const count = Number(match?.[2])
  if (match === null || index < 1 || count < 1 || index > count || count > SHARD_COUNT_MAX) {
    throw new UsageError(`${flag}: expected i/n with 1 ≤ i ≤ n ≤ ${SHARD_COUNT_MAX}, got ${JSON.stringify(text)}`)
  }
  return { index, count }
}

/** The shard (1-based) `key` belongs to among `count`. */
export function shardOf(key: string, count: number): number {
  const hash = createHash('sha256').update(key).digest().readUInt32BE(0)
  return (hash % count) + 1
}

/** The items of `items` whose key falls into `shard`, in their order. */
export function inShard<T>(items: readonly T[], keyOf: (item: T) => string, shard: Shard): T[] {
  return items.filter((item) => shardOf(keyOf(item), shard.count) === shard.index)
}
