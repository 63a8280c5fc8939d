import base from './playwright.config';
import { defineConfig } from '@playwright/test';

// Benchmarks in Chromium (not part of the test command): their figures go into docs/benchmarks.md.
// Run: `npx playwright test -c bench.config.ts` (after `cargo xtask build --release`, with WINPLACE_BIN
// pointing at the release binary for server-side figures).
export default defineConfig({
  ...base,
  testDir: './bench',
  timeout: 600_000,
  reporter: [['list']],
});
