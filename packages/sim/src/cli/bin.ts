#!/usr/bin/env node
import { runGuarded } from './settle-guard.ts'
await runGuarded(async () => (await import('./main.ts')).main(process.argv.slice(2)))
