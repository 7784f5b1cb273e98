/**
 * `sim serve`: the mock provider as a real HTTP server for adapters in any language (a thin shell over
 * `serve()`). stdout carries JSON lines only: first `{"type":"ready","baseURL","seed","wire","model",…}`,
 * then one `{"type":"request",…}` per request handled, and `{"type":"closed","requests","capture"}` on
 * shutdown. SIGINT or SIGTERM stops the server, writes the request capture (`--capture`, JSONL, headers
 * redacted) and exits 0. Binds loopback unless `--host` names another address explicitly, which is
 * reported on stderr. Exit 2 for a bad flag, a bad scenario or a port that cannot be bound.
 */
import { writeFile } from 'node:fs/promises'
import type { Argv, CommandModule } from 'yargs'
import type { MockWire } from '../../provider/types.ts'
import { captureJsonl, isLoopbackHost, serve, ServeConfigError, type ServeRequestLine } from '../../serve/serve.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import type { CommandContext } from '../context.ts'

/** Wire dialects `sim serve` speaks. */
export const SERVE_WIRES = ['openai', 'deepseek', 'anthropic'] as const

/** Parsed arguments of `sim serve`. */
export interface ServeArgs {
  port: number
  host: string | undefined
  scenario: string | undefined
  wire: MockWire | undefined
  seed: number | undefined
  capture: string | undefined
}

/** Resolves when the process receives SIGINT or SIGTERM (listeners removed after the first). */
function shutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', on)
      process.off('SIGTERM', on)
      resolve(signal)
    }
    process.on('SIGINT', on)
    process.on('SIGTERM', on)
  })
}

/** The `serve` command module. */
export function serveCommand(ctx: CommandContext): CommandModule<object, ServeArgs> {
  return {
    command: 'serve',
    describe: 'Serve the mock provider over real HTTP (loopback)',
    builder: (yargs: Argv) => yargs
      .option('port', { type: 'number', default: 0, describe: 'Port to listen on; 0 picks a free one' })
      .option('host', { type: 'string', describe: 'Interface to bind (default 127.0.0.1); a non-loopback address must be named here' })
      .option('scenario', { type: 'string', describe: 'Scenario YAML whose replies and request faults are served' })
      .option('wire', { choices: SERVE_WIRES, describe: 'Wire dialect (default: the scenario\'s, else openai)' })
      .option('seed', { type: 'string', describe: 'Seed (uint32) of a generated transcript (default: the scenario\'s)' })
      .coerce('seed', (value: unknown) => (value === undefined ? undefined : parseSeed(value)))
      .option('capture', { type: 'string', describe: 'Write the request capture (JSONL, secrets redacted) here on shutdown' })
      .example('$0 serve --scenario scenarios/smoke/no-pressure.yaml --capture requests.jsonl', 'Serve a scenario; stop with Ctrl-C')
      .example('$0 serve --wire anthropic', 'Speak the Anthropic messages API (POST /v1/messages)') as Argv<ServeArgs>,
    handler: async (args) => {
      const out = ctx.out
      if (!Number.isSafeInteger(args.port) || args.port < 0 || args.port > 65535) {
        throw new UsageError(`--port: expected an integer 0 … 65535, got ${String(args.port)}`)
      }
      const host = args.host ?? '127.0.0.1'
      if (args.host !== undefined && !isLoopbackHost(host)) {
        out.warn(`binding ${host}: the mock provider is reachable from other machines (--host was given explicitly)`)
      }
      const emit = (line: object): void => { out.data(JSON.stringify(line)) }
      let serving
      try {
        serving = await serve({
          host, port: args.port, allowNonLoopback: args.host !== undefined,
          ...(args.scenario === undefined ? {} : { scenario: args.scenario }),
          ...(args.wire === undefined ? {} : { wire: args.wire }),
          ...(args.seed === undefined ? {} : { seed: args.seed }),
          onRequest: (line: ServeRequestLine) => { emit(line) },
        })
      } catch (err) {
        if (err instanceof ServeConfigError) throw new UsageError(err.message)
        const code = (err as { code?: unknown }).code
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
          throw new UsageError(`cannot listen on ${host}:${args.port}: ${(err as Error).message}`)
        }
        throw err
      }
      for (const f of serving.ignoredFaults) out.warn(`${f.id}: not served (${f.reason})`)
      const stopped = shutdownSignal()
      emit({
        type: 'ready', baseURL: serving.baseURL, seed: serving.seed, wire: serving.wire, model: serving.model,
        faults: serving.servedFaults,
      })
      const signal = await stopped
      const captured = await serving.close()
      if (args.capture !== undefined) await writeFile(args.capture, captureJsonl(captured))
      emit({ type: 'closed', signal, requests: captured.length, refused: serving.provider.refused.length, capture: args.capture ?? null })
      ctx.exitCode = ExitCode.Ok
    },
  }
}

function parseSeed(value: unknown): number {
  const text = String(value)
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n > 0xffffffff) {
    throw new UsageError(`--seed: expected an unsigned 32-bit integer (0 … 4294967295), got ${JSON.stringify(text)}`)
  }
  return n
}
