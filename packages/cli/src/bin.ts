#!/usr/bin/env node
import { main } from './main.js';

// The exit code is set, not forced: streams flush, then the process ends once nothing is left open.
process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });
