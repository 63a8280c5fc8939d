// Shared by the dashboard specs: console watching, a second `winplace serve --snapshot` server, snapshots.
import { test, expect, Page, TestInfo } from '@playwright/test';
import { spawn, spawnSync, ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as net from 'net';
import * as path from 'path';

export const bin = process.env.WINPLACE_BIN ?? path.resolve(__dirname, '../../target/debug/winplace');

/** A port nobody listens on now (several test suites share this machine: fixed ports collide). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Every console error or warning, and every uncaught exception, of `page`. */
export function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  return problems;
}

/** The corpus folders: the repository's, then those of WINPLACE_EXTRA_CORPUS (':'-separated), whose cases are named `extra:<name>`. */
export const corpora: [string, string][] = [
  ['', path.resolve(__dirname, '../../corpus')],
  ...(process.env.WINPLACE_EXTRA_CORPUS ?? '').split(':').filter((d) => d && fs.existsSync(d)).map((d): [string, string] => ['extra:', d]),
];

/** [name, folder] of every corpus case (a folder with an expect.yaml), sorted within each corpus. */
export const corpusCases: [string, string][] = corpora.flatMap(([prefix, dir]) =>
  fs.readdirSync(dir).filter((n) => fs.existsSync(path.join(dir, n, 'expect.yaml'))).sort()
    .map((n): [string, string] => [`${prefix}${n}`, path.join(dir, n)]));

/** A finding as the page lists it (its data attributes). */
export type Listed = { rule: string; object: string; path: string; severity: string; line: string; source: string; fixable: string; message: string };

/** Every finding the page lists now, in order. */
export async function listedFindings(page: Page): Promise<Listed[]> {
  return page.locator('.finding').evaluateAll((els) => els.map((e) => {
    const d = (e as HTMLElement).dataset;
    return { rule: d.rule ?? '', object: d.object ?? '', path: d.path ?? '', severity: d.severity ?? '',
      line: d.line ?? '', source: d.source ?? '', fixable: d.fixable ?? '',
      message: e.querySelector('.message')?.textContent ?? '' };
  }));
}

/**
 * One playground page per Playwright worker, for the specs that loop over the corpus. Booting the dashboard
 * and mounting the Admission view cost seconds a page on two cores; a case itself costs about one. Each test
 * gets the page `blank` (no manifests, settings or cluster context, the Findings tab: what a fresh page
 * shows) and the console problems since then. A failed test ends its worker, so the cases after it start on
 * a new page.
 */
export const corpusTest = test.extend<{ playground: Page; problems: string[] }, { sharedPlayground: { page: Page; problems: string[] } }>({
  sharedPlayground: [async ({ browser }, use, workerInfo) => {
    const context = await browser.newContext({ baseURL: workerInfo.project.use.baseURL });
    const page = await context.newPage();
    const problems = watchConsole(page);
    await page.goto('/playground');
    await use({ page, problems });
    await context.close();
  }, { scope: 'worker' }],
  playground: async ({ sharedPlayground }, use) => {
    await blank(sharedPlayground.page);
    sharedPlayground.problems.length = 0;
    await use(sharedPlayground.page);
  },
  problems: async ({ sharedPlayground }, use) => use(sharedPlayground.problems),
});

/** The playground as a fresh page shows it: nothing entered, no repair proposed, the Findings tab. */
export async function blank(page: Page) {
  const close = page.locator('.close-repair');
  if (await close.count() > 0) await close.click();
  await page.locator('#tab-findings').click();
  await page.locator('input[name=context][value=none]').check();
  await page.locator('#settings').fill('');
  await page.locator('#manifest').fill('');
  await expect(page.locator('.finding')).toHaveCount(0);
  await expect(page.locator('.parse-error')).toHaveCount(0);
  await expect(page.locator('.repair')).toHaveCount(0);
}

/** Types a case into the playground: its cluster (pasted context), settings and manifests. */
export async function enterCase(page: Page, c: { input: string; cluster?: string; settings?: string }) {
  if (c.cluster !== undefined) {
    await page.locator('input[name=context][value=pasted]').check();
    await page.locator('#context').fill(c.cluster);
  }
  if (c.settings !== undefined) await page.locator('#settings').fill(c.settings);
  await page.locator('#manifest').fill(c.input);
}

/** Attaches a full-page screenshot to the test report. */
export async function shot(page: Page, testInfo: TestInfo, name: string) {
  await testInfo.attach(name, { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
}

/** Whether `winplace <command> --help` mentions `text` (to use flags and commands only when main has them). */
export function binSupports(command: string[], text: string): boolean {
  const r = spawnSync(bin, [...command, '--help'], { encoding: 'utf8' });
  return r.status === 0 && `${r.stdout}${r.stderr}`.includes(text);
}

export interface Server { url: string; port: number; stop(): Promise<void>; process: ChildProcess }

/** Starts `winplace serve --listen 127.0.0.1:<port> ...extra` (a free port when none is given) and waits for /healthz. */
export async function startServer(port: number | undefined, extra: string[], timeoutMs = 120_000): Promise<Server> {
  port = port ?? await freePort();
  const child = spawn(bin, ['serve', '--listen', `127.0.0.1:${port}`, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => { stderr += d; });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`winplace serve exited with ${child.exitCode}: ${stderr}`);
    // Only our own child's answer counts: a server that failed to bind has exited by then.
    try { if ((await fetch(`${url}/healthz`)).ok && child.exitCode === null) break; } catch { /* not up yet */ }
    if (Date.now() > deadline) { child.kill(); throw new Error(`winplace serve did not answer within ${timeoutMs} ms: ${stderr}`); }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url, port, process: child,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** Waits until the server has read the whole cluster (the audit of a big snapshot takes a while). */
export async function waitSynced(url: string, nodes: number, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const answer = await (await fetch(`${url}/api/summary`)).json();
      if (answer.meta?.freshness?.synced && answer.summary?.nodes === nodes) return;
    } catch { /* not ready */ }
    if (Date.now() > deadline) throw new Error(`${url} did not sync ${nodes} nodes within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A temporary file path for a snapshot. */
export function tempFile(name: string): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'winplace-pw-')), name);
}

const builds: Record<string, string> = { '2019': '10.0.17763', '2022': '10.0.20348', '2025': '10.0.26100' };

/** A Node as `kubectl get nodes -o json` shows it. */
export function node(name: string, osName: 'windows' | 'linux', year?: string, tainted = true) {
  const build = year ? builds[year] : undefined;
  const labels: Record<string, string> = {
    'kubernetes.io/os': osName, 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name,
    ...(build ? { 'node.kubernetes.io/windows-build': build } : {}),
  };
  return {
    apiVersion: 'v1', kind: 'Node', metadata: { name, labels },
    spec: { taints: osName === 'windows' && tainted ? [{ key: 'os', value: 'windows', effect: 'NoSchedule' }] : [] },
    status: {
      // A containerd line still supported (2.3 LTS, after the 2.3.0-2.3.3 pause-image bug), so that a healthy
      // node draws no windows-node-containerd-unsupported warning (docs/reference/lifecycle.md, containerd).
      nodeInfo: {
        architecture: 'amd64', bootID: '', containerRuntimeVersion: 'containerd://2.3.4', kubeProxyVersion: '', kubeletVersion: 'v1.31.2',
        kernelVersion: build ? `${build}.2340` : '6.1.0-26-amd64', machineID: '', systemUUID: '',
        operatingSystem: osName, osImage: build ? `Windows Server ${year} Datacenter` : 'Debian GNU/Linux 12 (bookworm)',
      },
    },
  };
}

/** A running Pod bound to `nodeName`. */
export function pod(namespace: string, name: string, nodeName: string, image: string,
  opts: { nodeSelector?: Record<string, string>; tolerateWindows?: boolean } = {}) {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name, uid: `${namespace}-${name}` },
    spec: {
      nodeName, containers: [{ name: 'main', image }],
      ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
      ...(opts.tolerateWindows ? { tolerations: [{ key: 'os', operator: 'Equal', value: 'windows', effect: 'NoSchedule' }] } : {}),
    },
    status: { phase: 'Running' },
  };
}

const WIN2022 = 'mcr.microsoft.com/windows/servercore:ltsc2022';
const WIN2019 = 'mcr.microsoft.com/windows/servercore:ltsc2019';
export const pinnedWindows = { nodeSelector: { 'kubernetes.io/os': 'windows', 'node.kubernetes.io/windows-build': '10.0.20348' }, tolerateWindows: true };
export const pinnedLinux = { nodeSelector: { 'kubernetes.io/os': 'linux' } };

/**
 * The small test cluster: a fine Windows pod, a Windows pod without OS selector (fixable), a Linux pod
 * without OS selector (at risk), and — with `misplaced` — a Windows 2019 pod running on a Linux node.
 */
export function smallCluster(misplaced: boolean) {
  const items: object[] = [
    node('snap-win19-0', 'windows', '2019'), node('snap-win22-0', 'windows', '2022'), node('snap-win22-1', 'windows', '2022'),
    node('snap-linux-0', 'linux'), node('snap-linux-1', 'linux'),
    pod('shop', 'checkout', 'snap-win22-0', WIN2022, pinnedWindows),
    pod('shop', 'report', 'snap-win22-1', WIN2022, { tolerateWindows: true }),
    pod('web', 'nginx', 'snap-linux-0', 'nginx:1.27'),
    pod('kube-system', 'coredns', 'snap-linux-1', 'registry.k8s.io/coredns/coredns:v1.11.1', pinnedLinux),
  ];
  if (misplaced) items.push(pod('legacy', 'iis-old', 'snap-linux-1', WIN2019));
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

/** A cluster of `nodes` nodes (a quarter Windows on three builds) and `pods` pods spread over them. */
export function bigCluster(nodes: number, pods: number) {
  const items: object[] = [];
  const names: string[] = [];
  const years = ['2019', '2022', '2025'];
  for (let i = 0; i < nodes; i++) {
    const win = i % 4 === 0;
    const name = win ? `win${years[i % 3]}-${String(i).padStart(5, '0')}` : `linux-${String(i).padStart(5, '0')}`;
    names.push(name);
    items.push(win ? node(name, 'windows', years[i % 3]) : node(name, 'linux'));
  }
  for (let i = 0; i < pods; i++) {
    const n = i % nodes;
    const name = names[n];
    const app = `app-${i % 500}`;
    if (name.startsWith('win')) {
      const year = name.slice(3, 7);
      const image = `mcr.microsoft.com/windows/servercore:ltsc${year}`;
      items.push(pod(`team-${i % 40}`, `${app}-${i}`, name, image, { nodeSelector: { 'kubernetes.io/os': 'windows', 'node.kubernetes.io/windows-build': builds[year] }, tolerateWindows: true }));
    } else {
      items.push(pod(`team-${i % 40}`, `${app}-${i}`, name, i % 7 === 0 ? 'nginx:1.27' : `registry.example.com/${app}:1.0`, i % 7 === 0 ? {} : pinnedLinux));
    }
  }
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

/** Writes `value` as JSON to `file` in place (the same inode, so a watcher of the file sees the change). */
export function writeJson(file: string, value: unknown) {
  fs.writeFileSync(file, JSON.stringify(value));
}

/// A server on `cluster` (a kubectl-style List), read from a snapshot file: what the "on a snapshot" suites share.
export async function snapshotServer(cluster: unknown): Promise<Server> {
  const file = tempFile('cluster.json');
  writeJson(file, cluster);
  return startServer(undefined, ['--snapshot', file]);
}
