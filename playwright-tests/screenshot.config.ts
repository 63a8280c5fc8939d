import base from './playwright.config';
import { defineConfig } from '@playwright/test';

// The README's picture of the dashboard (not part of the test command): writes docs/dashboard.png.
// Run: `npx playwright test -c screenshot.config.ts` after `cargo xtask build` (WINPLACE_BIN names another binary).
export default defineConfig({
  ...base,
  testDir: './screenshots',
  workers: 1,
  reporter: [['list']],
  use: { ...base.use, screenshot: 'off', viewport: { width: 1280, height: 860 } },
});
