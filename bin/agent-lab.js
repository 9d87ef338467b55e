#!/usr/bin/env node
// The published entry point: a thin shim so the CLI itself stays typed TypeScript in src/cli.
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
