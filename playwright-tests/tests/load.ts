// The heavy flows shared by the tests (which assert behaviour) and the benchmarks in ../bench (which
// report the figures): 1,000 documents pasted into the playground, the node map and the workloads page at
// thousands of nodes.
import { Page, TestInfo, expect } from '@playwright/test';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import { watchConsole, shot, startServer, tempFile, writeJson, bigCluster, bin, binSupports, waitSynced } from './helpers';

// A Windows Deployment of about 2 KB; `i` varies names so that documents differ.
export function bigDocument(i: number): string {
  const env = Array.from({ length: 22 }, (_, j) => `        - {name: SETTING_${j}, value: "value-${i}-${j}-abcdefghijklmnopqrstuvwxyz"}`).join('\n');
  return [
    'apiVersion: apps/v1', 'kind: Deployment', 'metadata:', `  name: app-${i}`, '  namespace: load',
    `  labels: {app: app-${i}, tier: web}`, 'spec:', '  replicas: 2', '  selector:', `    matchLabels: {app: app-${i}}`,
    '  template:', '    metadata:', `      labels: {app: app-${i}}`, '    spec:',
    ...(i % 2 ? ['      nodeSelector: {kubernetes.io/os: windows}'] : []),
    '      containers:', '      - name: web', '        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022',
    '        ports: [{containerPort: 80}]', '        env:', env, '',
  ].join('\n');
}

/** What pasting 1,000 documents measured: evaluation times (first, then re-evaluations), keystrokes. */
export interface PasteFigures { mb: string; times: number[]; counts: string | null; keys: number[]; problems: string[] }

/** Pastes 1,000 documents (about 2 MB) three times and types three keys; every round must be evaluated. */
export async function pasteThousandDocuments(page: Page): Promise<PasteFigures> {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  const text = Array.from({ length: 1000 }, (_, i) => bigDocument(i)).join('---\n');
  const mb = (Buffer.byteLength(text) / 1024 / 1024).toFixed(2);
  await page.goto('/playground');
  // A person pastes a second or more after the page appears; by then the page has warmed the engine.
  await page.waitForTimeout(1000);
  const root = page.locator('section.playground');
  const seq = async () => Number(await root.getAttribute('data-eval-seq'));
  const times: number[] = [];
  for (let round = 0; round < 3; round++) {
    const before = await seq();
    // Set as a paste would (fill() types the 2 MB into its call log on failure).
    await page.locator('#manifest').evaluate((t: HTMLTextAreaElement, v: string) => {
      t.value = v;
      t.dispatchEvent(new Event('input', { bubbles: true }));
    }, round === 0 ? text : `${text}\n# round ${round}\n`);
    await expect.poll(seq, { timeout: 60_000 }).toBeGreaterThan(before);
    times.push(Number(await root.getAttribute('data-eval-ms')));
  }
  await expect(page.locator('.finding').first()).toBeVisible();
  const counts = await page.locator('.findings-head .counts').textContent();
  // Typing stays responsive: a keystroke is handled without waiting for an evaluation.
  await page.locator('#manifest').focus();
  const keys: number[] = [];
  for (const key of ['x', 'y', 'z']) {
    const t0 = Date.now();
    await page.keyboard.type(key);
    keys.push(Date.now() - t0);
    await page.waitForTimeout(1500); // let the debounced evaluation run between keystrokes
  }
  return { mb, times, counts, keys, problems };
}

/** The line a benchmark prints for [`pasteThousandDocuments`]. */
export function describePaste(f: PasteFigures): string {
  return `playground eval of 1000 docs (${f.mb} MB): ${f.times.map((t) => t.toFixed(1)).join(' ms, ')} ms ` +
    `(first, then re-evaluations); ${f.counts}; keystroke ${f.keys.join('/')} ms`;
}

/** What the node map measured at scale. */
export interface NodeMapFigures { mark: number; wall: number; more: number; filter: number;
  api?: { start: number; end: number; bytes: number; raw: number } }

/**
 * Serves a synthetic cluster of `nodes` nodes and `pods` pods and drives the node map: every node counted,
 * only a bounded number of tiles drawn, "Show more", the name filter and a node's panel work.
 */
/** Writes a synthetic cluster of `nodes` nodes and `pods` pods to a temporary file (about 50 MB at 5,000 / 150,000). */
function scaleSnapshot(nodes: number, pods: number): string {
  const file = tempFile('scale.json');
  // Prefer the binary's own generator when it has one; otherwise write the snapshot here.
  if (binSupports(['demo-snapshot'], '--nodes')) {
    const withOutput = binSupports(['demo-snapshot'], '--output');
    const args = ['demo-snapshot', '--nodes', String(nodes), '--pods', String(pods), ...(withOutput ? ['--output', file] : [])];
    const r = spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`demo-snapshot failed: ${r.stderr}`);
    if (!withOutput) fs.writeFileSync(file, r.stdout);
  } else {
    writeJson(file, bigCluster(nodes, pods));
  }
  return file;
}

/** The timing of the first request of `page` whose path (and query) starts with `prefix` (ms since navigation). */
async function apiTiming(page: Page, prefix: string) {
  return page.evaluate((prefix) => {
    const e = performance.getEntriesByType('resource')
      .find((r) => { const u = new URL(r.name); return (u.pathname + u.search).startsWith(prefix); }) as PerformanceResourceTiming | undefined;
    return e ? { start: e.requestStart, end: e.responseEnd, bytes: e.transferSize, raw: e.decodedBodySize } : undefined;
  }, prefix);
}

/** How the time to drawn splits: until the page asks the API (the app's download, compile and start), the
 * API's answer, and decoding and drawing it. */
function split(mark: number, api: { start: number; end: number; bytes: number; raw: number }, what: string): string {
  return `\n  of which until ${what} is asked (HTML, the dashboard's wasm fetched, compiled and started): ${Math.round(api.start)} ms; ` +
    `${what}: ${Math.round(api.end - api.start)} ms (${api.raw} B, ${api.bytes} B on the wire); ` +
    `decode and render in the browser: ${Math.round(mark - api.end)} ms`;
}

export async function nodeMapAtScale(page: Page, testInfo: TestInfo, NODES: number, PODS: number): Promise<NodeMapFigures> {
  const problems = watchConsole(page);
  const file = scaleSnapshot(NODES, PODS);
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
    const api = await apiTiming(page, '/api/nodes');
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
    await page.locator('button.node').click();
    await expect(page.getByRole('complementary', { name: target })).toBeVisible();
    await shot(page, testInfo, `nodes-${NODES}`);
    expect(mark).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    return { mark, wall, more, filter, api };
  } finally {
    await server.stop();
    fs.rmSync(file, { force: true }); // about 50 MB
  }
}

/** The lines a benchmark prints for [`nodeMapAtScale`]. */
export function describeNodeMap(f: NodeMapFigures, nodes: number, pods: number): string {
  let out = `node map render at ${nodes} nodes (${pods} pods): ${Math.round(f.mark)} ms from navigation to map in the DOM, ` +
    `${f.wall} ms until visible in the test; "Show more" ${f.more} ms, name filter ${f.filter} ms`;
  if (f.api) out += split(f.mark, f.api, '/api/nodes');
  return out;
}

/** What the workloads page measured at scale. */
export interface WorkloadsFigures { mark: number; wall: number; next: number; filter: number; total: number;
  opened: { workload: string; ms: number; findings: number };
  api?: { start: number; end: number; bytes: number; raw: number } }

/**
 * Serves a synthetic cluster of `nodes` nodes and `pods` pods and drives the workloads page: one page of
 * rows drawn whatever the count, the next page and a filter answered by the server.
 */
export async function workloadsAtScale(page: Page, testInfo: TestInfo, NODES: number, PODS: number): Promise<WorkloadsFigures> {
  const problems = watchConsole(page);
  const file = scaleSnapshot(NODES, PODS);
  const server = await startServer(undefined, ['--snapshot', file], 240_000);
  try {
    await waitSynced(server.url, NODES);
    const start = Date.now();
    await page.goto(`${server.url}/workloads?state=all`, { timeout: 120_000 });
    await expect(page.locator('tbody.workload').first()).toBeVisible({ timeout: 120_000 });
    const wall = Date.now() - start;
    const mark = await page.evaluate(() => performance.getEntriesByName('winplace:workloads-rendered').at(-1)?.startTime ?? -1);
    const api = await apiTiming(page, '/api/workloads?');
    const total = Number((await page.getByRole('status').textContent())?.replace(/\D/g, ''));
    // One page is drawn, not every workload.
    expect(await page.locator('tbody.workload').count()).toBeLessThanOrEqual(200);
    const pager = page.getByRole('navigation', { name: 'Pages of workloads' });
    let t = Date.now();
    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect(pager).toContainText('Showing 201–');
    const next = Date.now() - t;
    t = Date.now();
    await page.getByLabel('State').selectOption('misplaced');
    await expect(page).toHaveURL(/state=misplaced/);
    await expect(page.locator('tbody.workload[data-state="fine"]')).toHaveCount(0);
    const filter = Date.now() - t;
    // The first misplaced row opened: its findings (a page of them) asked of the server and drawn.
    const row = page.locator('tbody.workload').first();
    const workload = (await row.getAttribute('data-workload')) ?? '';
    t = Date.now();
    await row.locator('button.expand').click();
    await expect(row.locator('tr.details ul.findings')).toBeAttached({ timeout: 60_000 });
    const opened = { workload, ms: Date.now() - t, findings: await row.locator('tr.details .finding').count() };
    await shot(page, testInfo, `workloads-${NODES}`);
    expect(mark).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    return { mark, wall, next, filter, total, opened, api };
  } finally {
    await server.stop();
    fs.rmSync(file, { force: true });
  }
}

/** The lines a benchmark prints for [`workloadsAtScale`]. */
export function describeWorkloads(f: WorkloadsFigures, nodes: number, pods: number): string {
  let out = `workloads page at ${nodes} nodes (${pods} pods, ${f.total} workloads): ${Math.round(f.mark)} ms from navigation to table in the DOM, ` +
    `${f.wall} ms until visible in the test; next page ${f.next} ms, a filter ${f.filter} ms; ` +
    `${f.opened.workload} opened in ${f.opened.ms} ms (${f.opened.findings} findings drawn)`;
  if (f.api) out += split(f.mark, f.api, '/api/workloads');
  return out;
}
