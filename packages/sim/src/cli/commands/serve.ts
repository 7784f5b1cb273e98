/**
 * `sim serve`: the mock provider as a real HTTP server for adapters in any language (a thin shell over
 * `serve()`). stdout carries JSON lines only: first `{"type":"ready","baseURL","seed","wire","model",…}`,
 * then one `{"type":"request",…}` per request handled, and `{"type":"closed","requests","capture","world"}` on
 * shutdown. SIGINT or SIGTERM stops the server, writes the request capture (`--capture`, JSONL, headers
 * redacted, fsynced) and the world record beside it (`<capture stem>.world.json`, issue #21), prints `closed` and ends the process with exit 0 — the one place `main` exits the
 * process, because only a signal sent to it gets here; repeated signals during the shutdown are ignored. Binds loopback unless `--host` names another address explicitly, which is
 * reported on stderr. Exit 2 for a bad flag, a bad scenario or a port that cannot be bound.
 */
import { open } from 'node:fs/promises'
import type { Argv, CommandModule } from 'yargs'
import type { MockWire } from '../../provider/types.ts'
import { captureJsonl, isLoopbackHost, serve, ServeConfigError, type ServeRequestLine } from '../../serve/serve.ts'
import { ExitCode, UsageError } from '../exit-codes.ts'
import { worldRecordText } from '../../world/record-file.ts'
import { parseIntegerFlag, parseSeedFlag } from '../flags.ts'
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

/**
 * SIGINT/SIGTERM while `sim serve` runs. Listening starts before the server does and never stops once a
 * signal arrived, so a second signal (a process group kill plus a forwarded one, or a supervisor repeating
 * SIGTERM under load) cannot take Node's default action — exit 143 — in the middle of the shutdown: the
 * capture is still finished and `closed` printed. Signal listeners do not keep the event loop alive.
 */
class ShutdownSignals {
  /** The first signal received. */
  readonly first: Promise<NodeJS.Signals>
  /** Signals received after the first (ignored: the shutdown is already under way). */
  repeated = 0
  private received: NodeJS.Signals | null = null
  private resolve: (signal: NodeJS.Signals) => void = () => undefined
  private readonly listener = (signal: NodeJS.Signals): void => {
    if (this.received !== null) {
      this.repeated++
      return
    }
    this.received = signal
    this.resolve(signal)
  }

  constructor() {
    this.first = new Promise((resolve) => { this.resolve = resolve })
    process.on('SIGINT', this.listener)
    process.on('SIGTERM', this.listener)
  }

  /** Stops listening, unless a signal arrived: then the listeners stay, so later signals are ignored until exit. */
  release(): void {
    if (this.received !== null) return
    process.off('SIGINT', this.listener)
    process.off('SIGTERM', this.listener)
  }
}

/** Where `sim serve --capture <path>` writes the world record: the capture path with `.jsonl` (if any) replaced by `.world.json`. */
export function worldRecordPath(capture: string): string {
  return `${capture.replace(/\.jsonl$/i, '')}.world.json`
}

/** Writes `text` to `path` and fsyncs it before resolving, so the capture survives the process exit that follows. */
async function writeDurably(path: string, text: string): Promise<void> {
  const handle = await open(path, 'w')
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** The `serve` command module. */
export function serveCommand(ctx: CommandContext): CommandModule<object, ServeArgs> {
  return {
    command: 'serve',
    describe: 'Serve the mock provider over real HTTP (loopback)',
    builder: (yargs: Argv) => yargs
      .option('port', { type: 'string', default: '0', describe: 'Port to listen on; 0 picks a free one' })
      .coerce('port', (value: unknown) => parseIntegerFlag('--port', value, 0, 65535))
      .option('host', { type: 'string', describe: 'Interface to bind (default 127.0.0.1); a non-loopback address must be named here' })
      .option('scenario', { type: 'string', describe: 'Scenario YAML whose replies and request faults are served' })
      .option('wire', { choices: SERVE_WIRES, describe: 'Wire dialect (default: the scenario\'s, else openai)' })
      .option('seed', { type: 'string', describe: 'Seed (uint32) of a generated transcript (default: the scenario\'s)' })
      .coerce('seed', (value: unknown) => (value === undefined ? undefined : parseSeedFlag('--seed', value)))
      .option('capture', {
        type: 'string',
        describe: 'Write the request capture (JSONL, secrets redacted) here on shutdown, and the world record (what the world answered, for sim check --world) beside it as <capture stem>.world.json',
      })
      .example('$0 serve --scenario scenarios/smoke/no-pressure.yaml --capture requests.jsonl', 'Serve a scenario; stop with Ctrl-C')
      .example('$0 serve --wire anthropic', 'Speak the Anthropic messages API (POST /v1/messages)') as Argv<ServeArgs>,
    handler: async (args) => {
      const out = ctx.out
      const host = args.host ?? '127.0.0.1'
      if (args.host !== undefined && !isLoopbackHost(host)) {
        out.warn(`binding ${host}: the mock provider is reachable from other machines (--host was given explicitly)`)
      }
      const emit = (line: object): void => { out.data(JSON.stringify(line)) }
      const signals = new ShutdownSignals()
      try {
        await serveUntilSignal(args, host, signals, emit, out)
      } finally {
        signals.release()
      }
      ctx.exitCode = ExitCode.Ok
      // The process got SIGINT/SIGTERM and everything is written: end it now. A natural exit first tears down
      // Node's signal handlers, and one more SIGTERM in that window would still kill it with 143.
      process.exit(ExitCode.Ok)
    },
  }
}

/** Starts the server, prints `ready`, waits for the first signal, then closes, writes the capture and prints `closed`. */
async function serveUntilSignal(
  args: ServeArgs, host: string, signals: ShutdownSignals, emit: (line: object) => void, out: CommandContext['out'],
): Promise<void> {
  let serving
  let closed = false
  try {
    serving = await serve({
      host, port: args.port, allowNonLoopback: args.host !== undefined,
      ...(args.scenario === undefined ? {} : { scenario: args.scenario }),
      ...(args.wire === undefined ? {} : { wire: args.wire }),
      ...(args.seed === undefined ? {} : { seed: args.seed }),
      // A request finishing after the capture was taken is not in it: its line would follow `closed`, so it is dropped.
      onRequest: (line: ServeRequestLine) => { if (!closed) emit(line) },
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
  emit({
    type: 'ready', baseURL: serving.baseURL, seed: serving.seed, wire: serving.wire, model: serving.model,
    faults: serving.servedFaults,
  })
  const signal = await signals.first
  const captured = await serving.close()
  closed = true
  const world = args.capture === undefined ? null : worldRecordPath(args.capture)
  if (args.capture !== undefined) await writeDurably(args.capture, captureJsonl(captured))
  // Issue #21: the world record beside the capture, for `sim check --world` on logs other languages write.
  if (world !== null) await writeDurably(world, worldRecordText(serving.provider.worldRecord()))
  emit({ type: 'closed', signal, requests: captured.length, refused: serving.provider.refused.length, capture: args.capture ?? null, world })
}
