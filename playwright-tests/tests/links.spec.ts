// What an operator shares and takes away from the dashboard (docs/dashboard.md): a link to a workload
// or a node that opens it (through reloads, back and forward), the name search, the CSV of the
// filtered table (every page), and the dark scheme of the system's preference.
import { test, expect, Page } from '@playwright/test';
import * as fs from 'fs';
import { watchConsole, shot, Server, smallCluster, bigCluster, snapshotServer } from './helpers';

/** The keys (`Kind/namespace/name`) of the rows whose toggle is open. */
async function openRows(page: Page): Promise<string[]> {
  return page.locator('tbody.workload').evaluateAll((rows) => rows
    .filter((r) => r.querySelector('button.expand')?.getAttribute('aria-expanded') === 'true')
    .map((r) => r.getAttribute('data-workload') ?? ''));
}

test.describe('on a snapshot', () => {
  let server: Server;
  test.beforeAll(async () => { server = await snapshotServer(smallCluster(true)); });
  test.afterAll(async () => { await server?.stop(); });

  test('a workload\'s link opens its row, survives a reload, and back and forward move between rows', async ({ page, browser }) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/workloads?state=all`);
    const toggle = (key: string) => page.locator(`tbody.workload[data-workload="${key}"] button.expand`);
    await toggle('Pod/shop/report').click();
    await expect(page).toHaveURL(`${server.url}/workloads/shop/Pod/report?state=all`);
    await expect(page.locator('tbody.workload[data-workload="Pod/shop/report"] .finding').first()).toBeVisible();
    await toggle('Pod/web/nginx').click();
    await expect(page).toHaveURL(`${server.url}/workloads/web/Pod/nginx?state=all`);
    await expect.poll(() => openRows(page)).toEqual(['Pod/web/nginx']);
    await page.goBack();
    await expect(page).toHaveURL(`${server.url}/workloads/shop/Pod/report?state=all`);
    await expect.poll(() => openRows(page)).toEqual(['Pod/shop/report']);
    await page.goBack();
    await expect(page).toHaveURL(`${server.url}/workloads?state=all`);
    await expect.poll(() => openRows(page)).toEqual([]);
    await page.goForward();
    await expect.poll(() => openRows(page)).toEqual(['Pod/shop/report']);
    // Closing the row is a step of its own: back opens it again.
    await toggle('Pod/shop/report').click();
    await expect(page).toHaveURL(`${server.url}/workloads?state=all`);
    await page.goBack();
    await expect.poll(() => openRows(page)).toEqual(['Pod/shop/report']);

    // The link pasted into another browser opens the same row, filters kept.
    const other = await browser.newPage();
    const otherProblems = watchConsole(other);
    await other.goto(`${server.url}/workloads/shop/Pod/report?state=all`);
    await expect.poll(() => openRows(other)).toEqual(['Pod/shop/report']);
    await expect(other.getByLabel('State')).toHaveValue('all');
    await expect(other.locator('tbody.workload[data-workload="Pod/shop/report"] .finding').first()).toBeVisible();
    // A workload the table's filter leaves out is opened above the table.
    await other.goto(`${server.url}/workloads/legacy/Pod/iis-old?state=fine`);
    const opened = other.locator('.opened-workload[data-workload="Pod/legacy/iis-old"]');
    await expect(opened).toBeVisible();
    await expect(opened.locator('.finding').first()).toBeVisible();
    await expect(other.locator('tbody.workload[data-workload="Pod/legacy/iis-old"]')).toHaveCount(0);
    await opened.getByRole('button', { name: 'Close the workload' }).click();
    await expect(other).toHaveURL(`${server.url}/workloads?state=fine`);
    await expect(opened).toHaveCount(0);
    await other.close();
    expect(problems).toEqual([]);
    expect(otherProblems).toEqual([]);
  });

  test('a node\'s link opens its details; back and forward move between nodes', async ({ page, browser }) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/nodes`);
    await page.locator('button.node[data-node="snap-win22-0"]').click();
    await expect(page).toHaveURL(`${server.url}/nodes/snap-win22-0`);
    await expect(page.getByRole('complementary', { name: 'snap-win22-0' })).toBeVisible();
    await page.locator('button.node[data-node="snap-linux-1"]').click();
    await expect(page).toHaveURL(`${server.url}/nodes/snap-linux-1`);
    await expect(page.getByRole('complementary', { name: 'snap-linux-1' })).toBeVisible();
    await page.goBack();
    await expect(page.getByRole('complementary', { name: 'snap-win22-0' })).toBeVisible();
    await page.getByRole('button', { name: 'Close the node details' }).click();
    await expect(page).toHaveURL(`${server.url}/nodes`);
    await expect(page.locator('.node-detail')).toHaveCount(0);
    await page.goBack();
    await expect(page.getByRole('complementary', { name: 'snap-win22-0' })).toBeVisible();
    await page.goForward();
    await expect(page.locator('.node-detail')).toHaveCount(0);

    const other = await browser.newPage();
    const otherProblems = watchConsole(other);
    await other.goto(`${server.url}/nodes/snap-win19-0`);
    const detail = other.getByRole('complementary', { name: 'snap-win19-0' });
    await expect(detail).toBeVisible();
    await expect(detail.locator('.labels')).toContainText('10.0.17763');
    await expect(other.locator('button.node[data-node="snap-win19-0"]')).toHaveAttribute('aria-expanded', 'true');
    await other.close();
    expect(problems).toEqual([]);
    expect(otherProblems).toEqual([]);
  });

  test('the name search keeps the workloads whose name holds the text, and lives in the URL', async ({ page }) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/workloads?state=all`);
    await expect(page.locator('tbody.workload')).toHaveCount(5);
    await page.getByRole('searchbox', { name: 'Name' }).fill('CHECK');
    await expect(page).toHaveURL(/name=CHECK/);
    await expect(page.getByRole('status').filter({ hasText: /workload/ })).toHaveText('1 workload');
    await expect.poll(() => page.locator('tbody.workload').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-workload'))))
      .toEqual(['Pod/shop/checkout']);
    // The search combines with the other filters, and a link carries it.
    await page.goto(`${server.url}/workloads?state=all&name=o`);
    await expect(page.getByRole('searchbox', { name: 'Name' })).toHaveValue('o');
    const names = await page.locator('tbody.workload').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-workload') ?? ''));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name.split('/')[2]).toContain('o');
    await page.getByRole('searchbox', { name: 'Name' }).fill('no-such-workload');
    await expect(page.getByRole('status').filter({ hasText: /workload/ })).toHaveText('0 workloads');
    expect(problems).toEqual([]);
  });
});

/** The rows of a downloaded CSV, as `Kind/namespace/name`, and its header. */
function csvRows(text: string): { header: string; keys: string[] } {
  const [header, ...lines] = text.trimEnd().split('\n');
  return { header, keys: lines.map((l) => { const [ns, kind, name] = l.split(','); return `${kind}/${ns}/${name}`; }) };
}

async function downloadCsv(page: Page): Promise<string> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe('workloads.csv');
  return fs.readFileSync(await download.path(), 'utf8');
}

test.describe('on a snapshot of 450 workloads', () => {
  let server: Server;
  test.beforeAll(async () => { server = await snapshotServer(bigCluster(20, 450)); });
  test.afterAll(async () => { await server?.stop(); });

  test('the CSV holds the table\'s rows of every page, as filtered', async ({ page }) => {
    const problems = watchConsole(page);
    await page.goto(`${server.url}/workloads?state=all`);
    const pager = page.getByRole('navigation', { name: 'Pages of workloads' });
    await expect(pager).toContainText('Showing 1–200 of 450');
    // The table's rows, page by page.
    const table: string[] = [];
    for (const range of ['1–200', '201–400', '401–450']) {
      await expect(pager).toContainText(`Showing ${range} of 450`);
      const want = range === '401–450' ? 50 : 200;
      await expect(page.locator('tbody.workload')).toHaveCount(want);
      table.push(...await page.locator('tbody.workload').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-workload') ?? '')));
      if (range !== '401–450') await pager.getByRole('button', { name: 'Next page' }).click();
    }
    const all = csvRows(await downloadCsv(page));
    expect(all.header).toBe('namespace,kind,name,os,state,pods,errors,warnings,infos,incidents,rules');
    expect(all.keys).toEqual(table);
    await expect(page.locator('.csv-status')).toHaveText('Downloaded 450 workloads as workloads.csv.');

    // Filtered: the search and a namespace; still every matching row.
    await page.goto(`${server.url}/workloads?state=all&name=app-1`);
    const status = page.getByRole('status').filter({ hasText: /workloads?$/ });
    await expect(status).not.toHaveText('450 workloads');
    const count = Number((await status.textContent())?.split(' ')[0]);
    expect(count).toBeGreaterThan(0);
    const filtered = csvRows(await downloadCsv(page));
    expect(filtered.keys).toHaveLength(count);
    for (const key of filtered.keys) expect(key.split('/')[2]).toContain('app-1');
    const api = await (await fetch(`${server.url}/api/workloads?state=all&name=app-1&limit=1000`)).json();
    expect(filtered.keys).toEqual(api.workloads.map((w: any) => `${w.owner.kind}/${w.owner.namespace}/${w.owner.name}`));
    expect(problems).toEqual([]);
  });
});

/** The relative luminance (WCAG) of a CSS `rgb(…)` color. */
function luminance(css: string): number {
  const [r, g, b] = (css.match(/\d+(\.\d+)?/g) ?? ['0', '0', '0']).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: number, b: number): number {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

test('the dark scheme follows the system\'s preference, with readable text and tags', async ({ page }, testInfo) => {
  const problems = watchConsole(page);
  const colors = async () => page.evaluate(() => {
    const style = (selector: string) => {
      const el = document.querySelector(selector);
      if (!el) throw new Error(`no ${selector}`);
      const s = getComputedStyle(el);
      return { color: s.color, background: s.backgroundColor };
    };
    return { body: style('body'), table: style('table.workloads'), badge: style('.state'), link: style('.workloads .expand') };
  });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto('/workloads');
  await expect(page.locator('tbody.workload').first()).toBeVisible();
  const light = await colors();
  expect(luminance(light.body.background)).toBeGreaterThan(0.8);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(async () => luminance((await colors()).body.background)).toBeLessThan(0.05);
  const dark = await colors();
  for (const [what, c] of Object.entries(dark)) {
    const background = c.background === 'rgba(0, 0, 0, 0)' ? dark.body.background : c.background;
    expect(contrast(luminance(c.color), luminance(background)), `${what}: ${c.color} on ${background}`).toBeGreaterThanOrEqual(4.5);
  }
  expect(luminance(dark.table.background)).toBeLessThan(0.05);
  await shot(page, testInfo, 'workloads-dark');
  expect(problems).toEqual([]);
});
