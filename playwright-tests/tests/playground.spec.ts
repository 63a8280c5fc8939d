import { test, expect, Page } from '@playwright/test';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { pasteThousandDocuments, describePaste } from './load';
import { enterCase as enter, watchConsole, corpora, corpusCases, corpusTest, listedFindings as listed, Listed } from './helpers';

// The playground evaluates in the browser with the rules crate: every corpus case pasted in must list
// exactly the findings of its expect.yaml, fixes must leave no fixable error, links must reproduce the
// state, and nothing may need the server once the page is loaded.

const port = Number(process.env.WINPLACE_TEST_PORT ?? 8099);
const bin = process.env.WINPLACE_BIN ?? path.resolve(__dirname, '../../target/debug/winplace');

type Expected = { rule: string; object: string; path?: string; severity?: string; message?: string };

async function parseErrorLines(page: Page): Promise<number[]> {
  return page.locator('.parse-error').evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.line)));
}

// The corpus comparison (corpus/README.md): a multiset of {rule, object, path?, severity?, message?}; info
// findings count only when listed.
function differences(expected: Expected[], got: Listed[]): string[] {
  const rest = got;
  const used = rest.map(() => false);
  const diffs: string[] = [];
  // Most specific expectations first, so that a loose one does not take a finding a precise one needs.
  const weight = (e: Expected) => Number(!!e.path) + Number(!!e.severity) + Number(!!e.message);
  const order = [...expected].sort((a, b) => weight(b) - weight(a));
  for (const e of order) {
    const i = rest.findIndex((g, j) => !used[j] && g.rule === e.rule && g.object === e.object
      && (e.path === undefined || g.path === e.path) && (e.severity === undefined || g.severity === e.severity)
      && (e.message === undefined || g.message.includes(e.message)));
    if (i < 0) diffs.push(`missing: ${JSON.stringify(e)}`); else used[i] = true;
  }
  rest.forEach((g, j) => { if (!used[j] && g.severity !== 'info') diffs.push(`unexpected: ${JSON.stringify(g)}`); });
  return diffs;
}

function readCase(dir: string) {
  const read = (f: string) => (fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f), 'utf8') : undefined);
  const expect = parse(read('expect.yaml') ?? '{}') ?? {};
  return {
    input: read('input.yaml') ?? '',
    cluster: read('cluster.yaml'),
    settings: read('settings.yaml'),
    findings: ((expect.findings ?? []) as Expected[]).map((f) => ({ ...f, severity: f.severity ?? undefined, path: f.path ?? undefined, message: f.message ?? undefined })),
    fixed: read('fixed.yaml'),
    parseErrors: ((expect.parse_errors ?? []) as { line: number }[]).map((e) => e.line),
  };
}

const cases = corpusCases;

// Both Playwright workers take cases; the corpus cases share a page per worker (`corpusTest`), each from blank.
test.describe.configure({ mode: 'parallel' });

test('the corpus is there', () => {
  expect(cases.length, `no corpus cases in ${corpora[0][1]}`).toBeGreaterThanOrEqual(29);
});

for (const [name, dir] of cases) {
  corpusTest(`corpus ${name}: the playground lists its findings, and fix all leaves no fixable error`, async ({ playground: page, problems }) => {
    const c = readCase(dir);
    await enter(page, c);
    await expect.poll(async () => differences(c.findings, await listed(page)), { timeout: 10_000 }).toEqual([]);
    await expect.poll(async () => (await parseErrorLines(page)).sort((a, b) => a - b)).toEqual([...c.parseErrors].sort((a, b) => a - b));
    // Lines: every finding of the manifests names a line of them.
    const lines = c.input.split('\n').length;
    for (const f of (await listed(page)).filter((g) => g.source === 'input')) {
      expect(Number(f.line), `${f.rule} on ${f.object}`).toBeGreaterThanOrEqual(1);
      expect(Number(f.line), `${f.rule} on ${f.object}`).toBeLessThanOrEqual(lines);
    }
    const fixAll = page.locator('.fix-all');
    if (c.parseErrors.length === 0 && await fixAll.count() > 0) {
      await fixAll.click();
      await expect(page.locator('.repair')).toHaveAttribute('data-remaining-fixable', '0');
      await page.locator('.use-repair').click();
      await expect.poll(async () => (await listed(page)).filter((f) => f.source === 'input' && f.fixable === 'true'),
        { timeout: 10_000 }).toEqual([]);
      // fixed.yaml: the repaired manifests, byte for byte, as `winplace check --fix` writes them.
      if (c.fixed !== undefined) expect(await page.locator('#manifest').inputValue()).toBe(c.fixed);
    } else {
      expect(c.fixed, 'a case with fixed.yaml has fixes to apply').toBeUndefined();
    }
    expect(problems).toEqual([]);
  });
}

test('a parse error is shown and marked at its line, and clicking it selects the line', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  await page.locator('#examples').selectOption('yaml-parse-error');
  const error = page.locator('.parse-error[data-line="12"]');
  await expect(error).toHaveCount(1);
  await expect(error).toContainText('line 12');
  await expect(page.locator('.editor-marks .mark-error[data-line="12"]')).toHaveCount(1);
  await error.locator('.goto').click();
  const selected = await page.locator('#manifest').evaluate((t: HTMLTextAreaElement) =>
    t.value.slice(t.selectionStart, t.selectionEnd));
  const input = fs.readFileSync(path.resolve(__dirname, '../../dashboard/examples/yaml-parse-error.yaml'), 'utf8');
  expect(selected).toBe(input.split('\n')[11]);
  expect(problems).toEqual([]);
});

test('clicking a finding selects and marks its line', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  // A long preamble pushes the finding far below the visible lines: the editor must scroll to it.
  const filler = Array.from({ length: 200 }, (_, i) => `# filler ${i}`).join('\n');
  const doc = fs.readFileSync(path.resolve(__dirname, '../../dashboard/examples/windows-deployment-unpinned.yaml'), 'utf8');
  await page.locator('#manifest').fill(`${filler}\n${doc}`);
  const finding = page.locator('.finding[data-rule="windows-pod-without-os-selector"]');
  await expect(finding).toHaveCount(1);
  const line = Number(await finding.getAttribute('data-line'));
  expect(line).toBeGreaterThan(200);
  await finding.locator('.goto').click();
  await expect(finding).toHaveClass(/selected/);
  await expect(page.locator(`.editor-marks .mark-selected[data-line="${line}"]`)).toHaveCount(1);
  const state = await page.locator('#manifest').evaluate((t: HTMLTextAreaElement) => ({
    before: t.value.slice(0, t.selectionStart).split('\n').length,
    scrollTop: t.scrollTop, clientHeight: t.clientHeight,
  }));
  expect(state.before).toBe(line);
  // The line is inside the visible part of the textarea (20 px lines, 8 px padding).
  const top = 8 + (line - 1) * 20;
  expect(top).toBeGreaterThanOrEqual(state.scrollTop);
  expect(top + 20).toBeLessThanOrEqual(state.scrollTop + state.clientHeight);
  expect(problems).toEqual([]);
});

test('one fix, all fixes, the diff, copy and download', async ({ page, context }) => {
  const problems = watchConsole(page);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.goto('/playground');
  await page.locator('#examples').selectOption('windows-deployment-unpinned');
  const os = page.locator('.finding[data-rule="windows-pod-without-os-selector"]');
  await expect(os).toHaveCount(1);
  // One fix: only its rule is applied; the toleration is still missing afterwards.
  await os.locator('.fix').click();
  const panel = page.locator('.repair');
  await expect(panel.locator('h3')).toContainText('windows-pod-without-os-selector');
  await expect(panel.locator('.applied li')).toHaveCount(1);
  await expect(panel.locator('.diff-line[data-kind=added]').first()).toBeVisible();
  await expect(panel.locator('.diff-line[data-kind=added]')).toContainText(['kubernetes.io/os']);
  await page.locator('.use-repair').click();
  await expect(os).toHaveCount(0);
  await expect(page.locator('.finding[data-rule="windows-pod-without-toleration"]')).toHaveCount(1);
  // All fixes.
  await page.locator('.fix-all').click();
  await expect(panel).toHaveAttribute('data-remaining-fixable', '0');
  const repaired = await page.locator('#repaired').inputValue();
  expect(repaired).toContain('tolerations');
  await page.locator('.copy-repair').click();
  await expect(panel.locator('.status')).toHaveText('Copied.');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(repaired);
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.download-repair').click()]);
  expect(download.suggestedFilename()).toBe('repaired.yaml');
  expect(fs.readFileSync(await download.path(), 'utf8')).toBe(repaired);
  expect(problems).toEqual([]);
});

test('settings are validated and applied', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/playground');
  await page.locator('#examples').selectOption('windows-deployment-unpinned');
  await expect(page.locator('.finding[data-rule="windows-pod-without-toleration"]')).toHaveCount(1);
  await page.locator('#settings').fill('supportedBuilds: [ltsc2022]\n');
  await expect(page.locator('.settings-error')).toContainText('supportedBuilds[0]');
  await page.locator('#settings').fill('disabledRules: [windows-pod-without-toleration]\n');
  await expect(page.locator('.settings-error')).toHaveCount(0);
  await expect(page.locator('.finding[data-rule="windows-pod-without-toleration"]')).toHaveCount(0);
  await expect(page.locator('.finding[data-rule="windows-pod-without-os-selector"]')).toHaveCount(1);
  expect(problems).toEqual([]);
});

test('a shared link reopens the same state', async ({ page, browser }) => {
  const problems = watchConsole(page);
  const c = readCase(path.join(corpora[0][1], 'linux-deployment-untainted-windows-node'));
  await page.goto('/playground');
  await enter(page, { ...c, settings: 'requireBuildSelector: true\n' });
  await expect.poll(async () => differences(c.findings, await listed(page))).toEqual([]);
  // The fragment follows the state (debounced).
  await expect.poll(() => new URL(page.url()).hash).toMatch(/^#s=[A-Za-z0-9_-]+$/);
  await page.waitForTimeout(800);
  const url = page.url();
  const before = await listed(page);
  const other = await browser.newPage();
  const otherProblems = watchConsole(other);
  await other.goto(url);
  await expect(other.locator('#manifest')).toHaveValue(c.input);
  await expect(other.locator('#context')).toHaveValue(c.cluster ?? '');
  await expect(other.locator('#settings')).toHaveValue('requireBuildSelector: true\n');
  await expect(other.locator('input[name=context][value=pasted]')).toBeChecked();
  await expect.poll(() => listed(other)).toEqual(before);
  await other.close();
  expect(problems).toEqual([]);
  expect(otherProblems).toEqual([]);
});

test("the server's cluster can be the context", async ({ page, request }) => {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto('/playground');
  await page.locator('#examples').selectOption('windows-deployment-unpinned');
  await page.locator('input[name=context][value=server]').check();
  const answer = await request.get('/api/context');
  if (answer.ok()) {
    const kind = (await answer.json()).meta.source.kind;
    await expect(page.locator('.server-status')).toHaveAttribute('data-source', kind);
    await expect(page.locator('.server-status .badge')).toHaveText(kind);
  } else {
    // Before the server has /api/context: the page says so and still evaluates without context.
    await expect(page.locator('.server-status.error')).toContainText('evaluated without cluster context');
  }
  await expect(page.locator('.finding[data-rule="windows-pod-without-os-selector"]')).toHaveCount(1);
  expect(problems).toEqual([]);
});

test('the playground keeps working after the server is stopped', async ({ browser }) => {
  const own = port + 1;
  const server = spawn(bin, ['serve', '--listen', `127.0.0.1:${own}`], { stdio: 'ignore' });
  try {
    await expect.poll(async () => {
      try { return (await fetch(`http://127.0.0.1:${own}/healthz`)).status; } catch { return 0; }
    }, { timeout: 20_000 }).toBe(200);
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`http://127.0.0.1:${own}/playground`);
    await expect(page.locator('#manifest')).toBeVisible();
    server.kill('SIGTERM');
    await expect.poll(async () => {
      try { return (await fetch(`http://127.0.0.1:${own}/healthz`)).status; } catch { return 0; }
    }).toBe(0);
    const c = readCase(path.join(corpora[0][1], 'windows-deployment-unpinned'));
    await page.locator('#manifest').fill(c.input);
    await expect.poll(async () => differences(c.findings, await listed(page))).toEqual([]);
    await page.locator('.fix-all').click();
    await expect(page.locator('.repair')).toHaveAttribute('data-remaining-fixable', '0');
    expect(problems).toEqual([]);
    await page.close();
  } finally {
    server.kill('SIGKILL');
  }
});

test('1000 documents (about 2 MB) are evaluated, and typing stays possible', async ({ page }) => {
  test.setTimeout(120_000);
  const f = await pasteThousandDocuments(page);
  console.log(describePaste(f));
  // Every round was evaluated (the poll inside is the hang guard); the time is bench/playground.spec.ts's.
  expect(f.times.every((ms) => ms > 0)).toBe(true);
  expect(f.problems).toEqual([]);
});
