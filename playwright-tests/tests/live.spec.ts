import { test, expect } from '@playwright/test';
import * as fs from 'fs';
import { watchConsole, shot, startServer, tempFile, writeJson, smallCluster, binSupports } from './helpers';

// A snapshot cannot change by itself: `winplace serve --snapshot FILE --watch-snapshot` reloads FILE when it
// changes and announces the change on /api/events, which is what the live cluster does on a watch event.
const canWatch = binSupports(['serve'], '--watch-snapshot');

test('a change arrives over the live stream and updates the views without a reload', async ({ page }, testInfo) => {
  test.skip(!canWatch, 'winplace serve has no --watch-snapshot flag yet');
  const problems = watchConsole(page);
  const file = tempFile('cluster.json');
  writeJson(file, smallCluster(false));
  const server = await startServer(undefined, ['--snapshot', file, '--watch-snapshot']);
  try {
    await page.goto(`${server.url}/nodes`);
    await expect(page.locator('header .live')).toHaveAttribute('data-connection', 'open');
    const linux1 = page.locator('button.node[data-node="snap-linux-1"]');
    await expect(linux1).toBeVisible();
    await expect(linux1.locator('.mark-misplaced')).toHaveCount(0);
    const revision = Number(await page.locator('header .freshness').getAttribute('data-revision'));
    await page.evaluate(() => { (window as any).__noReload = true; });

    writeJson(file, smallCluster(true));
    await expect(linux1.locator('.mark-misplaced')).toHaveCount(1, { timeout: 15_000 });
    await expect.poll(async () => Number(await page.locator('header .freshness').getAttribute('data-revision')))
      .toBeGreaterThan(revision);
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    await shot(page, testInfo, 'live-node-map-updated');

    // Other views read the new data too, still without reloading.
    await page.getByRole('link', { name: 'Workloads' }).click();
    await expect(page.locator('tbody.workload[data-workload="Pod/legacy/iis-old"]')).toHaveCount(1);
    writeJson(file, smallCluster(false));
    await expect(page.locator('tbody.workload[data-workload="Pod/legacy/iis-old"]')).toHaveCount(0, { timeout: 15_000 });
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    expect(problems).toEqual([]);
  } finally {
    await server.stop();
  }
});

test('a lost connection shows a banner, and the page recovers when the server is back', async ({ page }, testInfo) => {
  const file = tempFile('cluster.json');
  writeJson(file, smallCluster(false));
  let server = await startServer(undefined, ['--snapshot', file]);
  const port = server.port;
  try {
    await page.goto(`${server.url}/`);
    await expect(page.locator('header .live')).toHaveAttribute('data-connection', 'open');
    await expect(page.getByRole('alert')).toHaveCount(0);
    await server.stop();
    const banner = page.getByRole('alert').filter({ hasText: 'Lost the connection' });
    await expect(banner).toBeVisible({ timeout: 15_000 });
    await shot(page, testInfo, 'connection-lost');
    server = await startServer(port, ['--snapshot', file]);
    // EventSource retries on its own (every few seconds); the banner goes once it is back.
    await expect(banner).toHaveCount(0, { timeout: 30_000 });
    await expect(page.locator('header .live')).toHaveAttribute('data-connection', 'open');
  } finally {
    await server.stop();
  }
});

// Issue 17.2: `kubectl get … -o json > snap.json` truncates the file first. The truncated file is not
// published: the last good cluster stays on screen and the header says why, without a reload.
test('a snapshot cut short is not published, and the header says so until a good one arrives', async ({ page }, testInfo) => {
  test.skip(!canWatch, 'winplace serve has no --watch-snapshot flag yet');
  const problems = watchConsole(page);
  const file = tempFile('cluster.json');
  writeJson(file, smallCluster(false));
  const server = await startServer(undefined, ['--snapshot', file, '--watch-snapshot']);
  try {
    await page.goto(`${server.url}/nodes`);
    await expect(page.locator('header .live')).toHaveAttribute('data-connection', 'open');
    const linux1 = page.locator('button.node[data-node="snap-linux-1"]');
    await expect(linux1).toBeVisible();
    const rejected = page.locator('header .rejected');
    await expect(rejected).toHaveCount(0);
    await page.evaluate(() => { (window as any).__noReload = true; });

    fs.writeFileSync(file, '');
    await expect(rejected).toBeVisible({ timeout: 15_000 });
    await expect(rejected).toContainText('empty');
    await expect(linux1).toBeVisible();
    await shot(page, testInfo, 'snapshot-cut-short');

    writeJson(file, smallCluster(true));
    await expect(rejected).toHaveCount(0, { timeout: 15_000 });
    await expect(linux1.locator('.mark-misplaced')).toHaveCount(1);
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    expect(problems).toEqual([]);
  } finally {
    await server.stop();
  }
});
