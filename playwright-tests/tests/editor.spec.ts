import { test, expect, Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { watchConsole, listedFindings } from './helpers';

// What only a browser shows of the playground's editor: findings marked on their lines (gutter bar, span
// under the line's text) where the text and the line numbers are drawn, a click on a finding scrolling
// to its line, the wheel over the numbers scrolling the text; and, in the Admission view, the note when
// the policy is not granted the cluster the findings were checked against, and a SHA-256 kept in its box.

const examples = path.resolve(__dirname, '../../dashboard/examples');

type Box = { top: number; bottom: number; left: number; right: number; width: number };

// Where line `line` is drawn: in the textarea, in the gutter's numbers, and its span.
async function placed(page: Page, line: number) {
  return page.evaluate((line) => {
    const box = (e: Element | null): Box | null => {
      if (!e) return null;
      const r = e.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width };
    };
    const area = document.querySelector('#manifest') as HTMLTextAreaElement;
    const a = area.getBoundingClientRect();
    const pre = document.querySelector('.editor:has(#manifest) .editor-gutter pre') as HTMLElement;
    return {
      // Padding 8 px, lines 20 px (editor.rs PAD_PX, LINE_PX).
      textTop: a.top + 8 + (line - 1) * 20 - area.scrollTop,
      textLeft: a.left + 8 - area.scrollLeft,
      numberTop: pre.getBoundingClientRect().top + 8 + (line - 1) * 20,
      number: (pre.textContent ?? '').split('\n')[line - 1],
      area: box(area)!,
      span: box(document.querySelector(`.editor:has(#manifest) .span[data-line="${line}"]`)),
      bar: box(document.querySelector(`.editor:has(#manifest) .gutter-mark[data-line="${line}"]`)),
      text: area.value.split('\n')[line - 1],
    };
  }, line);
}

test('findings are marked on their lines, a click scrolls to one, the Admission view explains a cluster it is not granted', async ({ page }) => {
  test.setTimeout(60_000);
  const problems = watchConsole(page);
  // Narrow enough that the results column is narrower than a SHA-256 on one line.
  await page.setViewportSize({ width: 1000, height: 800 });
  await page.goto('/playground');
  // 300 lines before the document: its findings are far below the first visible lines.
  const filler = Array.from({ length: 300 }, (_, i) => `# filler ${i}`).join('\n');
  const doc = fs.readFileSync(path.join(examples, 'windows-deployment-unpinned.yaml'), 'utf8');
  await page.locator('#manifest').fill(`${filler}\n${doc}`);
  const finding = page.locator('.finding[data-rule="windows-pod-without-os-selector"]');
  await expect(finding).toHaveCount(1);
  const line = Number(await finding.getAttribute('data-line'));
  expect(line).toBeGreaterThan(300);

  await finding.locator('.goto').click();
  await expect(page.locator(`.editor-marks .mark-selected[data-line="${line}"]`)).toHaveCount(1);
  // Every finding near the line has its severity's bar in the gutter and its span.
  const near = (await listedFindings(page)).filter((f) => f.source === 'input' && Math.abs(Number(f.line) - line) < 8);
  expect(near.length).toBeGreaterThan(0);
  for (const f of near) {
    await expect(page.locator(`.gutter-mark.gutter-${f.severity}[data-line="${f.line}"]`), `${f.rule}`).toHaveCount(1);
    await expect(page.locator(`.span.span-${f.severity}[data-line="${f.line}"]`), `${f.rule}`).toHaveCount(1);
  }
  // The marked line, its number and its span are drawn at one height inside the visible text, and the
  // span covers the line's text from its first non-blank character (one column = one character width).
  const p = await placed(page, line);
  expect(p.number).toBe(String(line));
  expect(Math.abs(p.numberTop - p.textTop)).toBeLessThanOrEqual(1);
  expect(p.textTop).toBeGreaterThanOrEqual(p.area.top);
  expect(p.textTop + 20).toBeLessThanOrEqual(p.area.bottom);
  expect(p.span).not.toBeNull();
  expect(p.bar).not.toBeNull();
  expect(Math.abs(p.span!.top - p.textTop)).toBeLessThanOrEqual(1);
  expect(Math.abs(p.bar!.top - p.textTop)).toBeLessThanOrEqual(1);
  const indent = p.text.length - p.text.trimStart().length;
  const chars = p.text.trim().length;
  const column = p.span!.width / chars;
  expect(column).toBeGreaterThan(4);
  expect(Math.abs(p.span!.left - (p.textLeft + indent * column))).toBeLessThanOrEqual(1);

  // The wheel over the line numbers scrolls the text, and the numbers follow it to the top.
  const gutter = page.locator('.editor:has(#manifest) .editor-gutter');
  await gutter.hover();
  await page.mouse.wheel(0, -100_000);
  await expect.poll(() => page.locator('#manifest').evaluate((t: HTMLTextAreaElement) => t.scrollTop)).toBe(0);
  const top = await placed(page, 1);
  expect(top.number).toBe('1');
  expect(Math.abs(top.numberTop - top.textTop)).toBeLessThanOrEqual(1);

  // A cluster the Findings tab checks against and the policy is not granted (no contextAware: true).
  await page.locator('#examples').selectOption('linux-deployment-untainted-windows-node');
  await page.locator('#tab-admission').click();
  const note = page.locator('.context-note');
  await expect(note).toHaveCount(1);
  await expect(note).toContainText('contextAware: true');
  expect(Number(await note.getAttribute('data-differ'))).toBeGreaterThanOrEqual(1);
  const rules = (await note.textContent() ?? '').match(/\(([^)]*)\)\.$/)?.[1].split(', ') ?? [];
  expect(rules.length).toBeGreaterThan(0);
  await page.locator('#settings').fill('contextAware: true');
  await expect(note).toHaveCount(0);

  // The module's SHA-256 stays inside the Admission view, wrapped.
  const sha = page.locator('.module-identity .sha256');
  await expect(sha).toHaveText(/^[0-9a-f]{64}$/, { timeout: 20_000 });
  const fits = await page.evaluate(() => {
    const code = document.querySelector('.module-identity .sha256')!;
    const box = code.getBoundingClientRect();
    return { right: box.right, height: box.height, line: parseFloat(getComputedStyle(code).lineHeight),
      view: document.querySelector('.admission')!.getBoundingClientRect().right };
  });
  expect(fits.right).toBeLessThanOrEqual(fits.view + 0.5);
  expect(fits.height).toBeGreaterThan(1.5 * fits.line);
  expect(problems).toEqual([]);
});
