/** Lossless JSON values (§1.1 rule 2): what a log may hold, and nothing else. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object value. */
export type JsonObject = { [key: string]: JsonValue }
