#!/usr/bin/env node
// The operator's command line (`npx carebook …`). Runs the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
