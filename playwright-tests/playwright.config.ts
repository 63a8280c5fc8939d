import { defineConfig } from '@playwright/test';
import * as path from 'path';

// The real `winplace` binary serves the demo cluster; Chromium is Debian's, never a downloaded one.
const port = Number(process.env.WINPLACE_TEST_PORT ?? 8099);
const bin = process.env.WINPLACE_BIN ?? path.resolve(__dirname, '../target/debug/winplace');

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  // Two workers, one per core: the browser, the server and the test's own work leave a single worker's core
  // idle much of the time. Files are spread over them; the specs that loop over the corpus
  // (admission, playground) also spread their cases (`describe.configure({ mode: 'parallel' })`).
  fullyParallel: false,
  workers: 2,
  reporter: [['list'], ['html', { open: 'never', outputFolder: 'playwright-report' }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    // A picture where a test fails; the specs attach their own where one documents a view (helpers.shot).
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
  webServer: {
    command: `${bin} serve --listen 127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
