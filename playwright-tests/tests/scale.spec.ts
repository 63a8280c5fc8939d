import { test, expect } from '@playwright/test';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import { watchConsole, shot, startServer, tempFile, writeJson, bigCluster, bin, binSupports, waitSynced } from './helpers';

// 5,000 nodes (the Kubernetes envelope's node count) with fewer pods than the envelope, so the test stays
// quick; bench/node-map.spec.ts measures the full 150,000 pods. Asserts behaviour, never a duration.
const NODES = 5000;
const PODS = Number(process.env.WINPLACE_SCALE_PODS ?? 15_000);

test('the node map draws 5,000 nodes and stays usable', async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  const problems = watchConsole(page);
  const file = tempFile('scale.json');
  // Prefer the binary's own generator when it has one; otherwise write the snapshot here.
  if (binSupports(['demo-snapshot'], '--nodes')) {
    const withOutput = binSupports(['demo-snapshot'], '--output');
    const args = ['demo-snapshot', '--nodes', String(NODES), '--pods', String(PODS), ...(withOutput ? ['--output', file] : [])];
    const r = spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`demo-snapshot failed: ${r.stderr}`);
    if (!withOutput) fs.writeFileSync(file, r.stdout);
  } else {
    writeJson(file, bigCluster(NODES, PODS));
  }
  const server = await startServer(undefined, ['--snapshot', file], 240_000);
  try {
    // Measure the page, not the server's first audit of 150,000 pods.
    await waitSynced(server.url, NODES);
    const start = Date.now();
    await page.goto(`${server.url}/nodes`, { timeout: 120_000 });
    await expect(page.locator('.node-group').first()).toBeVisible({ timeout: 120_000 });
    await expect(page.locator('button.node').first()).toBeVisible();
    const wall = Date.now() - start;
    // The app marks the moment the map is in the DOM (ms since navigation start).
    const mark = await page.evaluate(() => performance.getEntriesByName('winplace:node-map-rendered').at(-1)?.startTime ?? -1);
    // Split the figure: the server's answer (audit JSON, compression) and the browser's share (decode, render).
    const api = await page.evaluate(() => {
      const e = performance.getEntriesByType('resource').filter((r) => r.name.endsWith('/api/nodes')).at(-1) as PerformanceResourceTiming | undefined;
      return e ? { start: e.requestStart, end: e.responseEnd, bytes: e.transferSize, raw: e.decodedBodySize } : undefined;
    });
    console.log(`node map render at ${NODES} nodes (${PODS} pods): ${Math.round(mark)} ms from navigation to map in the DOM, ${wall} ms until visible in the test`);
    if (api) {
      console.log(`  of which /api/nodes: ${Math.round(api.end - api.start)} ms (${api.raw} B, ${api.bytes} B on the wire); ` +
        `decode and render in the browser: ${Math.round(mark - api.end)} ms`);
    }
    testInfo.annotations.push({ type: 'render-ms', description: String(Math.round(mark)) });

    const total = await page.locator('.node-group .count').allTextContents();
    const counted = total.map((t) => Number(t.replace(/\D/g, ''))).reduce((a, b) => a + b, 0);
    expect(counted).toBe(NODES);
    // Only what is visible is drawn: the DOM holds a bounded number of tiles, not 5,000.
    const tiles = await page.locator('button.node').count();
    expect(tiles).toBeLessThan(1000);

    // Growing a group and filtering stay fast.
    const linux = page.locator('.node-group[data-os="linux"]');
    let t = Date.now();
    await linux.getByRole('button', { name: /Show \d+ more/ }).click();
    await expect(linux.locator('button.node')).toHaveCount(300);
    const more = Date.now() - t;
    // A Linux node beyond the first page of tiles, named as the server names it.
    const linuxNodes = (await (await fetch(`${server.url}/api/nodes?os=linux`)).json()).nodes as { name: string }[];
    const target = linuxNodes[linuxNodes.length - 1].name;
    t = Date.now();
    await page.getByLabel('Find a node').fill(target);
    await expect(page.locator('button.node')).toHaveCount(1);
    const filter = Date.now() - t;
    console.log(`node map at ${NODES} nodes: "Show more" ${more} ms, name filter ${filter} ms`);
    await page.locator('button.node').click();
    await expect(page.getByRole('complementary', { name: target })).toBeVisible();
    await shot(page, testInfo, 'nodes-5000');
    expect(mark).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  } finally {
    await server.stop();
    fs.rmSync(file, { force: true }); // about 50 MB
  }
});
